import { describe, expect, it } from "vitest";
import { canonicalConditions, fieldDiff } from "./normalize.js";

describe("fieldDiff", () => {
  it.each([
    ["same", { a: 1, b: "x" }, { a: 1, b: "x" }, []],
    ["a changed scalar", { a: 1 }, { a: 2 }, [{ path: "a", kind: "changed", before: 1, after: 2 }]],
    ["a field only in git", {}, { a: true }, [{ path: "a", kind: "added", before: undefined, after: true }]],
    ["a field only in the service", { a: true }, {}, [{ path: "a", kind: "removed", before: true, after: undefined }]],
    ["a list is reported whole", { l: [1, 2] }, { l: [1, 3] }, [{ path: "l", kind: "changed", before: [1, 2], after: [1, 3] }]],
    [
      "a nested object is reported at its top field",
      { o: { x: 1, y: 1 } },
      { o: { x: 2, y: 2 } },
      [{ path: "o", kind: "changed", before: { x: 1, y: 1 }, after: { x: 2, y: 2 } }],
    ],
    ["null against a value", { a: null }, { a: 0 }, [{ path: "a", kind: "changed", before: null, after: 0 }]],
  ])("%s", (_name, before, after, expected) => {
    expect(fieldDiff(before as Record<string, unknown>, after as Record<string, unknown>)).toEqual(expected);
  });
});

describe("canonicalConditions", () => {
  it("orders conditions and spells operators one way (symbols as words)", () => {
    const a = canonicalConditions([
      { field_name: "b", operator: ">=", value: "1" },
      { field_name: "a", operator: "equality", value: "x" },
    ]);
    const b = canonicalConditions([
      { field_name: "a", operator: "equality", value: "x" },
      { field_name: "b", operator: "greater or equal", value: "1" },
    ]);
    expect(a).toEqual(b);
    expect(a[1]?.operator).toBe("greater or equal");
  });

  it("compares an in / not in list item by item, spaces trimmed, in any order; other values as they are", () => {
    const list = (value: string, operator = "in") => canonicalConditions([{ field_name: "legal_entity", operator, value }]);
    expect(list("US01, DE01")).toEqual(list("DE01,US01"));
    expect(list(" US01 ,DE01", "not in")).toEqual(list("DE01,US01", "not in"));
    expect(list("US01,DE01")).not.toEqual(list("US01,DE02"));
    expect(list("US01, DE01", "equality")).not.toEqual(list("US01,DE01", "equality"));
  });
});
