import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluateText, ExprError, MAX_DEPTH, parseExpr } from "./expr.js";

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
      fc.string({ unit: "binary", maxLength: 2_000 }),
      fc.array(token, { maxLength: 4_000 }).map((t) => t.join("").slice(0, 10_000)),
    );
    fc.assert(
      fc.property(text, (src) => {
        const r = run(src);
        if ("other" in r) return false;
        return "error" in r || Number.isFinite(r.value);
      }),
      { numRuns: 300 },
    );
  });
});
