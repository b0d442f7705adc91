import { byCodePoint } from "../plan/model.js";
import { evaluate, ExprError, parseExpr } from "./expr.js";

/** What matching needs of an SSP policy, from git or from the service. */
export interface PolicyModel {
  name: string;
  active: boolean;
  hierarchy_no: number;
  method: string;
  when: { field_name: string; operator: string; value: string }[];
  expression: string;
  batches: { name: string; status: string; values: ValueRow[] }[];
}

export interface ValueRow {
  product_id: string;
  currency_code: string;
  mid_point: number;
  effective_start_date: string;
  effective_end_date: string;
}

export type Line = Record<string, string | number | boolean>;

export interface Outcome {
  /** The policy met first, or null when none is. */
  policy: string | null;
  /** Its SSP for the line, or null when it has none (no value row, or an error). */
  ssp: number | null;
  /** Why the SSP is null, or why the case could not be evaluated. */
  note?: string;
  /** A condition that could not be evaluated: the case fails with it, never a guess. */
  error?: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const NUMBER = /^-?\d+(\.\d+)?$/;

const text = (v: unknown): string => (v === undefined || v === null ? "" : String(v));
const isNumber = (v: unknown): boolean => typeof v === "number" || (typeof v === "string" && NUMBER.test(v.trim()));

/** Ordering of two sides: numeric when both are numbers, else by date when both are YYYY-MM-DD. */
function compare(field: string, lineValue: unknown, condValue: string): number {
  if (isNumber(lineValue) && isNumber(condValue)) return Number(lineValue) - Number(condValue);
  const a = text(lineValue);
  if (DATE.test(a) && DATE.test(condValue)) return a < condValue ? -1 : a > condValue ? 1 : 0;
  throw new Error(`${field} ${JSON.stringify(a)} and ${JSON.stringify(condValue)} cannot be ordered: both must be numbers, or both dates YYYY-MM-DD`);
}

const list = (v: string): string[] => v.split(",").map((s) => s.trim());

/** Whether one condition holds for a line (README, "Policy tests": the rules, as built). Throws for an
 *  operator outside the list or sides that cannot be ordered. */
export function holds(c: PolicyModel["when"][number], line: Line): boolean {
  const v = line[c.field_name];
  const t = text(v);
  switch (c.operator) {
    case "equality":
      return t === c.value;
    case "inequality":
      return t !== c.value;
    case "in":
      return list(c.value).includes(t);
    case "not in":
      return !list(c.value).includes(t);
    case "contains":
      return t.includes(c.value);
    case "not contains":
      return !t.includes(c.value);
    case "starts with":
      return t.startsWith(c.value);
    case "ends with":
      return t.endsWith(c.value);
    case "greater than":
    case ">":
      return compare(c.field_name, v, c.value) > 0;
    case "less than":
    case "<":
      return compare(c.field_name, v, c.value) < 0;
    case "greater or equal":
    case ">=":
      return compare(c.field_name, v, c.value) >= 0;
    case "less or equal":
    case "<=":
      return compare(c.field_name, v, c.value) <= 0;
    case "null":
      return t === "";
    case "not null":
      return t !== "";
    default:
      throw new Error(`operator ${JSON.stringify(c.operator)} of ${c.field_name} is not one revsync can evaluate (see the README's policy tests)`);
  }
}

/** The first condition of a policy that does not hold for the line (undefined: all hold). */
export function firstFailing(p: PolicyModel, line: Line): PolicyModel["when"][number] | undefined {
  return p.when.find((c) => !holds(c, line));
}

/** Active policies in ascending hierarchy_no (ties by name, in code point order: the same on every
 *  machine): the order they are tried in. */
export function order(policies: readonly PolicyModel[]): PolicyModel[] {
  return policies.filter((p) => p.active).sort((a, b) => a.hierarchy_no - b.hierarchy_no || byCodePoint(a.name, b.name));
}

/** The numeric fields of a line, for formulas. */
function numericFields(line: Line): Map<string, number> {
  const m = new Map<string, number>();
  for (const [k, v] of Object.entries(line)) if (typeof v === "number") m.set(k, v);
  return m;
}

/** The SSP a policy gives a line: a formula's expression over the line's numbers; for upload and
 *  calculator, the mid_point of the row for the line's product_id and currency_code whose effective
 *  dates hold the line's date, in the latest approved batch (by name, descending) that has one. */
export function sspOf(p: PolicyModel, line: Line): { ssp: number | null; note?: string } {
  if (p.method === "formula") {
    try {
      return { ssp: evaluate(parseExpr(p.expression), numericFields(line)) };
    } catch (e) {
      if (e instanceof ExprError) return { ssp: null, note: `the expression ${JSON.stringify(p.expression)}: ${e.message}` };
      throw e;
    }
  }
  const date = text(line.date);
  const approved = p.batches.filter((b) => b.status === "approved").sort((a, b) => byCodePoint(b.name, a.name));
  for (const b of approved) {
    const row = b.values.find(
      (v) =>
        v.product_id === text(line.product_id) &&
        v.currency_code === text(line.currency_code) &&
        v.effective_start_date <= date &&
        date <= v.effective_end_date,
    );
    if (row) return { ssp: row.mid_point };
  }
  return {
    ssp: null,
    note: `no approved batch of ${p.name} holds a row for ${text(line.product_id) || "(no product_id)"} ${text(line.currency_code) || "(no currency_code)"} on ${date || "(no date)"}`,
  };
}

/** The policy a line meets first, and its SSP. */
export function outcome(ordered: readonly PolicyModel[], line: Line): Outcome {
  for (const p of ordered) {
    let failing: PolicyModel["when"][number] | undefined;
    try {
      failing = firstFailing(p, line);
    } catch (e) {
      return { policy: null, ssp: null, error: `${p.name}: ${(e as Error).message}` };
    }
    if (failing) continue;
    const { ssp, note } = sspOf(p, line);
    return { policy: p.name, ssp, ...(note ? { note } : {}) };
  }
  return { policy: null, ssp: null };
}

/** Two SSPs are the same when they agree to 6 decimals (formulas multiply by decimals). */
export const sameSsp = (a: number | null, b: number | null): boolean => (a === null || b === null ? a === b : Math.abs(a - b) < 1e-6);

export const showSsp = (v: number | null): string => (v === null ? "no SSP" : Number(v.toFixed(6)).toLocaleString("en-US", { maximumFractionDigits: 6 }));
