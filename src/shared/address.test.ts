import { describe, expect, it } from "vitest";
import { byCodePoint } from "./address.js";

describe("byCodePoint", () => {
  it("orders by code point, whatever the locale: capitals before small letters, astral characters last", () => {
    expect(["b", "B", "a", "Ä", "A", "😀", "\uffff"].sort(byCodePoint)).toEqual(["A", "B", "a", "b", "Ä", "\uffff", "😀"]);
    expect(byCodePoint("ab", "a")).toBeGreaterThan(0);
    expect(byCodePoint("x", "x")).toBe(0);
  });
});
