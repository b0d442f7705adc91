import { describe, expect, it } from "vitest";
import { byCodePoint, slug, valuesFileFor } from "./address.js";

describe("byCodePoint", () => {
  it("orders by code point, whatever the locale: capitals before small letters, astral characters last", () => {
    expect(["b", "B", "a", "Ä", "A", "😀", "\uffff"].sort(byCodePoint)).toEqual(["A", "B", "a", "b", "Ä", "\uffff", "😀"]);
    expect(byCodePoint("ab", "a")).toBeGreaterThan(0);
    expect(byCodePoint("x", "x")).toBe(0);
  });
});

describe("slug: a name as a file name", () => {
  it("keeps short names as they were; a long one keeps its beginning and a hash of the whole, so two that begin alike differ", () => {
    expect(slug("Hardware SSP")).toBe("hardware-ssp");
    expect(slug("Q".repeat(64))).toBe("q".repeat(64));
    const a = slug(`${"Long Policy ".repeat(25)}A`);
    const b = slug(`${"Long Policy ".repeat(25)}B`);
    expect(a).toMatch(/^long-policy-[a-z-]+-[0-9a-f]{8}$/);
    expect(a.length).toBeLessThanOrEqual(64);
    expect(a).not.toBe(b);
    expect(Buffer.byteLength(valuesFileFor("P".repeat(300), "Q".repeat(250)))).toBeLessThan(255);
  });
});
