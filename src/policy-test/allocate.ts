import { matchDetail, type PolicyModel, type SspFound } from "./evaluate.js";
import { isNumeric, text, type Line } from "./line.js";
import { numberOf } from "../number.js";
import { sspScope } from "./expr.js";

/** What a policy's allocation rule gives a line as its basis (docs/decisions.md, "How revsync allocates
 *  a contract"): its sell price, the top or the bottom of its SSP range, or its SSP. */
export const RULE_KINDS = ["transaction_price", "range_top", "range_bottom", "mid_point"] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

/** How a tenant's rule text reads: an exact text the tenant mapped (service.allocation_rules of
 *  revsync.yaml, any case, spaces around ignored), else its words: "transaction" or "sell" price,
 *  "ceiling" / "cap" / "upper", "floor" / "raise" / "lower", "mid" or "SSP". A text that says none of
 *  them, or more than one, cannot be read. */
export type RuleReader = (text: string) => RuleKind | undefined;

const WORDS: [RuleKind, RegExp][] = [
  ["transaction_price", /\b(transaction|sell(ing)?)\b/],
  ["range_top", /\b(ceiling|cap|capped|upper|top|maximum)\b/],
  ["range_bottom", /\b(floor|raise|raised|lower|bottom|minimum)\b/],
  ["mid_point", /\b(mid|midpoint|mid[ _-]point|ssp)\b/],
];

export function ruleReader(mapped: Record<string, string> = {}): RuleReader {
  const exact = new Map<string, RuleKind>();
  for (const [k, v] of Object.entries(mapped)) exact.set(k.trim().toLowerCase(), v as RuleKind);
  return (t) => {
    const key = t.trim().toLowerCase();
    const hit = exact.get(key);
    if (hit) return hit;
    const kinds = WORDS.filter(([, re]) => re.test(key)).map(([k]) => k);
    return kinds.length === 1 ? kinds[0] : undefined;
  };
}

export interface ContractLine {
  id: string;
  input: Line;
}

/** A contract of a test file, as loaded (src/config/test-files.ts): lines that share one currency and
 *  each have a sell price (loading refuses anything else, at its line). */
export interface Contract {
  name: string;
  file: string;
  line: number;
  column: number;
  lines: ContractLine[];
  expect?: { allocation: Record<string, number> };
  dateField?: string;
}

/** Where a line's sell price falls against its range. */
export type Position = "inside" | "above" | "below";

export interface AllocatedLine {
  id: string;
  policy: string | null;
  /** The line's SSP: an SSP per unit extended by the quantity, one for the whole line as it is (null:
   *  none). */
  ssp: number | null;
  range: { low: number; high: number } | null;
  position: Position | null;
  /** The policy's rule for that position, as the tenant wrote it, and how revsync read it. */
  rule: string | null;
  rule_reads: RuleKind | null;
  basis: number | null;
  sell_price: number;
  allocated: number | null;
  carve: number | null;
}

export interface Allocation {
  /** allocated: by relative basis; not carved: carves_allocation is off, every line keeps its sell
   *  price; cannot allocate: a line gives no basis (why says which and why). */
  status: "allocated" | "not carved" | "cannot allocate";
  currency: string;
  total: number;
  lines: AllocatedLine[];
  why: string[];
  /** A rule revsync cannot read, or a policy that could not be evaluated: an error of the run. */
  errors: string[];
}

export interface AllocateOptions {
  readRule: RuleReader;
  /** carves_allocation of the tenant-wide settings (false: nothing is reallocated). */
  carves: boolean;
}

/** A decimal number, exactly, as an integer of units of 10^-scale. */
function scaled(v: string | number | boolean, scale: number): bigint | undefined {
  const t = typeof v === "number" ? numberText(v) : text(v).trim();
  // The one number rule's notation (src/number.ts): 105., .5 and 105.0 included.
  const m = /^(-?)(\d*)(?:\.(\d*))?$/.exec(t);
  if (!m || (!m[2] && !m[3])) return undefined;
  const [, sign, whole = "", frac = ""] = m;
  const digits = BigInt(`${whole}${frac}`);
  const shift = scale - frac.length;
  let n: bigint;
  if (shift >= 0) n = digits * 10n ** BigInt(shift);
  else {
    // Half away from zero.
    const d = 10n ** BigInt(-shift);
    n = (digits + d / 2n) / d;
  }
  return sign === "-" ? -n : n;
}

/** A number in plain decimals (no exponent), as exactly as it is held. */
function numberText(n: number): string {
  if (!Number.isFinite(n)) return "NaN";
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/\.?0+$/, "");
}

/** A line's quantity: order_quantity, or 1 when the line does not give one. */
export function quantityOf(line: Line): number {
  return numberOf(line.order_quantity) ?? 1;
}

/** A line's sell price in cents: total_sell_price, or unit_sell_price x order_quantity (exact, then to
 *  the cent half away from zero); undefined when the line gives neither. */
export function sellCents(line: Line): bigint | undefined {
  if (isNumeric(line.total_sell_price)) return scaled(line.total_sell_price as string | number, 2);
  if (isNumeric(line.unit_sell_price) && isNumeric(line.order_quantity)) {
    const u = text(line.unit_sell_price).trim();
    const q = text(line.order_quantity).trim();
    const places = (s: string): number => (s.split(".")[1] ?? "").length;
    const exact = (scaled(u, places(u)) as bigint) * (scaled(q, places(q)) as bigint);
    return scaled(`${exact < 0n ? "-" : ""}${digitsAt(exact < 0n ? -exact : exact, places(u) + places(q))}`, 2);
  }
  return undefined;
}

const digitsAt = (n: bigint, places: number): string => {
  const s = n.toString().padStart(places + 1, "0");
  return places ? `${s.slice(0, -places)}.${s.slice(-places)}` : s;
};

const cents = (c: bigint): number => Number(c) / 100;

/** Bases are compared and divided in millionths: SSPs that agree to 6 decimals are the same SSP. */
const MICRO = 1_000_000;
const round6 = (x: number): number => Math.round(x * MICRO) / MICRO;

/** A total in cents shared in proportion to weights (integers, not all zero), each share rounded down
 *  and the cents left over given one each to the largest remainders (ties: the earlier line), so the
 *  shares sum exactly to the total. */
export function largestRemainder(total: bigint, weights: readonly bigint[]): bigint[] {
  const sum = weights.reduce((a, b) => a + b, 0n);
  const negative = total < 0n;
  const t = negative ? -total : total;
  const shares = weights.map((w) => (t * w) / sum);
  const rest = weights.map((w, i) => ({ i, r: (t * w) % sum }));
  let left = t - shares.reduce((a, b) => a + b, 0n);
  rest.sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
  for (const { i } of rest) {
    if (left <= 0n) break;
    shares[i] = (shares[i] as bigint) + 1n;
    left--;
  }
  return negative ? shares.map((s) => -s) : shares;
}

/** The range of the SSP a policy gives (per unit, or for the line when its formula reads totals): the value row's below_mid_point / above_mid_point (same value
 *  type as its mid_point) when the SSP comes from one that gives a range, else floor_percentage /
 *  ceiling_percentage of the SSP; null when neither is known. */
function unitRange(p: PolicyModel, found: SspFound, ssp: number): { low: number; high: number } | null {
  const row = found.row;
  if (row) {
    const lo = row.below_mid_point;
    const hi = row.above_mid_point;
    if (typeof lo === "number" && typeof hi === "number" && Number.isFinite(lo) && Number.isFinite(hi) && hi > 0 && lo <= hi) {
      const k = found.percentOf === undefined ? 1 : found.percentOf / 100;
      return { low: lo * k, high: hi * k };
    }
  }
  if (p.floorPercentage === undefined || p.ceilingPercentage === undefined) return null;
  return { low: (ssp * p.floorPercentage) / 100, high: (ssp * p.ceilingPercentage) / 100 };
}

const RULE_FIELD: Record<Position, "below" | "mid" | "above"> = { below: "below", inside: "mid", above: "above" };
const FIELD_NAME: Record<Position, string> = { below: "transaction_below_range", inside: "transaction_mid_range", above: "transaction_above_range" };

/** A contract's allocation against one set of policies (ordered as `order` orders them). */
export function allocate(c: Contract, ordered: readonly PolicyModel[], opts: AllocateOptions): Allocation {
  const notes: Notes = { why: [], errors: [] };
  const sells = c.lines.map((l) => sellCents(l.input) ?? 0n);
  const total = sells.reduce((a, b) => a + b, 0n);
  const lines = c.lines.map((l, i) => allocatedLine(l, sells[i] as bigint, c, ordered, opts, notes));
  const currency = text(c.lines[0]?.input.currency_code) || text(c.lines[0]?.input.transaction_currency);
  const base = { currency, total: cents(total), lines, ...notes };
  if (!opts.carves) {
    for (const [i, l] of lines.entries()) {
      l.allocated = cents(sells[i] as bigint);
      l.carve = 0;
    }
    return { status: "not carved", ...base };
  }
  if (notes.errors.length || notes.why.length) return { status: "cannot allocate", ...base };
  const weights = lines.map((l) => BigInt(Math.round((l.basis as number) * MICRO)));
  if (weights.every((w) => w === 0n)) return { status: "cannot allocate", ...base, why: ["every line's basis is zero"] };
  const shares = largestRemainder(total, weights);
  for (const [i, l] of lines.entries()) {
    const a = shares[i] as bigint;
    l.allocated = cents(a);
    l.carve = cents(a - (sells[i] as bigint));
  }
  return { status: "allocated", ...base };
}

/** Why an allocation cannot be made (a line gives no basis), and the errors of the run. */
interface Notes {
  why: string[];
  errors: string[];
}

/** One line: its policy, SSP and range, where its sell price falls, the rule for there, and the basis
 *  that rule gives; as far as each can be told (why not, or an error, in `notes`). */
function allocatedLine(l: ContractLine, sell: bigint, c: Contract, ordered: readonly PolicyModel[], opts: AllocateOptions, notes: Notes): AllocatedLine {
  const out: AllocatedLine = {
    id: l.id,
    policy: null,
    ssp: null,
    range: null,
    position: null,
    rule: null,
    rule_reads: null,
    basis: null,
    sell_price: cents(sell),
    allocated: null,
    carve: null,
  };
  const priced = priceLine(l, c, ordered, out, notes);
  if (!priced) return out;
  const { policy, range, ssp } = priced;
  const s = cents(sell);
  const position: Position = s > range.high + 1e-9 ? "above" : s < range.low - 1e-9 ? "below" : "inside";
  out.position = position;
  const ruleText = policy.rules?.[RULE_FIELD[position]];
  out.rule = ruleText ?? null;
  const kind = ruleText === undefined ? undefined : opts.readRule(ruleText);
  if (!kind) {
    notes.errors.push(
      `${l.id}: ${policy.name}'s ${FIELD_NAME[position]} ${ruleText === undefined ? "is not set" : JSON.stringify(ruleText)} is not a rule revsync can read: map it in service.allocation_rules of revsync.yaml (to transaction_price, range_top, range_bottom or mid_point)`,
    );
    return out;
  }
  out.rule_reads = kind;
  out.basis = kind === "transaction_price" ? s : kind === "range_top" ? range.high : kind === "range_bottom" ? range.low : ssp;
  if (out.basis < 0) {
    notes.why.push(`${l.id}: its basis ${out.basis} is negative`);
    out.basis = null;
  }
  return out;
}

/** The line's policy, its SSP and its range, set on `out`: a value row's SSP is per unit, and so is a
 *  formula's unless it reads the line's totals (docs/decisions.md, "An SSP per unit or for the line"):
 *  only an SSP per unit is extended by the quantity. Undefined (why not, or an error, in `notes`) when
 *  one of them cannot be told. */
function priceLine(
  l: ContractLine,
  c: Contract,
  ordered: readonly PolicyModel[],
  out: AllocatedLine,
  notes: Notes,
): { policy: PolicyModel; ssp: number; range: { low: number; high: number } } | undefined {
  const { match, policy, found } = matchDetail(ordered, l.input, c);
  out.policy = match.policy;
  if (match.error) {
    notes.errors.push(`${l.id}: ${match.error}`);
    return undefined;
  }
  if (!policy || !found || match.ssp === null) {
    notes.why.push(
      `${l.id}: ${match.policy === null ? "no policy's conditions all hold" : `${match.policy} gives no SSP${match.note ? ` (${match.note})` : ""}`}`,
    );
    return undefined;
  }
  const scope = policy.method === "formula" ? sspScope(policy.expression) : ({ per: "unit" } as const);
  if ("error" in scope) {
    notes.errors.push(
      `${l.id}: ${policy.name}'s expression ${JSON.stringify(policy.expression)} gives an SSP neither per unit nor for the whole line (${scope.error}), so what to allocate by cannot be told`,
    );
    return undefined;
  }
  const qty = scope.per === "line" ? 1 : quantityOf(l.input);
  const ssp = round6(match.ssp * qty);
  out.ssp = ssp;
  const r = unitRange(policy, found, match.ssp);
  if (!r) {
    notes.why.push(
      policy.notShown?.length
        ? `${l.id}: the service does not show ${policy.notShown.join("/")} of policy ${policy.name} (${policy.notComparable?.length ? `null, or ${policy.notComparable.join("/")} as a number a double cannot hold exactly` : "null"}), which the line's range needs${found.row ? " (its value row gives no below_mid_point / above_mid_point)" : ""}`
        : `${l.id}: ${policy.name} gives no range (no below_mid_point / above_mid_point in its value row, and floor_percentage / ceiling_percentage not known)`,
    );
    return undefined;
  }
  out.range = { low: round6(r.low * qty), high: round6(r.high * qty) };
  return { policy, ssp, range: out.range };
}

/** Whether an allocation meets the contract's expect.allocation: each named line within 0.01; the
 *  differences in words. */
export function expectDiffers(c: Contract, a: Allocation): string[] {
  const out: string[] = [];
  if (!c.expect) return out;
  for (const [id, want] of Object.entries(c.expect.allocation)) {
    const got = a.lines.find((l) => l.id === id)?.allocated ?? null;
    if (got === null) out.push(`${id}: expected ${money(want)}, got no allocation`);
    else if (Math.abs(got - want) > 0.01 + 1e-9) out.push(`${id}: expected ${money(want)}, got ${money(got)}`);
  }
  return out;
}

/** An amount as 1,234.50 (two decimals, grouped), the way amounts of an allocation are shown. */
export function money(v: number | null): string {
  if (v === null) return "-";
  const neg = v < 0;
  const [whole, frac] = Math.abs(v).toFixed(2).split(".") as [string, string];
  return `${neg ? "-" : ""}${whole.replace(/\B(?=(\d{3})+$)/g, ",")}.${frac}`;
}

/** A signed shift: +1,234.50, -12.00, 0.00. */
export const signed = (v: number): string => (v > 0 ? `+${money(v)}` : money(v));
