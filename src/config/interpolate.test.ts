import { describe, expect, it } from "vitest";
import { interpolateString } from "./interpolate.js";
import { unsafeName } from "./rules.js";

describe("${VAR} takes only the environment's and vars' own properties", () => {
  it.each(["constructor", "toString", "__proto__", "hasOwnProperty"])("${%s} is undefined", (name) => {
    const out = interpolateString(`\${${name}}`, { vars: {}, env: { HOME: "/root" } });
    expect(out.problems).toEqual([expect.stringMatching(new RegExp(`^undefined variable \\$\\{${name}\\}`))]);
  });

  it("a defined variable still resolves, from vars first", () => {
    expect(interpolateString("${A}-${B}", { vars: { A: "x" }, env: { A: "no", B: "y" } })).toEqual({ value: "x-y", problems: [] });
  });
});

describe("names that cannot travel in a URL path as themselves", () => {
  it.each([".", "..", "a\u0000b", "tab\there", "   "])("%j is refused", (name) => {
    expect(unsafeName(name)).toBeDefined();
  });
  it.each(["FY26-H1", "a/b", "50% off", "..a", "Hardware SSP"])("%j passes (encoded, it travels as itself)", (name) => {
    expect(unsafeName(name)).toBeUndefined();
  });
});
