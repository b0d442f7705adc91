import fc from "fast-check";
import { propertyRuns } from "../testing/property-runs.js";
import { describe, expect, it } from "vitest";
import { firstFailing, holds, matchLine, order, showSsp, sspOf, type BatchModel, type PolicyModel, type ValueRow } from "./evaluate.js";
import { evaluate, ExprError, parseExpr } from "./expr.js";
import { impact, impactLine, runCases, type TestCase } from "./run.js";

const c = (field_name: string, operator: string, value: string) => ({ field_name, operator, value });

describe("conditions", () => {
  it.each([
    ["equality", "Hardware", { f: "Hardware" }, true],
    ["equality", "Hardware", { f: "hardware" }, false],
    ["inequality", "Hardware", { f: "Software" }, true],
    ["inequality", "Hardware", {}, true],
    ["in", "US01, DE01 ,FR01", { f: "DE01" }, true],
    ["in", "US01,DE01", { f: "JP01" }, false],
    ["not in", "APAC, LATAM", { f: "EMEA" }, true],
    ["not in", "APAC, LATAM", { f: "LATAM" }, false],
    ["contains", "Cloud", { f: "My Cloud CRM" }, true],
    ["not contains", "New", { f: "New Widget" }, false],
    ["starts with", "Support", { f: "Support Gold" }, true],
    ["ends with", "Promo", { f: "Starter Promo" }, true],
    ["greater than", "100", { f: 101 }, true],
    [">", "100", { f: "100" }, false],
    ["less than", "5", { f: 4.5 }, true],
    ["<", "2025-01-01", { f: "2024-12-31" }, true],
    ["greater or equal", "2026-01-01", { f: "2026-01-01" }, true],
    [">=", "10000", { f: 9999 }, false],
    ["less or equal", "2000", { f: 2000 }, true],
    ["<=", "50", { f: 50.5 }, false],
    ["null", "", {}, true],
    ["null", "", { f: "" }, true],
    ["not null", "", { f: "x" }, true],
    ["not null", "", {}, false],
  ])("%s %j against %j: %s", (operator, value, line, expected) => {
    expect(holds(c("f", operator, value), line)).toBe(expected);
  });

  it("sides that are neither both numbers nor both dates cannot be ordered: an error, never a guess", () => {
    expect(() => holds(c("order_date", "<", "2025-01-01"), { order_date: "soon" })).toThrow(
      /order_date "soon" and "2025-01-01" cannot be ordered: both must be numbers, or both dates \(YYYY-MM-DD or MM\/DD\/YYYY\)/,
    );
    expect(() => holds(c("x", ">", "10"), {})).toThrow(/cannot be ordered/);
  });

  it("an operator outside the list fails the case with a clear message", () => {
    expect(() => holds(c("product_family", "=", "Hardware"), { product_family: "Hardware" })).toThrow(
      /operator "=" of product_family is not one revsync can evaluate/,
    );
  });
});

describe("the expression evaluator", () => {
  const fields = new Map([
    ["unit_list_price", 1200],
    ["discount", 100],
  ]);
  it.each([
    ["unit_list_price * 0.8", 960],
    ["(unit_list_price - discount) * 0.5", 550],
    ["unit_list_price - discount * 2", 1000],
    ["-discount + 10", -90],
    ["100", 100],
    ["unit_list_price / 4 / 2", 150],
  ])("%s = %d", (src, value) => {
    expect(evaluate(parseExpr(src), fields)).toBeCloseTo(value, 9);
  });

  it.each([
    ["constructor", /unknown name "constructor"/],
    ["__proto__", /unknown name "__proto__"/],
    ["toString", /unknown name "toString"/],
    ["Math.max(1, 2)", /"\." at column 5 is not allowed/],
    ["max(unit_list_price)", /max\( at column 1: function calls are not allowed/],
    ["unit_list_price.constructor", /"\." at column 16 is not allowed/],
    ["'1' + 2", /"'" at column 1 is not allowed/],
    ["unit_list_price ** 2", /"\*" at column 18 is not where a number or a field name can be/],
    ["(1 + 2", /a parenthesis opened at column 1 is not closed/],
    ["1 2", /"2" at column 3 is not allowed here/],
    ["unit_list_price / (discount - 100)", /division by zero/],
    ["process", /unknown name "process"/],
  ])("refuses %s", (src, message) => {
    let err: unknown;
    try {
      evaluate(parseExpr(src), fields);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ExprError);
    expect((err as Error).message).toMatch(message);
  });
});

const policy = (name: string, hierarchy_no: number, over: Partial<PolicyModel> = {}): PolicyModel => ({
  name,
  active: true,
  hierarchy_no,
  method: "formula",
  when: [],
  expression: "unit_list_price",
  batches: [],
  ...over,
});

describe("matching and the SSP", () => {
  it("active policies only, ascending hierarchy_no, the first whose every condition holds", () => {
    const ps = [
      policy("Catch-all", 999),
      policy("Off", 1, { active: false }),
      policy("Hardware", 20, { when: [c("family", "equality", "Hardware")] }),
      policy("Big hardware", 10, { when: [c("family", "equality", "Hardware"), c("price", ">", "1000")] }),
    ];
    expect(order(ps).map((p) => p.name)).toEqual(["Big hardware", "Hardware", "Catch-all"]);
    expect(matchLine(order(ps), { family: "Hardware", price: 5000, unit_list_price: 5000 }).policy).toBe("Big hardware");
    expect(matchLine(order(ps), { family: "Hardware", price: 50, unit_list_price: 50 }).policy).toBe("Hardware");
    expect(matchLine(order(ps), { family: "Other", unit_list_price: 7 })).toEqual({ policy: "Catch-all", ssp: 7 });
    expect(matchLine(order([policy("Off", 1, { active: false })]), {})).toEqual({ policy: null, ssp: null });
  });

  const row = (mid: number, start: string, end: string, over: Partial<ValueRow> = {}): ValueRow => ({
    product_id: "P",
    currency_code: "USD",
    value_type: "Amount",
    mid_point: mid,
    effective_start_date: start,
    effective_end_date: end,
    ...over,
  });
  const batch = (name: string, approved: number, values: ValueRow[], over: Partial<BatchModel> = {}): BatchModel => ({
    name,
    status: "approved",
    values,
    approved,
    approvedShown: `at ${approved}`,
    ...over,
  });

  it("upload: an Amount row's mid point, from an approved batch whose row holds the product, currency and date", () => {
    const p = policy("Up", 1, {
      method: "upload",
      batches: [
        batch("B1", 1, [row(100, "2025-01-01", "2025-12-31")]),
        batch("B2", 2, [row(110, "2026-01-01", "2026-06-30")]),
        batch("B3", 3, [row(999, "2026-01-01", "2026-12-31")], { status: "reviewed" }),
      ],
    });
    expect(sspOf(p, { product_id: "P", currency_code: "USD", date: "2026-01-01" }).ssp).toBe(110);
    expect(sspOf(p, { product_id: "P", currency_code: "USD", date: "2026-06-30" }).ssp).toBe(110);
    expect(sspOf(p, { product_id: "P", currency_code: "USD", date: "2025-12-31" }).ssp).toBe(100);
    expect(sspOf(p, { product_id: "P", currency_code: "USD", date: "2026-07-01" })).toEqual({
      ssp: null,
      note: "no approved batch of Up holds a row for P USD on 2026-07-01",
    });
    expect(sspOf(p, { product_id: "P", currency_code: "EUR", date: "2026-03-01" }).ssp).toBeNull();
    // The service's own order documents: MM/DD/YYYY dates, transaction_currency, ssp_date or order_date.
    expect(sspOf(p, { product_id: "P", transaction_currency: "USD", order_date: "02/01/2026" }).ssp).toBe(110);
    expect(sspOf(p, { product_id: "P", transaction_currency: "USD", ssp_date: "2025-03-01", order_date: "02/01/2026" }).ssp).toBe(100);
    // A file's date_field names the field, and only that one.
    const line = { product_id: "P", currency_code: "USD", order_date: "02/01/2026", revenue_start_date: "03/01/2025" };
    expect(sspOf(p, line, { dateField: "revenue_start_date" }).ssp).toBe(100);
    expect(sspOf(p, { product_id: "P", currency_code: "USD" }, { dateField: "booked_on" })).toEqual({
      ssp: null,
      note: "the line has no date in booked_on, so no batch row can be chosen",
    });
  });

  it("a Percent row is a percent of the line's price (apply_ssppercent_on: list, the default, or sell price)", () => {
    const p = (percentOn?: string) =>
      policy("Pct", 1, {
        method: "upload",
        ...(percentOn ? { percentOn } : {}),
        batches: [batch("B", 1, [row(104, "2026-01-01", "2026-12-31", { value_type: "Percent" })])],
      });
    const line = { product_id: "P", currency_code: "USD", date: "2026-03-01", unit_list_price: "1200.00", unit_sell_price: 1000 };
    expect(sspOf(p(), line).ssp).toBeCloseTo(1248, 9);
    expect(sspOf(p("List Price"), line).ssp).toBeCloseTo(1248, 9);
    expect(sspOf(p("Sell Price"), line).ssp).toBeCloseTo(1040, 9);
    expect(sspOf(p("Cost"), line)).toEqual({ ssp: null, note: 'Pct applies its percentages on "Cost", a price revsync cannot find on a line' });
    expect(sspOf(p(), { product_id: "P", currency_code: "USD", date: "2026-03-01" })).toEqual({
      ssp: null,
      note: "B's row for P USD on 2026-03-01 is 104 percent of unit_list_price, which the line does not give as a number",
    });
    const odd = policy("Odd", 1, { method: "upload", batches: [batch("B", 1, [row(5, "2026-01-01", "2026-12-31", { value_type: "Ratio" })])] });
    expect(sspOf(odd, line).note).toBe('B\'s row for P USD on 2026-03-01 has value_type "Ratio", neither Amount nor Percent');
  });

  it("batch choice by validity: among batches whose range holds the date, the one approved last; a tie is an error naming both", () => {
    const q9 = batch("FY26-Q9", 200, [row(90, "2026-01-01", "2026-12-31")], { effective_start_date: "2026-01-01", effective_end_date: "2026-12-31" });
    const q10 = batch("FY26-Q10", 300, [row(100, "2026-01-01", "2026-12-31")], { effective_start_date: "2026-04-01", effective_end_date: "2026-06-30" });
    const p = policy("Up", 1, { method: "upload", batches: [q9, q10] });
    const at = (date: string) => sspOf(p, { product_id: "P", currency_code: "USD", date });
    // Q10 was approved last and its range holds the date; FY26-Q9 sorts after it by name, which says nothing.
    expect(at("2026-05-01").ssp).toBe(100);
    // Outside Q10's own range, Q9's row holds.
    expect(at("2026-08-01").ssp).toBe(90);
    const tie = policy("Up", 1, { method: "upload", batches: [q9, { ...q10, approved: 200, approvedShown: "at 200" }] });
    expect(sspOf(tie, { product_id: "P", currency_code: "USD", date: "2026-05-01" })).toEqual({
      ssp: null,
      error:
        "Up: batches FY26-Q9 (at 200) and FY26-Q10 (at 200) both hold a row for P USD on 2026-05-01, and none was approved after the other: which one applies cannot be told",
    });
    // The tie fails the case whatever it expects.
    const [r] = runCases(
      [{ name: "t", file: "f", line: 1, column: 1, input: { product_id: "P", currency_code: "USD", date: "05/01/2026" }, expect: { policy: "Up" } }],
      [tie],
    );
    expect(r?.pass).toBe(false);
    expect(r?.why[0]).toMatch(/FY26-Q9 .* and FY26-Q10 .* both hold a row/);
  });

  it("conditions order dates written either way", () => {
    expect(holds(c("order_date", "<", "2025-01-01"), { order_date: "12/31/2024" })).toBe(true);
    expect(holds(c("order_date", ">=", "01/01/2025"), { order_date: "2025-01-01" })).toBe(true);
    expect(() => holds(c("order_date", "<", "2025-01-01"), { order_date: "13/01/2024" })).toThrow(/cannot be ordered/);
  });

  it("a failing case says what matched first and which condition failed for the expected policy", () => {
    const ps = [policy("Hardware", 20, { when: [c("family", "equality", "Hardware")] }), policy("Catch-all", 999)];
    const file = "tests/t.yaml";
    const [r] = runCases([{ name: "x", file, line: 3, column: 5, input: { family: "Software", unit_list_price: 5 }, expect: { policy: "Hardware" } }], ps);
    expect(r?.pass).toBe(false);
    expect(r?.why).toEqual([
      "Catch-all matched first (hierarchy_no 999)",
      'Hardware\'s condition family equality "Hardware" does not hold (the line has family "Software")',
    ]);
  });

  it("impact: the cases whose policy or SSP a change alters, in words", () => {
    const before = [policy("Default SSP", 900, { expression: "1000" })];
    const after = [...before, policy("Training Courses SSP", 50, { when: [c("family", "equality", "Training")], expression: "unit_list_price * 0.8" })];
    const cases = [
      { name: "EU training course", file: "t.yaml", line: 4, column: 5, input: { family: "Training", unit_list_price: 1200 }, expect: { policy: null } },
      { name: "Hardware", file: "t.yaml", line: 7, column: 5, input: { family: "Hardware", unit_list_price: 10 }, expect: { policy: null } },
    ];
    const entries = impact(cases, before, after);
    expect(entries.map(impactLine)).toEqual(["EU training course: Default SSP at 1,000 -> Training Courses SSP at 960"]);
  });
});

describe("showSsp", () => {
  const icu = (v: number): string => Number(v.toFixed(6)).toLocaleString("en-US", { maximumFractionDigits: 6 });

  it("writes an SSP as en-US number formatting does, without starting it for plain numbers", () => {
    for (const v of [0, -0, 1030, 1030.5, -1234567.1234567, 4e-7, -4e-7, 1e-6, 999999.9999995, 0.1 + 0.2, 123456789012.12346, 1e21, -1e300, NaN, Infinity])
      expect(showSsp(v), String(v)).toBe(icu(v));
    expect(showSsp(null)).toBe("no SSP");
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.double({ min: -1e7, max: 1e7 }), fc.integer()), (v) => showSsp(v) === icu(v)),
      propertyRuns({ quick: 500, deep: 10000 }),
    );
  });
});

describe("the policy index", () => {
  /** Trying each policy in turn: what the index must give, error for error. */
  function naive(ordered: PolicyModel[], line: Record<string, string | number>): { policy: string | null; error?: string } {
    for (const p of ordered) {
      try {
        if (firstFailing(p, line)) continue;
      } catch (e) {
        return { policy: null, error: `${p.name}: ${(e as Error).message}` };
      }
      return { policy: p.name };
    }
    return { policy: null };
  }
  const cond = fc.record({
    field_name: fc.constantFrom("family", "region", "qty"),
    operator: fc.constantFrom("equality", "inequality", "in", ">", "null"),
    value: fc.constantFrom("A", "B", "C", "A,B", "5", ""),
  });
  it("meets the same policy (or the same error) as trying each policy in turn", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ when: fc.array(cond, { maxLength: 3 }), hierarchy_no: fc.integer({ min: 1, max: 20 }), active: fc.boolean() }), { maxLength: 12 }),
        fc.array(fc.record({ family: fc.constantFrom("A", "B", "C", ""), region: fc.constantFrom("A", "B"), qty: fc.constantFrom(1, 9, "x") }), {
          minLength: 1,
          maxLength: 10,
        }),
        (ps, lines) => {
          const ordered = order(ps.map((p, i) => ({ ...p, name: `P${i}`, method: "formula", expression: "1", batches: [] })));
          for (const line of lines) {
            const got = matchLine(ordered, line);
            expect({ policy: got.policy, ...(got.error ? { error: got.error } : {}) }).toEqual(naive(ordered, line));
          }
        },
      ),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });
});

describe("why a case failed", () => {
  const kase = (expectPolicy: string): TestCase => ({
    name: "c",
    file: "tests/c.yaml",
    line: 1,
    column: 1,
    input: { unit_list_price: 10 },
    expect: { policy: expectPolicy },
  });
  it("names the policy that came first: by hierarchy_no, or by name in a tie", () => {
    const [lower] = runCases([kase("Zeta")], [policy("Alpha", 5), policy("Zeta", 10)]);
    expect(lower?.why).toContain("Zeta's conditions hold too, but Alpha comes first (hierarchy_no 5 < 10)");
    const [tie] = runCases([kase("Zeta")], [policy("Alpha", 10), policy("Zeta", 10)]);
    expect(tie?.why).toContain("Zeta's conditions hold too, but Alpha comes first (both at hierarchy_no 10: a tie goes by name)");
  });
});
