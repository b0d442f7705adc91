import { createRequire } from "node:module";
import type { parse as ParseSync } from "csv-parse/sync";
import type { SspValue, SspValueInput } from "../schema/generated/api.js";
import { readNumber, readWhole } from "../number.js";

/** An SSP value as the service holds it, without its id: value_type as answered. */
export type LiveValue = Omit<SspValue, "ssp_value_id">;

/** Column order of the SSP batch template and of downloads. */
export const TEMPLATE_HEADER = [
  "product_id",
  "currency_code",
  "value_type",
  "below_mid_point",
  "mid_point",
  "above_mid_point",
  "effective_start_date",
  "effective_end_date",
] as const;

export const TEMPLATE_EXAMPLE_ROW = ["HW-1000", "USD", "Percent", "90", "100", "110", "2026-01-01", "2026-06-30"];

export interface CsvRow {
  line: number;
  cells: string[];
}

/** A CSV file that cannot be read: where, and why. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = "CsvSyntaxError";
  }
}

/** The line where the quote that never closes was opened: csv-parse names the line where it gave up. */
function openingQuoteLine(body: string): number {
  let line = 1;
  let quoted = false;
  let openedAt = 1;
  let fieldStart = true;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (quoted) {
      if (c === '"') {
        if (body[i + 1] === '"') i++;
        else quoted = false;
      } else if (c === "\n") line++;
      continue;
    }
    if (c === '"' && fieldStart) {
      quoted = true;
      openedAt = line;
    }
    fieldStart = c === "," || c === "\n" || c === "\r";
    if (c === "\n") line++;
  }
  return openedAt;
}

/** RFC 4180 CSV: quoted fields, doubled quotes, CRLF or LF. Returns rows with the 1-based line each
 *  starts on; empty lines are skipped. Broken quoting is a CsvSyntaxError at its line. */
export function parseCsv(text: string): CsvRow[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // Most values files have no quotes at all: split lines and commas (the fast path).
  if (!body.includes('"')) {
    const out: CsvRow[] = [];
    const lines = body.split(/\r?\n|\r/);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line !== "") out.push({ line: i + 1, cells: line.split(",") });
    }
    return out;
  }
  let records: { record: string[]; info: { lines: number }; raw: string }[];
  // csv-parse is loaded only for a file with quotes (most values files have none).
  const parseSync = (createRequire(import.meta.url)("csv-parse/sync") as { parse: typeof ParseSync }).parse;
  try {
    records = parseSync(body, {
      info: true,
      raw: true,
      relax_column_count: true,
      skip_empty_lines: true,
      record_delimiter: ["\r\n", "\n", "\r"],
    }) as unknown as typeof records;
  } catch (e) {
    const err = e as Error & { code?: string; lines?: number };
    if (err.code === "CSV_QUOTE_NOT_CLOSED") throw new CsvSyntaxError(openingQuoteLine(body), "a quoted field opens here and never closes");
    const line = err.lines ?? 1;
    const why = err.code === "INVALID_OPENING_QUOTE" ? "a quote inside an unquoted field (quote the whole field and double the quote)" : err.message;
    throw new CsvSyntaxError(line, why);
  }
  // Each record's first line: the lines its raw text spans, counted from the top (skipped empty lines
  // come at the start of the next record's raw text).
  let line = 1;
  return records.map((r) => {
    const leading = /^(?:\r\n|\n|\r)*/.exec(r.raw)?.[0] ?? "";
    const start = line + (leading.match(/\r\n|\n|\r/g) ?? []).length;
    line += (r.raw.match(/\r\n|\n|\r/g) ?? []).length;
    return { line: start, cells: r.record };
  });
}

/** Where each column of the values format (an SSP value without ssp_value_id) sits in a file's header,
 *  matched by name in any order; or what is wrong with the header. */
export function valuesColumns(header: readonly string[]): { index: number[]; problems: string[] } {
  const problems: string[] = [];
  const names = header.map((h) => h.trim());
  if (names.length === 1 && (names[0] ?? "").includes(";")) {
    return {
      index: [],
      problems: [
        `the header is one column holding semicolons: the file looks semicolon-separated; revsync reads comma-separated values (${TEMPLATE_HEADER.join(",")})`,
      ],
    };
  }
  // No column revsync knows: the file lacks its header line. One problem, not one per cell; "looks like
  // data" when a cell is a number or a date, as a values row's are.
  if (!names.some((n) => (TEMPLATE_HEADER as readonly string[]).includes(n))) {
    const data = names.some((n) => /^-?\d+(\.\d+)?$/.test(n) || /^\d{4}-\d{2}-\d{2}$/.test(n));
    return {
      index: [],
      problems: [
        `${data ? "the first line looks like data, not a header" : "the first line names none of the columns"}: a values file starts with the header line ${TEMPLATE_HEADER.join(",")} (revsync ssp template prints it)`,
      ],
    };
  }
  const seen = new Map<string, number>();
  names.forEach((n, i) => {
    if (seen.has(n)) problems.push(`column ${JSON.stringify(n)} is repeated (columns ${(seen.get(n) ?? 0) + 1} and ${i + 1})`);
    else seen.set(n, i);
    if (!(TEMPLATE_HEADER as readonly string[]).includes(n))
      problems.push(`unknown column ${JSON.stringify(n)} (column ${i + 1}); the columns are ${TEMPLATE_HEADER.join(", ")}`);
  });
  const index = TEMPLATE_HEADER.map((c) => seen.get(c) ?? -1);
  TEMPLATE_HEADER.forEach((c, i) => {
    if (index[i] === -1) problems.push(`missing column ${JSON.stringify(c)}`);
  });
  return { index, problems };
}

function quote(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** A cell a spreadsheet would run as a formula: one that starts with =, +, -, @, a tab or a carriage
 *  return (after the apostrophes of an earlier escape, so that the escape stays one to one). */
const FORMULA = /^'*[=+\-@\t\r]/;

/** A cell as revsync writes it into any CSV (OWASP's guidance on CSV injection): text a spreadsheet
 *  would run as a formula gets a leading apostrophe, which spreadsheets read as "text follows"; a number
 *  (plain decimal notation, -5 and -0.5 included) stays a number (docs/decisions.md, "CSV is data"). */
export function csvCell(text: string): string {
  return FORMULA.test(text) && !readNumber(text).ok ? `'${text}` : text;
}

/** A text cell of a CSV revsync reads back from git (a values file): the apostrophe csvCell adds is taken
 *  off again, so export then plan compares the service's own text. */
export function fromCsvCell(cell: string): string {
  return cell.startsWith("'") && FORMULA.test(cell) ? cell.slice(1) : cell;
}

/** Whether csvCell would change a cell: one a spreadsheet would run as a formula, or one that starts with
 *  the apostrophe of such a cell's escape. */
export const formulaCell = (text: string): boolean => csvCell(text) !== text;

/** Whether a spreadsheet would run a cell as a formula. */
export const runsAsFormula = (text: string): boolean => !text.startsWith("'") && formulaCell(text);

/** Rows as RFC 4180 CSV: every cell through csvCell, then quoted where it holds a quote, a comma or a
 *  line break. The one writer of every CSV revsync makes. */
export function formatCsv(rows: readonly (readonly string[])[], cell: (text: string) => string = csvCell): string {
  return rows.map((r) => r.map((c) => quote(cell(c))).join(",")).join("\n") + "\n";
}

/** A cell as the service's own files hold it (the emulator's downloads): its text as it is. */
export const asTheServiceHoldsIt = (text: string): string => text;

/** Where a CSV holds a cell csvCell would change (`which`: or another kind of cell): the first such cell's
 *  line and column, and how many there are; undefined when none (or the text is not CSV at all). */
export function formulaCells(text: string, which: (cell: string) => boolean = formulaCell): { line: number; column: number; count: number } | undefined {
  let rows: CsvRow[];
  try {
    rows = parseCsv(text);
  } catch {
    return undefined;
  }
  let first: { line: number; column: number } | undefined;
  let count = 0;
  for (const r of rows)
    r.cells.forEach((c, i) => {
      if (!which(c)) return;
      count++;
      first ??= { line: r.line, column: i + 1 };
    });
  return first && { ...first, count };
}

/** Values as a values file (the template's columns): `cell`, csvCell for a file revsync writes. */
export function valuesToCsv(values: readonly (Omit<SspValueInput, "value_type"> & { value_type: string })[], cell = csvCell): string {
  return formatCsv(
    [
      TEMPLATE_HEADER,
      ...values.map((v) => [
        v.product_id,
        v.currency_code,
        v.value_type,
        String(v.below_mid_point),
        String(v.mid_point),
        String(v.above_mid_point),
        v.effective_start_date,
        v.effective_end_date,
      ]),
    ],
    cell,
  );
}

export function templateCsv(): string {
  return formatCsv([TEMPLATE_HEADER, TEMPLATE_EXAMPLE_ROW]);
}

/** Values of a downloaded batch file, columns matched by header name. A liberal read: values
 *  are taken as they are, a number cell by the one number rule (a whole number; one that is not, an
 *  empty cell included, is NaN: no number at all); a file that is not CSV at all is an error naming the
 *  line. */
export function valuesFromCsv(text: string): LiveValue[] {
  const rows = parseCsv(text);
  const cols = valuesColumns(rows[0]?.cells ?? []).index;
  return rows.slice(1).map((r) => {
    const c = (i: number): string => r.cells[cols[i] ?? -1] ?? "";
    const n = (i: number): number => {
      const read = readWhole(c(i));
      return read.ok ? read.value : Number.NaN;
    };
    return {
      product_id: c(0),
      currency_code: c(1),
      value_type: c(2),
      below_mid_point: n(3),
      mid_point: n(4),
      above_mid_point: n(5),
      effective_start_date: c(6),
      effective_end_date: c(7),
    };
  });
}
