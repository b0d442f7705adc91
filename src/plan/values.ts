import { createHash } from "node:crypto";
import deepDiff from "deep-diff";
import type { Condition, SspItem, SspValue } from "../schema/generated/api.js";
import { parseCsv, valuesColumns } from "../ssp/csv.js";
import { byCodePoint, type FieldDiff } from "./model.js";

/** Server-managed fields: never a change. */
export const SERVER_FIELDS = new Set([
  "compliance_id",
  "unique_key",
  "guid",
  "created_at",
  "created_by",
  "created_on",
  "updated_at",
  "updated_by",
  "last_modified_on",
  "last_modified_by",
  "version_id",
  "timestamp",
  "ssp_value_id",
  "file_id",
  "file_name",
]);

const stable = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => byCodePoint(a, b))) : x,
  );

/** Lists whose order carries no meaning are compared as sorted sets. */
export function canonicalSet<T>(list: readonly T[] | undefined): T[] {
  return [...(list ?? [])].sort((a, b) => byCodePoint(stable(a), stable(b)));
}

/** The spec names four comparisons twice, in words and as symbols (2.3): one meaning, one spelling. */
export const OPERATOR_ALIASES: Readonly<Record<string, string>> = { ">": "greater than", "<": "less than", ">=": "greater or equal", "<=": "less or equal" };

export const canonicalOperator = (op: string): string => OPERATOR_ALIASES[op] ?? op;

/** Operators whose value is a comma-separated list (spec 2.3). */
const LIST_OPERATORS = new Set(["in", "not in"]);

/** A condition's value as compared: a list's items trimmed and taken as a set ("US01, DE01" is
 *  "DE01,US01"); any other value as it is. */
export function canonicalConditionValue(operator: string, value: string): string {
  if (!LIST_OPERATORS.has(operator) || typeof value !== "string") return value;
  return value
    .split(",")
    .map((v) => v.trim())
    .sort(byCodePoint)
    .join(",");
}

export function canonicalConditions(list: readonly Condition[] | undefined): Condition[] {
  return canonicalSet(
    (list ?? []).map((c) => {
      const operator = canonicalOperator(c.operator);
      return { field_name: c.field_name, operator, value: canonicalConditionValue(operator, c.value) };
    }),
  );
}

export const SET_FIELDS = new Set(["data_identifiers", "when"]);

/** The comparable fields of an SSP policy item; only the keys the YAML spec sets are compared. */
export function normalizeSspFields(item: Partial<SspItem> | Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const src = item as Record<string, unknown>;
  for (const k of keys) {
    if (SERVER_FIELDS.has(k)) continue;
    const v = src[k];
    if (k === "when") out[k] = canonicalConditions(v as Condition[] | undefined);
    else if (k === "data_identifiers") out[k] = canonicalSet(v as string[] | undefined);
    else out[k] = v;
  }
  return out;
}

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
const NUMERIC = new Set(["below_mid_point", "mid_point", "above_mid_point"]);

const keyOf = (v: ValueLike): ValueKey => `${v.product_id}|${v.currency_code}|${v.effective_start_date}`;
const restOf = (v: ValueLike): string => `${v.value_type}${SEP}${v.below_mid_point}${SEP}${v.mid_point}${SEP}${v.above_mid_point}${SEP}${v.effective_end_date}`;

/** SSP values keyed by product, currency and start date; what remains is compared. */
export function keyedValues(values: readonly ValueLike[]): Map<ValueKey, string> {
  const map = new Map<ValueKey, string>();
  for (const v of values) map.set(keyOf(v), restOf(v));
  return map;
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
      `${c[vt] ?? ""}${SEP}${Number(c[below])}${SEP}${Number(c[mid])}${SEP}${Number(c[above])}${SEP}${c[end] ?? ""}`,
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
    if (a !== b) fields.push(NUMERIC.has(field) ? { field, service: Number(a), git: Number(b) } : { field, service: a, git: b });
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

/** A checksum of values, whatever their order and whether they come as a CSV or as values: what a saved
 *  plan binds a batch step to. */
export function valuesChecksum(held: HeldValues): string {
  const lines: string[] = [];
  eachHeld(held, (k, rest) => lines.push(`${k}${SEP}${rest}`));
  lines.sort(byCodePoint);
  return `sha256:${createHash("sha256").update(lines.join("\n")).digest("hex")}`;
}

/** Field-level differences (deep-diff); a difference inside a list is reported for the whole list. */
export function fieldDiff(before: Record<string, unknown>, after: Record<string, unknown>): FieldDiff[] {
  const raw = deepDiff.diff(before, after) ?? [];
  const byField = new Map<string, FieldDiff>();
  for (const d of raw) {
    const top = String(d.path?.[0] ?? "");
    const whole = Array.isArray(before[top]) || Array.isArray(after[top]) || (d.path?.length ?? 0) > 1;
    const path = whole ? top : (d.path ?? []).join(".");
    if (byField.has(path)) continue;
    const b = before[top];
    const a = after[top];
    const kind = b === undefined ? "added" : a === undefined ? "removed" : "changed";
    byField.set(path, { path, kind, before: b, after: a });
  }
  return [...byField.values()];
}
