import { lstatSync, realpathSync, statSync } from "node:fs";
import { plainReason, READ_CAPS, readFailure, readUserFileBytes } from "../user-files.js";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import type { SspValueInput } from "../schema/generated/api.js";
import { CsvSyntaxError, fromCsvCell, parseCsv, TEMPLATE_HEADER, valuesColumns, type CsvRow } from "../ssp/csv.js";
import type { Diagnostic } from "./diagnostics.js";
import { readWhole } from "../number.js";

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const dateSeen = new Map<string, boolean>();

/** A real calendar date YYYY-MM-DD. Values files repeat few dates across many rows: remembered. */
export function isDate(s: string): boolean {
  let ok = dateSeen.get(s);
  if (ok === undefined) {
    const m = DATE.exec(s);
    const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
    ok = !!m && !!d && d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
    if (dateSeen.size < 10_000) dateSeen.set(s, ok);
  }
  return ok;
}

/** Resolves a batch's `values` path: relative to the policy file, and never outside the repo root. */
export function resolveValuesPath(root: string, policyFile: string, value: string): { path?: string; problem?: string } {
  if (isAbsolute(value)) return { problem: `values must be a path relative to the policy file, not ${JSON.stringify(value)}` };
  const path = resolve(dirname(policyFile), value);
  const rel = relative(root, path);
  if (rel.startsWith("..") || isAbsolute(rel)) return { problem: `values file ${JSON.stringify(value)} lies outside the policy repo` };
  try {
    lstatSync(path);
  } catch {
    return { problem: `values file ${JSON.stringify(value)} does not exist` };
  }
  let real: string;
  try {
    // Follows links: a folder, a link that leads nowhere or round in a loop is said here, at values:.
    if (statSync(path).isDirectory()) return { problem: `values ${JSON.stringify(value)} is a folder: name the CSV file of the batch's values` };
    real = realpathSync.native(path);
  } catch (e) {
    return { problem: `values file ${JSON.stringify(value)} cannot be read: ${plainReason(e)}` };
  }
  const realRoot = realpathSync.native(root);
  if (real !== realRoot && !real.startsWith(realRoot + sep))
    return { problem: `values file ${JSON.stringify(value)} is a link that leads outside the policy repo` };
  return { path };
}

export interface ParsedValues {
  values: (SspValueInput & { line: number })[];
  diagnostics: Diagnostic[];
  /** The file as read ("" when unreadable): drift compares it with the service's download. */
  text: string;
}

/** Reads a batch values CSV (the spec's columns, by header name) and checks each row: a regular file of
 *  at most 64 MiB (READ_CAPS.values; a FIFO or a device is refused by its type, never read). */
export function readValuesCsv(absPath: string, shownPath: string): ParsedValues {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(readUserFileBytes(absPath, READ_CAPS.values));
  } catch (e) {
    const message = e instanceof TypeError ? "file is not UTF-8 text" : `cannot read the file: ${readFailure(e)}`;
    return { values: [], diagnostics: [{ file: shownPath, line: 1, column: 1, message, severity: "error", rule: "batch-values" }], text: "" };
  }
  return checkValuesText(text, shownPath);
}

type Err = (line: number, column: number, message: string) => void;
type Value = ParsedValues["values"][number];

/** One data row of a values file, checked; undefined when it has a problem (each reported through err).
 *  `index` maps the template's columns to the file's; a file in the template's order is read as it is. */
function checkRow(row: CsvRow, index: number[], inOrder: boolean, width: number, err: Err): Value | undefined {
  const raw = row.cells;
  if (raw.length !== width) {
    err(row.line, 1, `expected ${width} columns, found ${raw.length}`);
    return undefined;
  }
  const c = inOrder ? raw : index.map((i) => raw[i] ?? "");
  // Text cells as written, less the apostrophe revsync's CSV writer puts before a formula-like cell.
  const [product, currency, valueType, start, end] = [c[0], c[1], c[2], c[6], c[7]].map((x) => fromCsvCell(x ?? "")) as [
    string,
    string,
    string,
    string,
    string,
  ];
  const [below, mid, above] = [c[3], c[4], c[5]] as [string, string, string];
  let ok = true;
  // Columns count from the file's own order; computed only for a problem.
  const bad = (i: number, m: string): void => {
    err(row.line, 1 + raw.slice(0, index[i] ?? 0).reduce((n, x) => n + x.length + 1, 0), m);
    ok = false;
  };
  if (product.trim() === "") bad(0, "product_id is empty");
  if (!/^[A-Z]{3}$/.test(currency)) bad(1, `currency_code must be a three-letter code such as USD, got ${JSON.stringify(currency)}`);
  if (valueType !== "Amount" && valueType !== "Percent") bad(2, `value_type must be Amount or Percent, got ${JSON.stringify(valueType)}`);
  const nums = [below, mid, above].map((s, i) => {
    // A whole number by the one number rule, however written (105, 105.0 as a spreadsheet saves it);
    // 105.5, 1e3 and a number beyond 2^53 - 1 are not.
    const r = readWhole(s);
    if (!r.ok) bad(3 + i, `${TEMPLATE_HEADER[3 + i]} must be a whole number, got ${JSON.stringify(s)}${r.kind === "not exact" ? `: ${r.problem}` : ""}`);
    return r.ok ? r.value : undefined;
  });
  pointProblems(nums, [below, mid, above], bad);
  if (!isDate(start)) bad(6, `effective_start_date must be a date YYYY-MM-DD, got ${JSON.stringify(start)}`);
  if (!isDate(end)) bad(7, `effective_end_date must be a date YYYY-MM-DD, got ${JSON.stringify(end)}`);
  if (isDate(start) && isDate(end) && start > end) bad(6, `effective_start_date ${start} is after effective_end_date ${end}`);
  if (!ok) return undefined;
  return {
    line: row.line,
    product_id: product,
    currency_code: currency,
    value_type: valueType as "Amount" | "Percent",
    below_mid_point: nums[0] ?? 0,
    mid_point: nums[1] ?? 0,
    above_mid_point: nums[2] ?? 0,
    effective_start_date: start,
    effective_end_date: end,
  };
}

/** The three points of a row, each that reads as a whole number (`nums`; undefined: already reported):
 *  every problem of each, and of their order, is reported (only numbers read exactly are compared: one
 *  reported as not exact would be compared as another number). */
function pointProblems(nums: (number | undefined)[], cells: string[], bad: (i: number, m: string) => void): void {
  nums.forEach((n, i) => {
    // An amount or a percent of the list price: never below zero.
    if (n !== undefined && n < 0) bad(3 + i, `${TEMPLATE_HEADER[3 + i]} must be 0 or more (an amount or a percent of the list price), got ${cells[i]}`);
  });
  const [lo, m, hi] = nums;
  const order = [
    [lo, m],
    [m, hi],
    [lo, hi],
  ];
  if (order.some(([a, b]) => a !== undefined && b !== undefined && a > b))
    bad(3, `expected below_mid_point <= mid_point <= above_mid_point, got ${cells.join(", ")}`);
}

/** Overlapping effective ranges for one product and currency: sorted by start, neighbours compared. */
function checkOverlaps(values: readonly Value[], err: Err): void {
  const groups = new Map<string, Value[]>();
  for (const v of values) {
    const k = `${v.product_id}\u0000${v.currency_code}`;
    const list = groups.get(k);
    if (list) list.push(v);
    else groups.set(k, [v]);
  }
  for (const list of groups.values()) {
    if (list.length < 2) continue;
    // Checked dates (YYYY-MM-DD), compared as text, as below (localeCompare would start ICU's collation).
    list.sort((a, b) => (a.effective_start_date < b.effective_start_date ? -1 : a.effective_start_date > b.effective_start_date ? 1 : 0));
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1];
      const cur = list[i];
      if (prev && cur && cur.effective_start_date <= prev.effective_end_date) {
        err(
          cur.line,
          1,
          `${cur.product_id} ${cur.currency_code}: ${cur.effective_start_date}..${cur.effective_end_date} overlaps line ${prev.line} (${prev.effective_start_date}..${prev.effective_end_date})`,
        );
      }
    }
  }
}

/** A values CSV's text, checked as validate checks a values file (export checks the service's values
 *  this way before it writes them into git). */
export function checkValuesText(text: string, shownPath: string): ParsedValues {
  const diagnostics: Diagnostic[] = [];
  const err: Err = (line, column, message) => {
    diagnostics.push({ file: shownPath, line, column, message, severity: "error", rule: "batch-values" });
  };
  let rows: CsvRow[];
  try {
    rows = parseCsv(text);
  } catch (e) {
    if (!(e instanceof CsvSyntaxError)) throw e;
    err(e.line, 1, `not valid CSV: ${e.message}`);
    return { values: [], diagnostics, text };
  }
  const header = rows[0];
  if (!header) {
    err(1, 1, `the file is empty: it needs the header ${TEMPLATE_HEADER.join(",")} (revsync ssp template prints it)`);
    return { values: [], diagnostics, text };
  }
  const { index, problems } = valuesColumns(header.cells);
  if (problems.length) {
    for (const p of problems) err(header.line, 1, p);
    return { values: [], diagnostics, text };
  }
  const values: Value[] = [];
  // Files in the template's column order (most) are read as they are; others through the header's map.
  const inOrder = index.every((v, i) => v === i) && header.cells.length === index.length;
  for (let r = 1; r < rows.length; r++) {
    const v = checkRow(rows[r] as CsvRow, index, inOrder, header.cells.length, err);
    if (v) values.push(v);
  }
  checkOverlaps(values, err);
  return { values, diagnostics, text };
}
