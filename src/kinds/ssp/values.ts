import { createHash } from "node:crypto";
import type { SspValue } from "../../schema/generated/api.js";
import { parseCsv, valuesColumns } from "../../ssp/csv.js";
import { byCodePoint } from "../../shared/address.js";
import { readWhole } from "../../number.js";

export type ValueKey = string;

type ValueLike = Pick<
  SspValue,
  "product_id" | "currency_code" | "effective_start_date" | "effective_end_date" | "value_type" | "below_mid_point" | "mid_point" | "above_mid_point"
>;

/** Values as the service holds them: the downloaded CSV as is, or the values of a batch read. */
export type HeldValues = readonly ValueLike[] | { csv: string };

/** What a value row holds besides its key, in this order (joined by a separator no value holds). */
export const VALUE_FIELDS = ["value_type", "below_mid_point", "mid_point", "above_mid_point", "effective_end_date"] as const;
const SEP = "\u001f";
/** Marks a number that is not one revsync can compare (a service cell that is no whole number): it
 *  never equals one of git's. */
const NOT_A_NUMBER = "\u0000";
const NUMERIC = new Set(["below_mid_point", "mid_point", "above_mid_point"]);

const keyOf = (v: ValueLike): ValueKey => `${v.product_id}|${v.currency_code}|${v.effective_start_date}`;
/** A number of a value as compared: a number as it is; anything else (the service's number that is not
 *  exact, a value of another type) marked, so that it equals none of git's. */
const point = (n: unknown): string => (typeof n === "number" ? String(n) : `${NOT_A_NUMBER}${String(n)}`);
const restOf = (v: ValueLike): string =>
  `${v.value_type}${SEP}${point(v.below_mid_point)}${SEP}${point(v.mid_point)}${SEP}${point(v.above_mid_point)}${SEP}${v.effective_end_date}`;

/** SSP values keyed by product, currency and start date; what remains is compared. */
export function keyedValues(values: readonly ValueLike[]): Map<ValueKey, string> {
  const map = new Map<ValueKey, string>();
  for (const v of values) map.set(keyOf(v), restOf(v));
  return map;
}

/** A number cell of the service's CSV, read by the rule git's values files are held to (the one number
 *  rule, a whole number): "16" and "16.0" are 16; "", "0x10", "1e3" or a number beyond 2^53 - 1 are
 *  not numbers revsync can compare, and differ from any of git's. */
function cellNumber(cell: string | undefined): string {
  const r = readWhole(cell ?? "");
  return r.ok ? String(r.value) : `${NOT_A_NUMBER}${cell ?? ""}`;
}

/** Each held value as its key and the rest, with no object per value (a batch can hold hundreds of
 *  thousands): a CSV's cells are read straight from its rows. */
function eachHeld(held: HeldValues, visit: (key: ValueKey, rest: string) => void): void {
  if (Array.isArray(held)) {
    for (const v of held as readonly ValueLike[]) visit(keyOf(v), restOf(v));
    return;
  }
  const rows = parseCsv((held as { csv: string }).csv);
  const [p, cur, vt, below, mid, above, start, end] = valuesColumns(rows[0]?.cells ?? []).index as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  for (let r = 1; r < rows.length; r++) {
    const c = (rows[r] as { cells: string[] }).cells;
    visit(
      `${c[p] ?? ""}|${c[cur] ?? ""}|${c[start] ?? ""}`,
      `${c[vt] ?? ""}${SEP}${cellNumber(c[below])}${SEP}${cellNumber(c[mid])}${SEP}${cellNumber(c[above])}${SEP}${c[end] ?? ""}`,
    );
  }
}

/** A changed row: each field that differs, with the service's value and git's. */
export interface ChangedRow {
  key: ValueKey;
  fields: { field: (typeof VALUE_FIELDS)[number]; service: string | number; git: string | number }[];
}

export interface ValuesDelta {
  added: string[];
  removed: string[];
  changed: ChangedRow[];
}

function changedFields(key: ValueKey, service: string, git: string): ChangedRow {
  const s = service.split(SEP);
  const g = git.split(SEP);
  const fields: ChangedRow["fields"] = [];
  VALUE_FIELDS.forEach((field, i) => {
    const a = s[i] ?? "";
    const b = g[i] ?? "";
    const num = (x: string): string | number => (x.startsWith(NOT_A_NUMBER) ? x.slice(NOT_A_NUMBER.length) : Number(x));
    if (a !== b) fields.push(NUMERIC.has(field) ? { field, service: num(a), git: num(b) } : { field, service: a, git: b });
  });
  return { key, fields };
}

/** Git's values (keyed) against the service's, in one pass over the service's (one map, not two). */
export function compareValues(desired: Map<ValueKey, string>, held: HeldValues): ValuesDelta {
  const delta: ValuesDelta = { added: [], removed: [], changed: [] };
  const seen = new Set<ValueKey>();
  eachHeld(held, (k, rest) => {
    const want = desired.get(k);
    if (want === undefined) delta.removed.push(k);
    else {
      seen.add(k);
      if (want !== rest) delta.changed.push(changedFields(k, rest, want));
    }
  });
  if (seen.size !== desired.size) for (const k of desired.keys()) if (!seen.has(k)) delta.added.push(k);
  return delta;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** A checksum of values, whatever their order and whether they come as a CSV or as values: what a saved
 *  plan binds a batch step to. */
export function valuesChecksum(held: HeldValues): string {
  const lines: string[] = [];
  let astral = false;
  eachHeld(held, (k, rest) => {
    const line = `${k}${SEP}${rest}`;
    astral ||= SURROGATE.test(line);
    lines.push(line);
  });
  // Without a surrogate pair, UTF-16 order is code point order: the engine's own sort gives the same
  // order (and checksum), some times faster than a comparator called from JavaScript.
  if (astral) lines.sort(byCodePoint);
  else lines.sort();
  return `sha256:${createHash("sha256").update(lines.join("\n")).digest("hex")}`;
}
