import deepDiff from "deep-diff";
import type { Condition, SspItem, SspValue } from "../schema/generated/api.js";
import { parseCsv, valuesColumns } from "../ssp/csv.js";
import type { FieldDiff } from "./model.js";

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
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x,
  );

/** Lists whose order carries no meaning are compared as sorted sets. */
export function canonicalSet<T>(list: readonly T[] | undefined): T[] {
  return [...(list ?? [])].sort((a, b) => stable(a).localeCompare(stable(b)));
}

/** The spec names four comparisons twice, in words and as symbols (2.3): one meaning, one spelling. */
export const OPERATOR_ALIASES: Readonly<Record<string, string>> = { ">": "greater than", "<": "less than", ">=": "greater or equal", "<=": "less or equal" };

export const canonicalOperator = (op: string): string => OPERATOR_ALIASES[op] ?? op;

export function canonicalConditions(list: readonly Condition[] | undefined): Condition[] {
  return canonicalSet((list ?? []).map((c) => ({ field_name: c.field_name, operator: canonicalOperator(c.operator), value: c.value })));
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

const keyOf = (v: ValueLike): ValueKey => `${v.product_id}|${v.currency_code}|${v.effective_start_date}`;
const restOf = (v: ValueLike): string => `${v.value_type}|${v.below_mid_point}|${v.mid_point}|${v.above_mid_point}|${v.effective_end_date}`;

/** SSP values keyed by product, currency and start date; what remains is compared. */
export function keyedValues(values: readonly ValueLike[]): Map<ValueKey, string> {
  const map = new Map<ValueKey, string>();
  for (const v of values) map.set(keyOf(v), restOf(v));
  return map;
}

export interface ValuesDelta {
  added: string[];
  removed: string[];
  changed: string[];
}

/** Git's values against the service's, in one pass over the service's (one map, not two: a batch can
 *  hold hundreds of thousands of values). */
export function compareValues(desired: Map<ValueKey, string>, live: readonly ValueLike[]): ValuesDelta {
  return compareEntries(desired, (visit) => {
    for (const v of live) visit(keyOf(v), restOf(v));
  });
}

/** The service's values straight from its CSV (a download): keys and compared parts built from each
 *  row's cells, with no object per value (a batch can hold hundreds of thousands). */
export function compareValuesCsv(desired: Map<ValueKey, string>, csv: string): ValuesDelta {
  const rows = parseCsv(csv);
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
  return compareEntries(desired, (visit) => {
    for (let r = 1; r < rows.length; r++) {
      const c = (rows[r] as { cells: string[] }).cells;
      visit(`${c[p] ?? ""}|${c[cur] ?? ""}|${c[start] ?? ""}`, `${c[vt] ?? ""}|${Number(c[below])}|${Number(c[mid])}|${Number(c[above])}|${c[end] ?? ""}`);
    }
  });
}

/** Git's values (keyed) against a stream of the service's: one pass, one map. */
function compareEntries(desired: Map<ValueKey, string>, each: (visit: (key: ValueKey, rest: string) => void) => void): ValuesDelta {
  const delta: ValuesDelta = { added: [], removed: [], changed: [] };
  const seen = new Set<ValueKey>();
  each((k, rest) => {
    const want = desired.get(k);
    if (want === undefined) delta.removed.push(k);
    else {
      seen.add(k);
      if (want !== rest) delta.changed.push(k);
    }
  });
  if (seen.size !== desired.size) for (const k of desired.keys()) if (!seen.has(k)) delta.added.push(k);
  return delta;
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
