import fc from "fast-check";
import { propertyRuns } from "../testing/property-runs.js";
import { describe, expect, it } from "vitest";
import { csvCell, CsvSyntaxError, fromCsvCell, parseCsv, runsAsFormula, valuesColumns, valuesFromCsv } from "./csv.js";

describe("parseCsv", () => {
  it.each([
    [
      "the fast path (no quotes)",
      "a,b\n1,2\n",
      [
        { line: 1, cells: ["a", "b"] },
        { line: 2, cells: ["1", "2"] },
      ],
    ],
    [
      "CRLF, a BOM and empty lines",
      "\ufeffa,b\r\n\r\n1,2\r\n",
      [
        { line: 1, cells: ["a", "b"] },
        { line: 3, cells: ["1", "2"] },
      ],
    ],
    [
      "quoted commas and doubled quotes",
      'a,b\n"x, y","say ""hi"""\n',
      [
        { line: 1, cells: ["a", "b"] },
        { line: 2, cells: ["x, y", 'say "hi"'] },
      ],
    ],
    [
      "a quoted newline: the next row keeps its own line",
      'a,b\n"x\ny",1\nz,2\n',
      [
        { line: 1, cells: ["a", "b"] },
        { line: 2, cells: ["x\ny", "1"] },
        { line: 4, cells: ["z", "2"] },
      ],
    ],
    [
      "no trailing newline",
      "a\n1",
      [
        { line: 1, cells: ["a"] },
        { line: 2, cells: ["1"] },
      ],
    ],
  ])("%s", (_name, text, rows) => {
    expect(parseCsv(text)).toEqual(rows);
  });

  it.each([
    ["an unterminated quote, at the line it opens", 'a,b\n1,2\n"3,4\n5,6\n', 3, /opens here and never closes/],
    ["a quote inside an unquoted field", 'a,b\nx"y,1\n', 2, /a quote inside an unquoted field/],
  ])("%s", (_name, text, line, message) => {
    const e = (() => {
      try {
        parseCsv(text);
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(CsvSyntaxError);
    expect((e as CsvSyntaxError).line).toBe(line);
    expect((e as Error).message).toMatch(message);
  });
});

describe("valuesColumns", () => {
  const all = ["product_id", "currency_code", "value_type", "below_mid_point", "mid_point", "above_mid_point", "effective_start_date", "effective_end_date"];
  it("any order, matched by name", () => {
    const header = [...all].reverse();
    expect(valuesColumns(header)).toEqual({ index: all.map((c) => header.indexOf(c)), problems: [] });
  });
  it.each([
    ["missing", all.slice(1), ['missing column "product_id"']],
    ["unknown", [...all, "ssp_value_id"], [expect.stringMatching(/^unknown column "ssp_value_id" \(column 9\)/)]],
    ["repeated", [...all, "mid_point"], ['column "mid_point" is repeated (columns 5 and 9)']],
    ["semicolons", [all.join(";")], [expect.stringMatching(/looks semicolon-separated/)]],
    [
      "no header line: one problem, not one per cell",
      ["HW-1000", "USD", "Percent", "90", "100", "110", "2026-01-01", "2026-06-30"],
      [`the first line looks like data, not a header: a values file starts with the header line ${all.join(",")} (revsync ssp template prints it)`],
    ],
    [
      "a header of other names",
      ["produkt", "währung"],
      [expect.stringMatching(/^the first line names none of the columns: a values file starts with the header line/)],
    ],
  ])("%s", (_name, header, problems) => {
    expect(valuesColumns(header).problems).toEqual(problems);
  });
  it("a download is read by header name", () => {
    const csv =
      "mid_point,product_id,currency_code,value_type,below_mid_point,above_mid_point,effective_start_date,effective_end_date\n100,P-1,USD,Percent,90,110,2026-01-01,2026-06-30\n";
    expect(valuesFromCsv(csv)).toEqual([
      {
        product_id: "P-1",
        currency_code: "USD",
        value_type: "Percent",
        below_mid_point: 90,
        mid_point: 100,
        above_mid_point: 110,
        effective_start_date: "2026-01-01",
        effective_end_date: "2026-06-30",
      },
    ]);
  });
});

describe("a CSV cell revsync writes", () => {
  it("gives each formula-like text an apostrophe, leaves numbers and other text as they are", () => {
    for (const t of ["=1+1", "+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1", "'=x", "''+y"]) expect(csvCell(t)).toBe(`'${t}`);
    for (const t of ["-5", "-0.5", "12", "HW-1000", "", "'quoted", "a=b", " =1"]) expect(csvCell(t)).toBe(t);
    expect(runsAsFormula("'=x")).toBe(false);
    expect(runsAsFormula("=x")).toBe(true);
  });

  it("reads back as the text it was made from, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("'", "=", "+", "-", "@", "\t", "\r", "1", ".", "a") }), (t) => {
        expect(fromCsvCell(csvCell(t))).toBe(t);
        expect(runsAsFormula(csvCell(t))).toBe(false);
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });
});
