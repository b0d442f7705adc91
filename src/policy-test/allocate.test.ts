import { readFileSync } from "node:fs";
import fc from "fast-check";
import { propertyRuns } from "../testing/property-runs.js";
import { describe, expect, it } from "vitest";
import { allocate, largestRemainder, ruleReader, sellCents, type Contract } from "./allocate.js";
import { order, type PolicyModel } from "./evaluate.js";
import { allocationImpact, runContracts } from "./run.js";

const WORDS = { below: "Raise to floor", mid: "Use transaction price", above: "Cap at ceiling" };

/** A policy met by one product, whose Amount row gives SSP and range. */
function amountPolicy(name: string, product: string, row: { low: number; ssp: number; high: number }, rules = WORDS): PolicyModel {
  return {
    name,
    active: true,
    hierarchy_no: 10,
    method: "upload",
    when: [{ field_name: "product_id", operator: "equality", value: product }],
    expression: "",
    batches: [
      {
        name: "B1",
        status: "approved",
        approved: 1,
        approvedShown: "listed 1st in git",
        values: [
          {
            product_id: product,
            currency_code: "USD",
            value_type: "Amount",
            below_mid_point: row.low,
            mid_point: row.ssp,
            above_mid_point: row.high,
            effective_start_date: "2026-01-01",
            effective_end_date: "2026-12-31",
          },
        ],
      },
    ],
    rules,
  };
}

const formulaPolicy = (name: string, product: string, expression: string, floor?: number, ceiling?: number, rules = WORDS): PolicyModel => ({
  name,
  active: true,
  hierarchy_no: 20,
  method: "formula",
  when: [{ field_name: "product_id", operator: "equality", value: product }],
  expression,
  batches: [],
  ...(floor === undefined ? {} : { floorPercentage: floor }),
  ...(ceiling === undefined ? {} : { ceilingPercentage: ceiling }),
  rules,
});

const contract = (lines: { id: string; product: string; sell: string; qty?: number }[], expect?: Record<string, number>): Contract => ({
  name: "c",
  file: "tests/c.yaml",
  line: 1,
  column: 1,
  lines: lines.map((l) => ({
    id: l.id,
    input: { product_id: l.product, currency_code: "USD", date: "2026-03-01", total_sell_price: l.sell, ...(l.qty ? { order_quantity: l.qty } : {}) },
  })),
  ...(expect ? { expect: { allocation: expect } } : {}),
});

const amount = (s: string): number => Number(s.replace(/[,+]/g, ""));

/** A section of docs/decisions.md and the cells of the table in it whose header starts so (the table
 *  runs to the first blank line; the page has other tables after it). */
function decisionTable(heading: string, header: string): { section: string; rows: string[][] } {
  const doc = readFileSync(new URL("../../docs/decisions.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf(heading));
  const table = section.slice(section.indexOf(header)).split("\n\n")[0] as string;
  const rows = table
    .split("\n")
    .slice(2)
    .filter((l) => l.startsWith("|"))
    .map((l) =>
      l
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  return { section, rows };
}

describe("the worked example of docs/decisions.md", () => {
  it("recomputes every figure of its table", () => {
    const { section, rows } = decisionTable("### How revsync allocates a contract", "| Line | SSP |");
    expect(rows.length).toBe(3);
    const policies: PolicyModel[] = [];
    const lines: { id: string; product: string; sell: string }[] = [];
    for (const [id, ssp, range, sell] of rows as string[][]) {
      const [low, high] = (range as string).split(" - ").map(amount) as [number, number];
      policies.push(amountPolicy(`P-${id}`, `SKU-${id}`, { low, ssp: amount(ssp as string), high }));
      lines.push({ id: id as string, product: `SKU-${id}`, sell: String(amount(sell as string)) });
    }
    const got = allocate(contract(lines), order(policies), { readRule: ruleReader(), carves: true });
    expect(got.status).toBe("allocated");
    expect(got.total).toBe(10000);
    rows.forEach(([id, ssp, , sell, falls, rule, basis, allocated, carve], i) => {
      const l = got.lines[i];
      expect(l).toMatchObject({
        id,
        ssp: amount(ssp as string),
        sell_price: amount(sell as string),
        position: falls,
        rule,
        basis: amount(basis as string),
        allocated: amount(allocated as string),
        carve: amount(carve as string),
      });
    });
    expect(section).toContain(`The bases sum to 9,850.00`);
    expect(got.lines.reduce((s, l) => s + (l.basis ?? 0), 0)).toBe(9850);
  });
});

describe("the worked example of an SSP per unit or for the line (docs/decisions.md)", () => {
  it("recomputes its table: a formula over a total is not extended by the quantity again", () => {
    const { section, rows } = decisionTable("### An SSP per unit or for the line", "| Line | Expression |");
    expect(rows.length).toBe(2);
    const policies: PolicyModel[] = [];
    const c: Contract = { name: "c", file: "tests/c.yaml", line: 1, column: 1, lines: [] };
    for (const [id, expression, gives] of rows as string[][]) {
      policies.push(formulaPolicy(`P-${id}`, `SKU-${id}`, (expression as string).replace(/`/g, ""), 90, 110));
      const fields = Object.fromEntries(
        (gives as string)
          .split(", ")
          .map((f) => f.split(" ") as [string, string])
          .map(([k, v]) => [k, Number(v)]),
      );
      c.lines.push({ id: id as string, input: { product_id: `SKU-${id}`, currency_code: "USD", order_quantity: 10, ...fields } });
    }
    const got = allocate(c, order(policies), { readRule: ruleReader(), carves: true });
    expect(got.status).toBe("allocated");
    rows.forEach(([id, , , ssp, range, sell, basis, allocated], i) => {
      const [low, high] = (range as string).split(" - ").map(amount);
      expect(got.lines[i]).toMatchObject({
        id,
        ssp: amount(ssp as string),
        range: { low, high },
        sell_price: amount(sell as string),
        basis: amount(basis as string),
        allocated: amount(allocated as string),
      });
    });
    // The same SSP written per unit gives the same allocation.
    const perUnit = order(policies.map((p) => ({ ...p, expression: p.expression.replace("total_list_price", "(total_list_price / order_quantity)") })));
    expect(allocate(c, perUnit, { readRule: ruleReader(), carves: true }).lines.map((l) => l.allocated)).toEqual([727.66, 222.34]);
    // Extended again (the support's 200 taken per unit): the figures the page gives for the mistake.
    const tenTimes = order(policies.map((p) => (p.expression.startsWith("total_") ? { ...p, expression: "200" } : p)));
    const wrong = allocate(c, tenTimes, { readRule: ruleReader(), carves: true });
    expect(wrong.lines.map((l) => l.allocated)).toEqual([271.43, 678.57]);
    const words = section.replace(/\s+/g, " ");
    expect(words).toContain("would split 271.43 / 678.57: USD 456.23 moved onto the support line");
    expect(Math.round(((wrong.lines[1]?.allocated ?? 0) - (got.lines[1]?.allocated ?? 0)) * 100) / 100).toBe(456.23);
  });

  it("a formula that is neither per unit nor for the line cannot be allocated, naming it", () => {
    const c = contract([{ id: "a", product: "A", sell: "100", qty: 2 }]);
    c.lines[0]!.input.total_list_price = 100;
    const got = allocate(c, order([formulaPolicy("P", "A", "total_list_price * order_quantity", 90, 110)]), { readRule: ruleReader(), carves: true });
    expect(got.status).toBe("cannot allocate");
    expect(got.errors).toEqual([
      "a: P's expression \"total_list_price * order_quantity\" gives an SSP neither per unit nor for the whole line (it counts the line's quantity 2 times (per unit and for the line are the two an SSP can be)), so what to allocate by cannot be told",
    ]);
  });
});

describe("largest remainder", () => {
  it("gives the cents left over to the largest remainders, ties to the earlier line, and sums exactly", () => {
    expect(largestRemainder(100n, [1n, 1n, 1n])).toEqual([34n, 33n, 33n]);
    expect(largestRemainder(1000000n, [7000n, 1700n, 1150n])).toEqual([710660n, 172589n, 116751n]);
    expect(largestRemainder(-100n, [1n, 1n, 1n])).toEqual([-34n, -33n, -33n]);
    expect(largestRemainder(5n, [0n, 3n])).toEqual([0n, 5n]);
  });
});

describe("a line's sell price", () => {
  it("is total_sell_price, or unit_sell_price x order_quantity, exactly, to the cent", () => {
    expect(sellCents({ total_sell_price: "1234.56" })).toBe(123456n);
    expect(sellCents({ total_sell_price: 0.1 })).toBe(10n);
    expect(sellCents({ unit_sell_price: 0.1, order_quantity: 3 })).toBe(30n);
    expect(sellCents({ unit_sell_price: "33.335", order_quantity: "1" })).toBe(3334n);
    expect(sellCents({ unit_sell_price: "1.005", order_quantity: 3 })).toBe(302n);
    expect(sellCents({ unit_sell_price: 10 })).toBeUndefined();
    expect(sellCents({ total_sell_price: "ten" })).toBeUndefined();
  });
});

describe("rule texts", () => {
  it("are read by their words, or as the tenant maps them; a text that says none or two cannot be read", () => {
    const read = ruleReader({ "Standalone rate": "mid_point", "Cap at ceiling": "range_bottom" });
    expect(read("Use transaction price")).toBe("transaction_price");
    expect(read("Cap at ceiling")).toBe("range_bottom");
    expect(read("  standalone RATE ")).toBe("mid_point");
    expect(read("Raise to floor")).toBe("range_bottom");
    expect(ruleReader()("Cap at ceiling")).toBe("range_top");
    expect(read("Use mid point")).toBe("mid_point");
    expect(read("Keep as is")).toBeUndefined();
    expect(read("Cap at floor")).toBeUndefined();
  });
});

describe("allocating a contract", () => {
  const hw = amountPolicy("Hardware SSP", "HW", { low: 4700, ssp: 5200, high: 5700 });
  const sup = formulaPolicy("Support SSP", "SUP", "unit_list_price * 0.2", 80, 120);

  it("uses the floor and ceiling percentages of a formula's SSP, extended by the quantity", () => {
    const c = contract([
      { id: "hw", product: "HW", sell: "10400", qty: 2 },
      { id: "sup", product: "SUP", sell: "300" },
    ]);
    c.lines[1]!.input.unit_list_price = 2000;
    const a = allocate(c, order([hw, sup]), { readRule: ruleReader(), carves: true });
    expect(a.lines[0]).toMatchObject({ ssp: 10400, range: { low: 9400, high: 11400 }, position: "inside", basis: 10400 });
    expect(a.lines[1]).toMatchObject({ ssp: 400, range: { low: 320, high: 480 }, position: "below", basis: 320 });
    expect(a.lines.reduce((s, l) => s + Math.round((l.allocated ?? 0) * 100), 0)).toBe(1070000);
  });

  it("keeps every sell price when carves_allocation is off, and says so by its status", () => {
    const a = allocate(
      contract([
        { id: "hw", product: "HW", sell: "4500" },
        { id: "x", product: "NONE", sell: "500" },
      ]),
      order([hw]),
      {
        readRule: ruleReader(),
        carves: false,
      },
    );
    expect(a.status).toBe("not carved");
    expect(a.lines.map((l) => [l.allocated, l.carve])).toEqual([
      [4500, 0],
      [500, 0],
    ]);
  });

  it("cannot allocate a contract with a line without SSP, naming it; fails only with expect", () => {
    const c = contract([
      { id: "hw", product: "HW", sell: "4500" },
      { id: "other", product: "NONE", sell: "500" },
    ]);
    const [quiet] = runContracts([c], [hw], { readRule: ruleReader(), carves: true });
    expect(quiet?.allocation.status).toBe("cannot allocate");
    expect(quiet?.allocation.why).toEqual(["other: no policy's conditions all hold"]);
    expect(quiet?.pass).toBe(true);
    const [strict] = runContracts([{ ...c, expect: { allocation: { hw: 4500 } } }], [hw], { readRule: ruleReader(), carves: true });
    expect(strict?.pass).toBe(false);
    expect(strict?.why).toEqual(["cannot allocate: other: no policy's conditions all hold"]);
  });

  it("fails on a rule revsync cannot read, naming the policy and the text", () => {
    const odd = amountPolicy("Odd SSP", "HW", { low: 4700, ssp: 5200, high: 5700 }, { ...WORDS, below: "Do the usual" });
    const [r] = runContracts([contract([{ id: "hw", product: "HW", sell: "4500" }])], [odd], { readRule: ruleReader(), carves: true });
    expect(r?.pass).toBe(false);
    expect(r?.why[0]).toContain(`hw: Odd SSP's transaction_below_range "Do the usual" is not a rule revsync can read`);
  });

  it("compares expect.allocation within 0.01, naming the line and both amounts", () => {
    const c = contract([
      { id: "hw", product: "HW", sell: "4500" },
      { id: "sup", product: "SUP", sell: "1000" },
    ]);
    c.lines[1]!.input.unit_list_price = 5000;
    const opts = { readRule: ruleReader(), carves: true };
    const a = allocate(c, order([hw, sup]), opts);
    const hwGot = a.lines[0]?.allocated as number;
    expect(runContracts([{ ...c, expect: { allocation: { hw: hwGot + 0.01 } } }], [hw, sup], opts)[0]?.pass).toBe(true);
    const [bad] = runContracts([{ ...c, expect: { allocation: { hw: hwGot + 0.02 } } }], [hw, sup], opts);
    expect(bad?.why).toEqual([
      `hw: expected ${(hwGot + 0.02).toLocaleString("en-US", { minimumFractionDigits: 2 })}, got ${hwGot.toLocaleString("en-US", { minimumFractionDigits: 2 })}`,
    ]);
  });

  it("impact: lists a contract whose allocation moves, with the revenue moved, and not one that stays", () => {
    const c = contract([
      { id: "hw", product: "HW", sell: "4500" },
      { id: "sup", product: "SUP", sell: "1000" },
    ]);
    c.lines[1]!.input.unit_list_price = 5000;
    const same = { ...c, name: "same" };
    const cheaper = formulaPolicy("Support SSP", "SUP", "unit_list_price * 0.1", 80, 120);
    const read = ruleReader();
    const moved = allocationImpact([c], { policies: [hw, sup], carves: true }, { policies: [hw, cheaper], carves: true }, read);
    expect(moved).toHaveLength(1);
    const e = moved[0]!;
    expect(e.lines.reduce((s, l) => s + (l.shift ?? 0), 0)).toBeCloseTo(0, 9);
    expect(e.moved).toBe(Math.max(...e.lines.map((l) => l.shift ?? 0)));
    expect(e.moved).toBeGreaterThan(0);
    expect(allocationImpact([same], { policies: [hw, sup], carves: true }, { policies: [hw, sup], carves: true }, read)).toEqual([]);
    const off = allocationImpact([c], { policies: [hw, sup], carves: true }, { policies: [hw, sup], carves: false }, read)[0];
    expect(off?.after_status).toBe("not carved");
  });
});

/** Random contracts: 1 to 5 lines, each under its own policy (Amount rows), its rules random. */
const RULE_TEXTS = ["Use transaction price", "Cap at ceiling", "Raise to floor", "Use mid point"];
const lineArb = fc.record({
  ssp: fc.integer({ min: 1, max: 100_000 }),
  lowPct: fc.integer({ min: 50, max: 100 }),
  highPct: fc.integer({ min: 100, max: 150 }),
  sellCents: fc.integer({ min: 1, max: 20_000_000 }),
  qty: fc.integer({ min: 1, max: 5 }),
  rules: fc.record({ below: fc.constantFrom(...RULE_TEXTS), mid: fc.constantFrom(...RULE_TEXTS), above: fc.constantFrom(...RULE_TEXTS) }),
});

function build(ls: { ssp: number; lowPct: number; highPct: number; sellCents: number; qty: number; rules: typeof WORDS }[], k = 1) {
  const policies = ls.map((l, i) =>
    amountPolicy(`P${i}`, `SKU${i}`, { low: (l.ssp * l.lowPct * k) / 100, ssp: l.ssp * k, high: (l.ssp * l.highPct * k) / 100 }, l.rules),
  );
  const c = contract(ls.map((l, i) => ({ id: `l${i}`, product: `SKU${i}`, sell: ((l.sellCents * k) / 100).toFixed(2), qty: l.qty })));
  return { policies, c };
}

describe("allocation properties", () => {
  it("the lines sum exactly to the contract's total, to the cent", () => {
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 5 }), (ls) => {
        const { policies, c } = build(ls);
        const a = allocate(c, order(policies), { readRule: ruleReader(), carves: true });
        expect(a.status).toBe("allocated");
        const sum = a.lines.reduce((s, l) => s + Math.round((l.allocated as number) * 100), 0);
        expect(sum).toBe(ls.reduce((s, l) => s + l.sellCents, 0));
        expect(a.lines.reduce((s, l) => s + Math.round((l.carve as number) * 100), 0)).toBe(0);
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });

  it("lines inside their ranges under 'transaction price' rules keep their sell prices", () => {
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 5 }), (ls) => {
        // Each sell price inside its range: the SSP itself, extended.
        const inside = ls.map((l) => ({
          ...l,
          sellCents: l.ssp * l.qty * 100,
          rules: { below: "Use transaction price", mid: "Use transaction price", above: "Use transaction price" },
        }));
        const { policies, c } = build(inside);
        const a = allocate(c, order(policies), { readRule: ruleReader(), carves: true });
        for (const l of a.lines) {
          expect(l.position).toBe("inside");
          expect(l.allocated).toBe(l.sell_price);
          expect(l.carve).toBe(0);
        }
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });

  it("scaling every price scales every allocation (within the cent of rounding on each side)", () => {
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 5 }), fc.integer({ min: 2, max: 1000 }), (ls, k) => {
        const one = build(ls);
        const many = build(ls, k);
        const a1 = allocate(one.c, order(one.policies), { readRule: ruleReader(), carves: true });
        const ak = allocate(many.c, order(many.policies), { readRule: ruleReader(), carves: true });
        ak.lines.forEach((l, i) => {
          expect(l.position).toBe(a1.lines[i]?.position);
          expect(Math.abs((l.allocated as number) / k - (a1.lines[i]?.allocated as number))).toBeLessThanOrEqual(0.01 + 0.01 / k + 1e-9);
        });
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });
});

describe("sell prices in the one number rule's notation", () => {
  it("105. and .5 are numbers, as the rule reads them, exactly to the cent", () => {
    expect(sellCents({ total_sell_price: "105." })).toBe(10500n);
    expect(sellCents({ unit_sell_price: ".5", order_quantity: "3" })).toBe(150n);
    expect(sellCents({ total_sell_price: "1,000" })).toBeUndefined();
  });
});
