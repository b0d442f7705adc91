import { isNumber, numberOf, readNumber } from "../number.js";

/** What a test line means, whether written the way the examples write it or the way the service writes
 *  an order's document_details (dates MM/DD/YYYY, numbers as text, transaction_currency): one reading,
 *  shared by loading (which refuses what cannot be read, at its line) and by the evaluator. */
export type Line = Record<string, string | number | boolean>;

const ISO = /^(\d{4})-(\d{2})-(\d{2})$/;
const US = /^(\d{2})\/(\d{2})\/(\d{4})$/;

/** The fields, in order, whose first non-empty value gives a line's date for batch values, unless the
 *  test file names one with date_field. */
export const DATE_FIELDS = ["date", "ssp_date", "order_date"] as const;

/** A date as YYYY-MM-DD, from YYYY-MM-DD or MM/DD/YYYY (the service's order documents); undefined when
 *  the text is neither, or no such day exists (2026-02-30). */
export function parseDate(text: string): string | undefined {
  const t = text.trim();
  const iso = ISO.exec(t);
  const us = iso ? undefined : US.exec(t);
  const [y, m, d] = iso ? [iso[1], iso[2], iso[3]] : us ? [us[3], us[1], us[2]] : [];
  if (!y || !m || !d) return undefined;
  const day = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  if (day.getUTCFullYear() !== Number(y) || day.getUTCMonth() !== Number(m) - 1 || day.getUTCDate() !== Number(d)) return undefined;
  return `${y}-${m}-${d}`;
}

/** A field whose value must be a date: `date`, any `…_date` (order_date, ssp_date, revenue_start_date…),
 *  and the file's date_field. */
export const isDateField = (name: string, dateField?: string): boolean => name === "date" || name.endsWith("_date") || name === dateField;

export const text = (v: unknown): string => (v === undefined || v === null ? "" : String(v));

/** Whether a line's value is a number, by the one number rule (src/number.ts): a number, or text in
 *  plain decimal notation ("1200.00"), exact. */
export const isNumeric = isNumber;

/** The line's numbers, for formulas: numbers, and text that is a number by the one number rule. */
export function numericFields(line: Line): Map<string, number> {
  const m = new Map<string, number>();
  for (const [k, v] of Object.entries(line)) {
    const n = numberOf(v);
    if (n !== undefined) m.set(k, n);
  }
  return m;
}

/** The line's date for batch values: the file's date_field, else the first of DATE_FIELDS the line has.
 *  `field` says where it came from; `date` is undefined when there is none (or it is not a date). */
export function lineDate(line: Line, dateField?: string): { field: string; date: string | undefined; raw: string } {
  const field = dateField ?? DATE_FIELDS.find((f) => text(line[f]) !== "") ?? DATE_FIELDS[0];
  const raw = text(line[field]);
  return { field, date: raw === "" ? undefined : parseDate(raw), raw };
}

/** The line's currency for batch values: currency_code, else the order document's transaction_currency. */
export const lineCurrency = (line: Line): string => text(line.currency_code) || text(line.transaction_currency);

/** The fields revsync computes with: the quantity and the prices. A line that gives one gives a number
 *  (by the one number rule), 0 or more: an unreadable one is never taken for a default, as a quantity
 *  of "1,000" read as 1 moves money between a contract's lines. */
export const NUMBER_FIELDS = ["order_quantity", "unit_list_price", "unit_sell_price", "total_list_price", "total_sell_price"] as const;

/** Problems of a line that loading reports at the field's place: a date field that holds no date, a
 *  quantity or price that is no number, or a negative one. */
export function lineProblems(line: Line, dateField?: string): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  for (const [k, v] of Object.entries(line)) {
    if ((NUMBER_FIELDS as readonly string[]).includes(k)) {
      const problem = numberProblem(v);
      if (problem) out.push({ field: k, message: problem });
      continue;
    }
    if (!isDateField(k, dateField) || text(v) === "") continue;
    if (typeof v !== "string" || parseDate(v) === undefined) {
      out.push({ field: k, message: `${JSON.stringify(v)} is not a date: write YYYY-MM-DD or MM/DD/YYYY (a day that exists)` });
    }
  }
  return out;
}

const negative = (shown: string): string =>
  `${shown} is negative: an order line's quantity and prices are 0 or more (a return or a credit is not a line revsync prices or allocates)`;

/** Why a quantity or price cannot be read (undefined: it can). */
function numberProblem(v: unknown): string | undefined {
  if (typeof v !== "number" && typeof v !== "string") return `${JSON.stringify(v ?? null)} is not a number`;
  if (typeof v === "number") {
    // A YAML number: its literal is checked where the file is read; here, what it means.
    return v < 0 ? negative(String(v)) : undefined;
  }
  const r = readNumber(v, { unsigned: true });
  if (!r.ok) return r.problem;
  return r.value < 0 ? negative(JSON.stringify(v)) : undefined;
}
