import { describe, expect, it } from "vitest";
import { conditionHolds, conditionKind, evaluateCondition, ExprError, namesOf, parseCondition, parseExpr, type StaticKind, type Value } from "./expr.js";

const facts: Record<string, Value> = {
  mid_point_move_pct: 31.25,
  kind: "ssp",
  action: "approve",
  "after.carves_allocation": false,
  "before.carves_allocation": true,
  baseline: null,
};
const holds = (src: string): boolean => conditionHolds(parseCondition(src), (n) => facts[n]);

describe("a guardrail's condition, in the language of SSP formulas", () => {
  it("compares formulas and joins comparisons with and, or and not", () => {
    expect(holds("mid_point_move_pct > 20")).toBe(true);
    expect(holds('mid_point_move_pct * 2 >= 62.5 and kind == "ssp"')).toBe(true);
    expect(holds('not (action == "approve") or mid_point_move_pct < 10')).toBe(false);
    expect(holds("before.carves_allocation == true and after.carves_allocation == false")).toBe(true);
    expect(holds('kind != "tenant-configuration"')).toBe(true);
    expect(holds('"say \\"hi\\"" == "say \\"hi\\""')).toBe(true);
  });

  it("null is nothing known: it equals null alone, orders with nothing and spreads through arithmetic", () => {
    expect(holds("baseline == null")).toBe(true);
    expect(holds("baseline > 20")).toBe(false);
    expect(holds("baseline < 20")).toBe(false);
    expect(holds("baseline * 2 == null")).toBe(true);
  });

  it("and and or read their right side only when the left does not decide", () => {
    expect(holds('kind == "tenant-configuration" and nope > 1')).toBe(false);
    expect(() => holds('kind == "ssp" and nope > 1')).toThrow(/unknown name "nope"/);
  });

  it("mixing kinds, a condition that is no true or false, and a formula's grammar are errors in words", () => {
    expect(() => holds('mid_point_move_pct > "20"')).toThrow(/compares a number with text/);
    expect(() => holds("mid_point_move_pct")).toThrow(/gives a number, not true or false/);
    expect(() => holds("kind and true")).toThrow(/and needs true or false, got text/);
    expect(() => parseCondition("1 < 2 < 3")).toThrow(/comparisons do not chain/);
    expect(() => parseCondition('"open')).toThrow(/not closed/);
    expect(() => parseCondition("a && b")).toThrow(ExprError);
    expect(() => parseCondition("max(a) > 1")).toThrow(/function calls are not allowed/);
    // A formula reads none of it.
    expect(() => parseExpr("a > 1")).toThrow(/not allowed in an expression/);
    expect(() => parseExpr("after.x")).toThrow(ExprError);
  });

  it("names its names with their places, and checks kinds before any value is known", () => {
    expect(namesOf(parseCondition("a > 1 and (b.c == null or not d)"))).toEqual([
      { name: "a", at: 0 },
      { name: "b.c", at: 11 },
      { name: "d", at: 30 },
    ]);
    const kinds = (n: string): StaticKind => (n === "kind" ? "text" : n.startsWith("after.") ? "any" : "number");
    const problems = (src: string): string[] => {
      const out: string[] = [];
      conditionKind(parseCondition(src), kinds, out);
      return out;
    };
    expect(problems('kind == "ssp" and x > 2')).toEqual([]);
    expect(problems("kind > 2")).toEqual(["> compares text with number"]);
    expect(problems("x and true")).toEqual(["and needs true or false, got number"]);
    expect(problems("after.carves_allocation == false")).toEqual([]);
    expect(evaluateCondition(parseCondition("-x + 1"), () => 2)).toBe(-1);
  });
});
