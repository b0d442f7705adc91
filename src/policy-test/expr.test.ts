import fc from "fast-check";
import { propertyRuns } from "../testing/property-runs.js";
import { binaryString } from "../testing/arbitraries.js";
import { describe, expect, it } from "vitest";
import { evaluateText, ExprError, MAX_DEPTH, parseExpr, sspScope } from "./expr.js";

const fields = new Map([
  ["unit_list_price", 1200],
  ["discount", 100],
]);

/** What the evaluator gives for a text: a finite number, or its own error; anything else is returned as
 *  is, for the property to reject. */
function run(src: string): { value: number } | { error: ExprError } | { other: unknown } {
  try {
    return { value: evaluateText(src, fields) };
  } catch (e) {
    return e instanceof ExprError ? { error: e } : { other: e };
  }
}

describe("the expression evaluator on any input", () => {
  it("deep nesting is its own error, not a stack overflow", () => {
    for (const src of ["(".repeat(100_000), `${"(".repeat(5000)}1${")".repeat(5000)}`, "-".repeat(50_000) + "1", "1+".repeat(20_000) + "1"]) {
      const r = run(src);
      expect(r).toHaveProperty("error");
      if ("error" in r) expect(r.error.message).toMatch(new RegExp(`nests too deeply at column \\d+ \\(more than ${MAX_DEPTH} levels`));
    }
    // Nesting below the limit evaluates.
    expect(run(`${"(".repeat(150)}unit_list_price${")".repeat(150)} * 0.5`)).toEqual({ value: 600 });
    expect(run(`${"-".repeat(100)}discount`)).toEqual({ value: 100 });
  });

  it("a result that is not a finite number is an error", () => {
    expect(run(`${"9".repeat(400)} * 10`)).toHaveProperty("error");
    expect(() => parseExpr("1 +")).toThrow(ExprError);
  });

  it("property: random text up to 10 kB gives a finite number or an ExprError, never anything else", () => {
    // Random characters, and random runs of the grammar's own tokens (which reach deep nesting).
    const token = fc.constantFrom("(", ")", "-", "+", "*", "/", " ", "1", "0", "2.5", "unit_list_price", "discount", "x", ".", ",");
    const text = fc.oneof(
      fc.string({ maxLength: 10_000 }),
      binaryString({ maxLength: 2_000 }),
      fc.array(token, { maxLength: 4_000 }).map((t) => t.join("").slice(0, 10_000)),
    );
    fc.assert(
      fc.property(text, (src) => {
        const r = run(src);
        if ("other" in r) return false;
        return "error" in r || Number.isFinite(r.value);
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });
});

describe("numbers in an expression, by the one number rule", () => {
  it("a number a double cannot hold exactly is an error naming it, never rounded", () => {
    expect(() => evaluateText("unit_list_price * 12345678901234567890", fields)).toThrow(
      /^12345678901234567890 at column 19: 12345678901234567890 is beyond 9007199254740991/,
    );
    expect(() => evaluateText("unit_list_price * 0.1234567890123456789", fields)).toThrow(/has more significant digits than a double keeps/);
    expect(evaluateText("unit_list_price * 0.5", fields)).toBe(600);
  });
});

describe("an SSP per unit or for the line, told by the fields a formula reads", () => {
  it.each([
    ["unit_list_price * 0.8", { per: "unit" }],
    ["(unit_list_price - discount) * 0.9", { per: "unit" }],
    ["100", { per: "unit" }],
    ["total_list_price * 1", { per: "line" }],
    ["total_list_price - discount_amount", { per: "line" }],
    ["unit_list_price * order_quantity", { per: "line" }],
    ["total_list_price / order_quantity", { per: "unit" }],
    ["total_sell_price * 0.2 + 5", { per: "line" }],
  ])("%s is %o", (src, scope) => {
    expect(sspScope(src)).toEqual(scope);
  });

  it("a formula that mixes the two, or counts the quantity twice, cannot be told", () => {
    expect(sspScope("unit_list_price + total_list_price")).toEqual({
      error: "unit_list_price + total_list_price adds an amount per unit to one for the whole line",
    });
    expect(sspScope("total_list_price * order_quantity")).toEqual({
      error: "it counts the line's quantity 2 times (per unit and for the line are the two an SSP can be)",
    });
    expect(sspScope("1 / order_quantity")).toEqual({ error: "it counts the line's quantity negatively (per unit and for the line are the two an SSP can be)" });
  });
});
