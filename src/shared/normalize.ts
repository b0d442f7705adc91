/** How revsync compares what git says with what the service holds, field by field: one meaning, one
 *  spelling. Plan, drift, export and the API layer's read-back of a create all compare this way. */
import deepDiff from "deep-diff";
import type { Condition, SspItem } from "../schema/generated/api.js";
import { canonicalJson } from "../canonical-json.js";
import { byCodePoint } from "./address.js";

export interface FieldDiff {
  /** Dotted path of the field, e.g. "carves_allocation" or "batch.status". */
  path: string;
  kind: "changed" | "added" | "removed";
  before?: unknown;
  after?: unknown;
}

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

/** The named fields of an object (undefined where it has none). */
export const pick = (o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, o[k]]));

/** The value at a dotted path of a field difference ("batch.status"), undefined where there is none. */
export function valueAt(o: unknown, path: string): unknown {
  let cur: unknown = o;
  for (const part of path.split(".")) cur = cur && typeof cur === "object" ? (cur as Record<string, unknown>)[part] : undefined;
  return cur;
}

/** Lists whose order carries no meaning are compared as sorted sets (in the order of their items' one
 *  canonical JSON). */
export function canonicalSet<T>(list: readonly T[] | undefined): T[] {
  return [...(list ?? [])].sort((a, b) => byCodePoint(canonicalJson(a), canonicalJson(b)));
}

/** The interface names four comparisons twice, in words and as symbols: one meaning, one spelling
 *  (docs/decisions.md, "Operators: symbols and words are one"). */
export const OPERATOR_ALIASES: Readonly<Record<string, string>> = { ">": "greater than", "<": "less than", ">=": "greater or equal", "<=": "less or equal" };

export const canonicalOperator = (op: string): string => OPERATOR_ALIASES[op] ?? op;

/** Operators whose value is a comma-separated list. */
const LIST_OPERATORS = new Set(["in", "not in"]);

/** The items of an `in` / `not in` condition's value: comma-separated, spaces around each trimmed. */
export const listItems = (value: string): string[] => value.split(",").map((v) => v.trim());

/** A condition's value as compared: a list's items trimmed and taken as a set ("US01, DE01" is
 *  "DE01,US01"); any other value as it is. */
export function canonicalConditionValue(operator: string, value: string): string {
  if (!LIST_OPERATORS.has(operator) || typeof value !== "string") return value;
  return listItems(value).sort(byCodePoint).join(",");
}

export function canonicalConditions(list: readonly Condition[] | undefined): Condition[] {
  return canonicalSet(
    (list ?? []).map((c) => {
      const operator = canonicalOperator(c.operator);
      return { field_name: c.field_name, operator, value: canonicalConditionValue(operator, c.value) };
    }),
  );
}

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
