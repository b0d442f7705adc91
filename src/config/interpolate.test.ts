import fc from "fast-check";
import { propertyRuns } from "../testing/property-runs.js";
import { describe, expect, it } from "vitest";
import { SIGN_IN_VARIABLES } from "../api/auth.js";
import { interpolateString, literalText, variablesIn } from "./interpolate.js";
import { unsafeName } from "./rules.js";

describe("${VAR} takes only the environment's and vars' own properties", () => {
  it.each(["constructor", "toString", "__proto__", "hasOwnProperty"])("${%s} is undefined", (name) => {
    const out = interpolateString(`\${${name}}`, { vars: {}, env: { HOME: "/root" }, process: true });
    expect(out.problems).toEqual([expect.stringMatching(new RegExp(`^undefined variable \\$\\{${name}\\}`))]);
  });

  it("in revsync.yaml a defined variable still resolves, from vars first, then the process environment", () => {
    expect(interpolateString("${A}-${B}", { vars: { A: "x" }, env: { A: "no", B: "y" }, process: true })).toEqual({
      value: "x-y",
      problems: [],
      read: ["A", "B"],
    });
  });

  it("a var whose own value could not be filled is no new problem where it is read: the value is unknown, said once where revsync.yaml sets it", () => {
    const src = { vars: { floor: "${HW_FLOOR}", other: 1 }, env: {}, unresolved: new Set(["floor"]) };
    expect(interpolateString("${floor}", src)).toEqual({ value: "${floor}", problems: [], unresolved: true });
    expect(interpolateString("${floor}-${other}", src)).toEqual({ value: "${floor}-1", problems: [], read: ["other"], unresolved: true });
  });

  it("in a policy file only vars resolve: the process environment is never read", () => {
    const out = interpolateString("${A}-${HOME}", { vars: { A: "x" }, env: { HOME: "/root" } });
    expect(out.value).toBe("x-${HOME}");
    expect(out.problems).toEqual([
      expect.stringMatching(
        /^\$\{HOME\} is not one of the environment's vars: .* declare it under the environment's vars in revsync.yaml \(HOME: \$\{HOME\}\)$/,
      ),
    ]);
  });
});

describe("revsync's own sign-in variables are read by no file", () => {
  it.each([...SIGN_IN_VARIABLES])("${%s} is a problem, whole or inside a text, declared or not, in revsync.yaml or a policy file", (name) => {
    for (const process of [true, false]) {
      const src = { vars: { [name]: "declared" }, env: { [name]: "the-secret" }, process };
      for (const text of [`\${${name}}`, `MJ-\${${name}}`]) {
        const out = interpolateString(text, src);
        expect(out.value).not.toContain("the-secret");
        expect(out.value).not.toContain("declared");
        expect(out.problems).toEqual([
          `\${${name}} is one of revsync's own sign-in variables, which no file may read: credentials go only to the service's sign-in, never into a value revsync shows or sends`,
        ]);
      }
    }
  });
});

describe("literalText: text from outside reads back as itself, never as a variable", () => {
  const text = fc.string({ unit: fc.constantFrom("$", "{", "}", "$$", "${", "$${", "A", "_", "HOME", "REVSYNC_PASSWORD", " ", "\n", "é", "\u202e") });
  it("for any text, whatever the vars and the environment hold", () => {
    fc.assert(
      fc.property(text, fc.boolean(), (s, process) => {
        const out = interpolateString(literalText(s), { vars: { A: 1, HOME: "h" }, env: { HOME: "/root", REVSYNC_PASSWORD: "pw" }, process });
        expect(out).toEqual({ value: s, problems: [] });
        expect(variablesIn(literalText(s))).toEqual([]);
      }),
      propertyRuns({ quick: 500, deep: 5000 }),
    );
  });
  it.each([
    ["MJ-${REVSYNC_PASSWORD}", "MJ-$${REVSYNC_PASSWORD}"],
    ["$${", "$$${"],
    ["${HOME}", "$${HOME}"],
    ["no dollar", "no dollar"],
  ])("%j is written %j", (s, written) => expect(literalText(s)).toBe(written));
});

describe("names that cannot travel in a URL path as themselves", () => {
  it.each([".", "..", "a\u0000b", "tab\there", "   "])("%j is refused", (name) => {
    expect(unsafeName(name)).toBeDefined();
  });
  it.each(["FY26-H1", "a/b", "50% off", "..a", "Hardware SSP"])("%j passes (encoded, it travels as itself)", (name) => {
    expect(unsafeName(name)).toBeUndefined();
  });
});
