import { ExprError, evaluateText } from "./expr.js";
import { lineCurrency, lineDate, numericFields, parseDate, text, type Line } from "./line.js";
import { numberOf } from "../number.js";
import { byCodePoint } from "../shared/address.js";
import { canonicalOperator, listItems } from "../shared/normalize.js";
import { andList } from "../words.js";

export type { Line } from "./line.js";

/** What matching needs of an SSP policy, from git or from the service. */
export interface PolicyModel {
  name: string;
  active: boolean;
  hierarchy_no: number;
  method: string;
  when: { field_name: string; operator: string; value: string }[];
  expression: string;
  /** apply_ssppercent_on: the price a Percent row is a percent of (absent: the list price). */
  percentOn?: string;
  batches: BatchModel[];
  /** floor_percentage / ceiling_percentage: the range of an SSP that no value row gives one (absent:
   *  not known, as the service may answer null). */
  floorPercentage?: number;
  ceilingPercentage?: number;
  /** Of floor_percentage / ceiling_percentage, those the service does not show (it answers null):
   *  set only on a model of the service's policies, so that a range that needs one says why. */
  notShown?: string[];
  /** Of those, the ones the service answers with a number a double cannot hold exactly. */
  notComparable?: string[];
  /** The service's hierarchy_no, when it is a number a double cannot hold exactly: where the policy
   *  stands among the others is not known, so a line it may price cannot be evaluated. */
  placeUnknown?: string;
  /** transaction_below_range / _mid_range / _above_range: the tenant's texts of the allocation rules. */
  rules?: { below?: string; mid?: string; above?: string };
}

export interface BatchModel {
  name: string;
  status: string;
  values: ValueRow[];
  /** The batch's own validity, when known (YYYY-MM-DD or MM/DD/YYYY). */
  effective_start_date?: string;
  effective_end_date?: string;
  /** When it was approved, as an order: the later approved, the greater (docs/decisions.md, "Which
   *  approved batch was approved last"; src/plan/policy-models.ts sets it). Equal values are a tie that
   *  cannot be told apart. */
  approved: number;
  /** How `approved` is known, for messages: "updated_at 2026-03-01T10:00:00Z", "listed 2nd in git". */
  approvedShown: string;
}

export interface ValueRow {
  product_id: string;
  currency_code: string;
  /** Amount or Percent. */
  value_type: string;
  mid_point: number;
  /** The range around mid_point, of the same value type (absent in rows that do not give it). */
  below_mid_point?: number;
  above_mid_point?: number;
  effective_start_date: string;
  effective_end_date: string;
}

/** Which policy an order line meets first, and at what SSP: what a policy test case checks. */
export interface Match {
  /** The policy met first, or null when none is. */
  policy: string | null;
  /** Its SSP for the line, or null when it has none (no value row, or an error). */
  ssp: number | null;
  /** Why the SSP is null, or why the case could not be evaluated. */
  note?: string;
  /** A condition or a batch choice that could not be evaluated: the case fails with it, never a guess. */
  error?: string;
}

/** How a test file reads its lines. */
export interface LineOptions {
  /** The line field that gives the date for batch values (the file's date_field). */
  dateField?: string;
}

/** A side of an ordering comparison as a date (YYYY-MM-DD or MM/DD/YYYY), or undefined. */
const asDate = (v: unknown): string | undefined => (typeof v === "string" ? parseDate(v) : undefined);

/** Ordering of two sides: numeric when both are numbers, else by date when both are dates. */
function compare(field: string, lineValue: unknown, condValue: string): number {
  const x = numberOf(lineValue);
  const y = numberOf(condValue);
  if (x !== undefined && y !== undefined) return x - y;
  const a = asDate(lineValue);
  const b = asDate(condValue);
  if (a && b) return a < b ? -1 : a > b ? 1 : 0;
  throw new Error(
    `${field} ${JSON.stringify(text(lineValue))} and ${JSON.stringify(condValue)} cannot be ordered: both must be numbers, or both dates (YYYY-MM-DD or MM/DD/YYYY)`,
  );
}

/** Whether one condition holds for a line (README, "Policy tests": the rules, as built). Throws for an
 *  operator outside the list or sides that cannot be ordered. */
export function holds(c: PolicyModel["when"][number], line: Line): boolean {
  const v = line[c.field_name];
  const t = text(v);
  // One spelling of each operator: the symbols (>, <, >=, <=) are the words' aliases.
  switch (canonicalOperator(c.operator)) {
    case "equality":
      return t === c.value;
    case "inequality":
      return t !== c.value;
    case "in":
      return listItems(c.value).includes(t);
    case "not in":
      return !listItems(c.value).includes(t);
    case "contains":
      return t.includes(c.value);
    case "not contains":
      return !t.includes(c.value);
    case "starts with":
      return t.startsWith(c.value);
    case "ends with":
      return t.endsWith(c.value);
    case "greater than":
      return compare(c.field_name, v, c.value) > 0;
    case "less than":
      return compare(c.field_name, v, c.value) < 0;
    case "greater or equal":
      return compare(c.field_name, v, c.value) >= 0;
    case "less or equal":
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

/** Whether a batch's own range holds a date: an end the service leaves out (or gives in another form)
 *  does not limit it; its rows' dates still do. */
function batchHolds(b: BatchModel, date: string): boolean {
  const s = b.effective_start_date ? parseDate(b.effective_start_date) : undefined;
  const e = b.effective_end_date ? parseDate(b.effective_end_date) : undefined;
  return (!s || s <= date) && (!e || date <= e);
}

/** Whether a row's range holds a date: a row whose dates cannot be read holds none. */
function rowHolds(v: ValueRow, date: string): boolean {
  const s = parseDate(text(v.effective_start_date));
  const e = parseDate(text(v.effective_end_date));
  return !!s && !!e && s <= date && date <= e;
}

/** The line field a Percent row's mid_point is a percent of: apply_ssppercent_on names the list price
 *  (the default) or the sell price; anything else cannot be evaluated. */
function percentBase(p: PolicyModel): string | undefined {
  const on = (p.percentOn ?? "").trim().toLowerCase();
  if (on === "" || /\blist\b/.test(on)) return "unit_list_price";
  if (/\bsell(ing)?\b/.test(on)) return "unit_sell_price";
  return undefined;
}

/** The SSP a policy gives a line. A formula: its expression over the line's numbers. Upload and
 *  calculator: among the approved batches whose row for the line's product_id and currency (and whose
 *  own range, when known) hold the line's date, the one approved last; a tie is an error naming both.
 *  An Amount row's mid_point is the SSP; a Percent row's is a percent of the line's price. */
export interface SspFound {
  ssp: number | null;
  note?: string;
  error?: string;
  /** The value row the SSP came from (upload and calculator), and for a Percent row the price its
   *  percentages apply to. */
  row?: ValueRow;
  percentOf?: number;
}

export function sspOf(p: PolicyModel, line: Line, opts: LineOptions = {}): SspFound {
  if (p.method === "formula") {
    try {
      return { ssp: evaluateText(p.expression, numericFields(line)) };
    } catch (e) {
      if (e instanceof ExprError) return { ssp: null, note: `the expression ${JSON.stringify(p.expression)}: ${e.message}` };
      throw e;
    }
  }
  const product = text(line.product_id);
  const currency = lineCurrency(line);
  const { field, date, raw } = lineDate(line, opts.dateField);
  const what = `${product || "(no product_id)"} ${currency || "(no currency_code)"} on ${date ?? (raw || `(no ${field})`)}`;
  if (!date) return { ssp: null, note: `the line has no date in ${field}, so no batch row can be chosen` };
  const candidates: { batch: BatchModel; row: ValueRow }[] = [];
  for (const b of p.batches) {
    if (b.status !== "approved" || !batchHolds(b, date)) continue;
    const row = b.values.find((v) => v.product_id === product && v.currency_code === currency && rowHolds(v, date));
    if (row) candidates.push({ batch: b, row });
  }
  if (!candidates.length) return { ssp: null, note: `no approved batch of ${p.name} holds a row for ${what}` };
  const latest = Math.max(...candidates.map((c) => c.batch.approved));
  const winners = candidates.filter((c) => c.batch.approved === latest);
  if (winners.length > 1) {
    const named = andList(winners.map((w) => `${w.batch.name} (${w.batch.approvedShown})`));
    return {
      ssp: null,
      error: `${p.name}: batches ${named} ${winners.length === 2 ? "both" : "all"} hold a row for ${what}, and none was approved after the other${winners.length === 2 ? "" : "s"}: which one applies cannot be told`,
    };
  }
  const { row, batch } = winners[0] as { batch: BatchModel; row: ValueRow };
  const type = text(row.value_type).trim().toLowerCase();
  // A point the service gave that is no number by the one number rule (an empty cell, a number a double
  // cannot hold exactly) gives no SSP: never a guess.
  if (typeof row.mid_point !== "number" || !Number.isFinite(row.mid_point))
    return { ssp: null, note: `${batch.name}'s row for ${what} has no mid_point revsync can read as a number` };
  if (type === "amount") return { ssp: row.mid_point, row };
  if (type === "percent") {
    const base = percentBase(p);
    if (!base) return { ssp: null, note: `${p.name} applies its percentages on ${JSON.stringify(p.percentOn)}, a price revsync cannot find on a line` };
    const price = numberOf(line[base]);
    if (price === undefined)
      return { ssp: null, note: `${batch.name}'s row for ${what} is ${row.mid_point} percent of ${base}, which the line does not give as a number` };
    return { ssp: (price * row.mid_point) / 100, row, percentOf: price };
  }
  return { ssp: null, note: `${batch.name}'s row for ${what} has value_type ${JSON.stringify(row.value_type)}, neither Amount nor Percent` };
}

/** Where to look: the policies whose first condition is an `equality`, by that field and value (a line
 *  whose field holds another value cannot meet them, and that first condition ends their evaluation
 *  before any other could fail with an error), and the positions of all the others. The same policies
 *  are tried, in the same order, as when trying each in turn; 10,000 lines over 500 policies no longer
 *  try 500 each. */
interface PolicyIndex {
  fields: Map<string, Map<string, number[]>>;
  rest: number[];
}

const INDEXES = new WeakMap<readonly PolicyModel[], PolicyIndex>();

function indexOf(ordered: readonly PolicyModel[]): PolicyIndex {
  const known = INDEXES.get(ordered);
  if (known) return known;
  const ix: PolicyIndex = { fields: new Map(), rest: [] };
  ordered.forEach((p, i) => {
    const first = p.when[0];
    if (!first || canonicalOperator(first.operator) !== "equality") {
      ix.rest.push(i);
      return;
    }
    const byValue = ix.fields.get(first.field_name) ?? new Map<string, number[]>();
    ix.fields.set(first.field_name, byValue);
    const at = byValue.get(first.value) ?? [];
    byValue.set(first.value, at);
    at.push(i);
  });
  INDEXES.set(ordered, ix);
  return ix;
}

/** The positions of the policies a line may meet, in order (each policy is in one list only). */
function candidates(ix: PolicyIndex, line: Line): number[] {
  const lists: number[][] = ix.rest.length ? [ix.rest] : [];
  for (const [field, byValue] of ix.fields) {
    const at = byValue.get(text(line[field]));
    if (at) lists.push(at);
  }
  if (lists.length <= 1) return lists[0] ?? [];
  return lists.flat().sort((a, b) => a - b);
}

const UNPLACED = new WeakMap<readonly PolicyModel[], PolicyModel[]>();

/** Why a line cannot be given a policy because one it meets has a place in the hierarchy that is not
 *  known (the service's hierarchy_no is not comparable): the one met, or another whose conditions hold
 *  too, could come first. Undefined when no such policy meets the line. */
function unplacedMeeting(ordered: readonly PolicyModel[], line: Line, met: PolicyModel): string | undefined {
  let unplaced = UNPLACED.get(ordered);
  if (!unplaced) {
    unplaced = ordered.filter((p) => p.placeUnknown !== undefined);
    UNPLACED.set(ordered, unplaced);
  }
  for (const q of met.placeUnknown !== undefined ? [met] : unplaced) {
    let holds = q === met;
    try {
      holds ||= firstFailing(q, line) === undefined;
    } catch {
      holds = true;
    }
    if (holds) {
      return `${q.name}'s hierarchy_no is ${q.placeUnknown}, a number a double cannot hold exactly (not comparable), so where it stands among the policies is not known: ${q === met ? "it" : `it or ${met.name}`} may price the line, which cannot be told`;
    }
  }
  return undefined;
}

/** The policy a line meets first, and its SSP. */
export function matchLine(ordered: readonly PolicyModel[], line: Line, opts: LineOptions = {}): Match {
  return matchDetail(ordered, line, opts).match;
}

/** matchLine, with the policy met and where its SSP came from (what an allocation needs). */
export function matchDetail(ordered: readonly PolicyModel[], line: Line, opts: LineOptions = {}): { match: Match; policy?: PolicyModel; found?: SspFound } {
  for (const i of candidates(indexOf(ordered), line)) {
    const p = ordered[i] as PolicyModel;
    let failing: PolicyModel["when"][number] | undefined;
    try {
      failing = firstFailing(p, line);
    } catch (e) {
      return { match: { policy: null, ssp: null, error: `${p.name}: ${(e as Error).message}` } };
    }
    if (failing) continue;
    const unplaced = unplacedMeeting(ordered, line, p);
    if (unplaced) return { match: { policy: null, ssp: null, error: unplaced } };
    const found = sspOf(p, line, opts);
    const { ssp, note, error } = found;
    return { match: { policy: p.name, ssp, ...(note ? { note } : {}), ...(error ? { error } : {}) }, policy: p, found };
  }
  return { match: { policy: null, ssp: null } };
}

/** Two SSPs are the same when they agree to 6 decimals (formulas multiply by decimals). */
export const sameSsp = (a: number | null, b: number | null): boolean => (a === null || b === null ? a === b : Math.abs(a - b) < 1e-6);

/** Which policy meets a line, and at what SSP, in words: "no policy", "Hardware SSP at 1,030", "Hardware
 *  SSP with no SSP" (no approved batch holds the line), or the policy alone when the SSP is not asked. */
export const showOutcome = (policy: string | null, ssp?: number | null): string =>
  policy === null ? "no policy" : ssp === undefined ? policy : ssp === null ? `${policy} with no SSP` : `${policy} at ${showSsp(ssp)}`;

/** An SSP as toLocaleString("en-US", { maximumFractionDigits: 6 }) writes it ("1,030.5"). Written here for
 *  plain numbers: ICU's number formatting costs a command more to start (some 0.1 G instructions) than
 *  all its policy tests; the shortest decimal form of a number rounded to 6 places has at most 6 of them. */
export const showSsp = (v: number | null): string => {
  if (v === null) return "no SSP";
  const x = Number(v.toFixed(6));
  const plain = String(x);
  if (!/^-?\d+(\.\d+)?$/.test(plain) || Object.is(x, -0)) return x.toLocaleString("en-US", { maximumFractionDigits: 6 });
  return plain.replace(/^-?\d+/, (whole) => whole.replace(/\B(?=(\d{3})+$)/g, ","));
};
