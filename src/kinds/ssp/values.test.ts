import fc from "fast-check";
import { propertyRuns } from "../../testing/property-runs.js";
import { binaryString } from "../../testing/arbitraries.js";
import { describe, expect, it } from "vitest";
import { valuesToCsv } from "../../ssp/csv.js";
import { compareValues, keyedValues, valuesChecksum } from "./values.js";
import { InexactNumber } from "../../number.js";

const v = (product_id: string, mid_point = 100, currency_code = "USD") => ({
  product_id,
  currency_code,
  value_type: "Percent",
  below_mid_point: 90,
  mid_point,
  above_mid_point: 110,
  effective_start_date: "2026-01-01",
  effective_end_date: "2026-06-30",
});

describe("compareValues", () => {
  it.each([
    ["same values in another order", [v("A"), v("B")], [v("B"), v("A")], { added: [], removed: [], changed: [] }],
    [
      "a changed mid point, field by field: the service's value and git's",
      [v("A", 100)],
      [v("A", 101)],
      { added: [], removed: [], changed: [{ key: "A|USD|2026-01-01", fields: [{ field: "mid_point", service: 101, git: 100 }] }] },
    ],
    ["only in git", [v("A"), v("B")], [v("A")], { added: ["B|USD|2026-01-01"], removed: [], changed: [] }],
    ["only in the service", [v("A")], [v("A"), v("A", 100, "EUR")], { added: [], removed: ["A|EUR|2026-01-01"], changed: [] }],
    ["both empty", [], [], { added: [], removed: [], changed: [] }],
  ])("%s", (_name, git, live, expected) => {
    expect(compareValues(keyedValues(git), live)).toEqual(expected);
  });
});

describe("compareValues of the service's download (read without an object per value)", () => {
  it("says what compareValues says, whatever the column order and however numbers are written", () => {
    const git = keyedValues([v("A"), v("B", 101), v("C")]);
    const live = [v("B", 102), v("A"), v("D")];
    const reordered =
      "mid_point,product_id,currency_code,value_type,below_mid_point,above_mid_point,effective_start_date,effective_end_date\n" +
      live
        .map((x) =>
          [
            x.mid_point,
            x.product_id,
            x.currency_code,
            x.value_type,
            `0${x.below_mid_point}`,
            x.above_mid_point,
            x.effective_start_date,
            x.effective_end_date,
          ].join(","),
        )
        .join("\n");
    expect(compareValues(git, { csv: valuesToCsv(live) })).toEqual(compareValues(git, live));
    expect(compareValues(git, { csv: reordered })).toEqual(compareValues(git, live));
    expect(compareValues(git, live)).toEqual({
      added: ["C|USD|2026-01-01"],
      removed: ["D|USD|2026-01-01"],
      changed: [{ key: "B|USD|2026-01-01", fields: [{ field: "mid_point", service: 102, git: 101 }] }],
    });
    // The checksum a saved plan binds a batch to: the same for the same values in any order or form.
    expect(valuesChecksum({ csv: reordered })).toBe(valuesChecksum([v("A"), v("D"), v("B", 102)]));
    expect(valuesChecksum(live)).not.toBe(valuesChecksum([v("B", 103), v("A"), v("D")]));
    expect(valuesChecksum([])).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe("the service's number cells, by git's rule (a whole number)", () => {
  it.each([
    ["an empty cell is not git's 0", "", 0, ""],
    ["0x10 is not git's 16", "0x10", 16, "0x10"],
    ["1e2 is not git's 100", "1e2", 100, "1e2"],
    ["1,000 is not git's 1000", '"1,000"', 1000, "1,000"],
    ["a number beyond 2^53 - 1 is not comparable, not the double it rounds to", "9007199254740993", 9007199254740992, "9007199254740993"],
  ])("%s", (_name, cell, git, shown) => {
    const csv = `product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\nA,USD,Percent,90,${cell},110,2026-01-01,2026-06-30\n`;
    const delta = compareValues(keyedValues([v("A", git)]), { csv });
    expect(delta.changed).toEqual([{ key: "A|USD|2026-01-01", fields: [{ field: "mid_point", service: shown, git }] }]);
    expect(valuesChecksum({ csv })).not.toBe(valuesChecksum([v("A", git)]));
  });

  it("16.0 is 16, as git's values files read it (one number rule on both sides)", () => {
    const csv = `product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\nA,USD,Percent,90,16.0,110,2026-01-01,2026-06-30\n`;
    expect(compareValues(keyedValues([v("A", 16)]), { csv })).toEqual({ added: [], removed: [], changed: [] });
  });

  it("the service's values read as JSON: a number that is not exact equals none of git's", () => {
    const live = [{ ...v("A"), mid_point: new InexactNumber("12345678901234567890") as unknown as number }];
    expect(compareValues(keyedValues([v("A", 12345678901234567000)]), live).changed).toEqual([
      { key: "A|USD|2026-01-01", fields: [{ field: "mid_point", service: "12345678901234567890", git: 12345678901234567000 }] },
    ]);
  });

  it("a whole number written with a sign, leading zeros or blanks is that number", () => {
    const csv = `product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\nA,USD,Percent, 090,100,110,2026-01-01,2026-06-30\n`;
    expect(compareValues(keyedValues([v("A")]), { csv })).toEqual({ added: [], removed: [], changed: [] });
  });
});

describe("valuesChecksum", () => {
  it("one checksum for one set of rows in any order, whatever characters the products hold (astral ones included)", () => {
    // Fixed: the checksum saved plans made before bind to (sorted by code point, one SHA-256).
    expect(valuesChecksum([v("A"), v("B")])).toBe(valuesChecksum([v("B"), v("A")]));
    fc.assert(
      fc.property(fc.uniqueArray(binaryString({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }), fc.integer(), (ids, seed) => {
        const rows = ids.map((id) => v(id));
        const shuffled = [...rows].sort(() => ((seed = (seed * 1103515245 + 12345) | 0) & 1 ? 1 : -1));
        expect(valuesChecksum(shuffled)).toBe(valuesChecksum(rows));
      }),
      propertyRuns({ quick: 200, deep: 2000 }),
    );
  });
});
