/** The one number rule: what revsync reads as a number, wherever the number comes from (a policy
 *  file's YAML, a values file's cell, a policy test's line, a formula, the service's answers), and
 *  when the number read is the number written (docs/architecture.md, "Where outside text enters";
 *  docs/decisions.md, "One number rule").
 *
 *  A number is exact when the double revsync computes with is the number written: a whole number up to
 *  2^53 - 1 in magnitude (beyond it, two whole numbers read as one double), or a fraction whose digits
 *  the double keeps (it writes back as the same number: at most 15 significant digits always do). Any
 *  other number is not exact: on git's side it is an error at its file and line, on the service's side
 *  it is not comparable (never equal to anything, and said so). Pure. */

/** The largest whole number a double holds with every whole number below it: 2^53 - 1. */
export const MAX_EXACT_WHOLE = Number.MAX_SAFE_INTEGER;

/** How revsync reads a number written as text (a CSV cell, a test line's quoted value, an expression,
 *  a variable's text): plain decimal notation, digits with an optional decimal point and a leading
 *  minus. No exponent ("1e3"), no thousands separator ("1,000"), no "+", no hex: text that could be a
 *  code or a locale's number is not guessed at. */
const DECIMAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** A number literal in any notation revsync meets: JSON's and YAML's decimals with an optional
 *  exponent, YAML's 0x / 0o whole numbers, and YAML's .inf / .nan. */
const LITERAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
const RADIX = /^([+-]?)0([xo])([0-9a-fA-F]+)$/;

/** A decimal's value as digits and a power of ten, without leading or trailing zeros (zero: ""). */
function decimalOf(literal: string): { neg: boolean; digits: string; exp: number } | undefined {
  const m = LITERAL.exec(literal);
  if (!m) return undefined;
  const [, sign = "", whole = "", frac = "", e = "0"] = m;
  if (whole === "" && frac === "") return undefined;
  let digits = `${whole}${frac}`.replace(/^0+/, "");
  let exp = Number(e) - frac.length;
  const trimmed = digits.replace(/0+$/, "");
  exp += digits.length - trimmed.length;
  digits = trimmed;
  return { neg: sign === "-", digits, exp: digits === "" ? 0 : exp };
}

export type Exactness = { exact: true } | { exact: false; why: string };

/** Whether a number literal reads as exactly the number written, and if not, why (in words). */
export function exactness(literal: string): Exactness {
  const t = literal.trim();
  if (/^[+-]?\.(inf|nan)$/i.test(t)) return { exact: false, why: `${t} is not a finite number` };
  const radix = RADIX.exec(t);
  if (radix) {
    const n = BigInt(`0${radix[2]}${radix[3]}`);
    return n <= BigInt(MAX_EXACT_WHOLE) ? { exact: true } : { exact: false, why: beyond(t, `${radix[1] === "-" ? "-" : ""}${Number(n)}`) };
  }
  const d = decimalOf(t);
  if (!d) return { exact: false, why: `${JSON.stringify(literal)} is not a number` };
  if (d.digits === "") return { exact: true };
  if (d.exp >= 0) {
    // Whole: within 2^53 - 1, every whole number is its own double.
    if (d.digits.length + d.exp <= 16 && BigInt(d.digits) * 10n ** BigInt(d.exp) <= BigInt(MAX_EXACT_WHOLE)) return { exact: true };
    return { exact: false, why: beyond(t, readsAs(t)) };
  }
  // A fraction: the double must write back as the same number.
  const n = Number(`${d.digits}e${d.exp}`);
  const back = Number.isFinite(n) && n !== 0 ? decimalOf(String(n)) : undefined;
  if (back && back.digits === d.digits && back.exp === d.exp) return { exact: true };
  if (n === 0) return { exact: false, why: `${t} is too close to 0 for a double: it would be read as 0` };
  return { exact: false, why: `${t} has more significant digits than a double keeps: it would be read as ${readsAs(t)}` };
}

export const isExact = (literal: string): boolean => exactness(literal).exact;

const readsAs = (t: string): string => String(Number(t.replace(/^\+/, "")));

const beyond = (t: string, read: string): string =>
  `${t} is beyond ${MAX_EXACT_WHOLE} (2^53 - 1), the largest whole number a double holds exactly: it would be read as ${read}`;

/** A number read from text, or why not: text that is not a number, a number that is not exact, or (for
 *  readWhole) a fraction. */
export type NumberRead = { ok: true; value: number } | { ok: false; kind: "not a number" | "not exact" | "not whole"; problem: string };

/** A number written as text, by the rule above: plain decimal notation, exact. `unsigned`: a field that
 *  is 0 or more (a quantity, a price), whose advice says so rather than offer a leading minus. */
export function readNumber(text: string, opts: { unsigned?: boolean } = {}): NumberRead {
  const t = text.trim();
  if (!DECIMAL.test(t)) {
    const how = opts.unsigned ? "digits with an optional decimal point, 0 or more" : "digits with an optional decimal point and a leading minus";
    return { ok: false, kind: "not a number", problem: `${JSON.stringify(text)} is not a number: write ${how} (no exponent, no thousands separator)` };
  }
  const e = exactness(t);
  return e.exact ? { ok: true, value: Number(t) } : { ok: false, kind: "not exact", problem: e.why };
}

/** A whole number written as text (a values file's points), by the rule above; 105.0 is 105. */
export function readWhole(text: string): NumberRead {
  const r = readNumber(text);
  if (r.ok && !Number.isInteger(r.value)) return { ok: false, kind: "not whole", problem: `${JSON.stringify(text)} is not a whole number` };
  return r;
}

/** Whether a value is a number by the rule: a finite number, or text that reads as one. */
export function isNumber(v: unknown): v is number | string {
  if (typeof v === "number") return Number.isFinite(v);
  return typeof v === "string" && readNumber(v).ok;
}

/** The number a value reads as (a number as it is; text by the rule), or undefined. */
export function numberOf(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v !== "string") return undefined;
  const r = readNumber(v);
  return r.ok ? r.value : undefined;
}

/** A number of the service's answer that is not exact: kept as the service wrote it, and never equal to
 *  anything (it is an object, so no comparison of values takes it for a number). It writes as its text,
 *  in JSON and in words. */
export class InexactNumber {
  constructor(readonly text: string) {}
  toJSON(): string {
    return this.text;
  }
  toString(): string {
    return this.text;
  }
}

export const isInexact = (v: unknown): v is InexactNumber => v instanceof InexactNumber;

/** Words for a value the service answered with a number that is not exact. */
export const notComparableWords = (v: InexactNumber): string => `${v.text}, a number a double cannot hold exactly (${exactnessWhy(v.text)})`;

function exactnessWhy(text: string): string {
  const e = exactness(text);
  return e.exact ? "exact" : e.why;
}

/** Where a JSON text may hold a number that is not exact: a number literal (it starts the text, or
 *  follows a colon, a bracket or a comma, and white space) of 16 digits and points or more, or with an
 *  exponent. Most answers have none, and are parsed as they are. It may also match inside a string (the
 *  tokens are then read one by one); it never misses such a literal. Looking for the digits alone
 *  matched nearly every answer: a UUID, a hash or a token in any string holds a digit, an e and a digit. */
const MAYBE_INEXACT = /(?:^|[:,[])\s*-?(?:[\d.]{16}|[\d.]+[eE])/;
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g;

/** A JSON answer: the value JSON.parse gives (what its shape is checked against), and `marked()`: the
 *  same value with an InexactNumber, holding the text, in place of each number literal that is not
 *  exact (used after the check: the shape is the service's, the value is not comparable). Throws as
 *  JSON.parse does. */
export function parseJson(text: string): { value: unknown; inexact: number; marked: () => unknown } {
  const value: unknown = JSON.parse(text);
  const none = { value, inexact: 0, marked: () => value };
  if (!MAYBE_INEXACT.test(text)) return none;
  let found = false;
  for (const m of text.matchAll(TOKENS)) {
    if (!m[0].startsWith('"') && !isExact(m[0])) {
      found = true;
      break;
    }
  }
  if (!found) return none;
  // Rare: parse again, keeping each inexact literal's place.
  const marks: Mark[] = [];
  const root = parseMarking(text, marks);
  return {
    value: root[0],
    inexact: marks.length,
    marked: () => {
      for (const m of marks) (m.holder as Record<string | number, unknown>)[m.key] = new InexactNumber(m.text);
      return root[0];
    },
  };
}

type Mark = { holder: Record<string, unknown> | unknown[]; key: string | number; text: string };

type Holder = Record<string, unknown> | unknown[];

/** JSON.parse's value (an own "__proto__" key included, the last of repeated keys kept), recording where
 *  each number literal that is not exact stands. Only for an answer that holds one. */
function parseMarking(text: string, marks: Mark[]): unknown[] {
  const parser = new MarkingParser(text, marks);
  const root: unknown[] = [];
  parser.value(root, 0);
  parser.space();
  if (parser.i !== text.length) parser.fail();
  return root;
}

/** A JSON reader, one value at a time from position `i`, each value put into its holder. */
class MarkingParser {
  i = 0;
  constructor(
    private readonly text: string,
    private readonly marks: Mark[],
  ) {}

  space(): void {
    while (this.i < this.text.length && " \t\n\r".includes(this.text[this.i] as string)) this.i++;
  }

  fail(): never {
    throw new SyntaxError(`unexpected JSON at position ${this.i}`);
  }

  /** The value at `i`, put at `key` of `holder`. */
  value(holder: Holder, key: string | number): void {
    this.space();
    const c = this.text[this.i];
    if (c === "{") return this.object(holder, key);
    if (c === "[") return this.array(holder, key);
    if (c === '"') return put(holder, key, this.string());
    this.literal(holder, key);
  }

  private object(holder: Holder, key: string | number): void {
    this.i++;
    const o: Record<string, unknown> = {};
    put(holder, key, o);
    this.space();
    if (this.text[this.i] === "}") {
      this.i++;
      return;
    }
    for (;;) {
      this.space();
      const k = this.string();
      this.space();
      if (this.text[this.i++] !== ":") this.fail();
      this.value(o, k);
      if (this.closes("}")) return;
    }
  }

  private array(holder: Holder, key: string | number): void {
    this.i++;
    const a: unknown[] = [];
    put(holder, key, a);
    this.space();
    if (this.text[this.i] === "]") {
      this.i++;
      return;
    }
    for (let n = 0; ; n++) {
      this.value(a, n);
      if (this.closes("]")) return;
    }
  }

  /** After an item: the end of its object or array (true), or a comma before the next. */
  private closes(end: "}" | "]"): boolean {
    this.space();
    const sep = this.text[this.i++];
    if (sep === end) return true;
    if (sep !== ",") this.fail();
    return false;
  }

  private string(): string {
    const m = /"(?:[^"\\]|\\.)*"/y;
    m.lastIndex = this.i;
    const hit = m.exec(this.text) ?? this.fail();
    this.i += hit[0].length;
    return JSON.parse(hit[0]) as string;
  }

  /** A number, true, false or null; a number that is not exact is marked where it stands. */
  private literal(holder: Holder, key: string | number): void {
    const lit = /-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null/y;
    lit.lastIndex = this.i;
    const hit = lit.exec(this.text) ?? this.fail();
    this.i += hit[0].length;
    const v: unknown = JSON.parse(hit[0]);
    put(holder, key, v);
    if (typeof v === "number" && !isExact(hit[0])) this.marks.push({ holder, key, text: hit[0] });
  }
}

/** A value into an array, or as an own property of an object (a "__proto__" key too). */
function put(holder: Holder, key: string | number, v: unknown): void {
  if (Array.isArray(holder)) holder[key as number] = v;
  else Object.defineProperty(holder, key, { value: v, writable: true, enumerable: true, configurable: true });
}

/** A number of the service's answer where revsync keeps one (an epoch a plan binds to): the number, or
 *  null when the answer gave none or one that is not comparable (which then equals nothing a later read
 *  gives). */
export const numberOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Data that may hold the service's values as plain JSON data: each InexactNumber as its text, what
 *  JSON writes for it, so that a plan or report reads back as it was made (and its checksum with it). */
export function plainData<T>(v: T): T {
  if (isInexact(v)) return v.text as T;
  if (Array.isArray(v)) {
    const items = v.map(plainData);
    return (items.some((y, i) => y !== v[i]) ? items : v) as T;
  }
  if (v === null || typeof v !== "object") return v;
  let copy: Record<string, unknown> | undefined;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const y = plainData(x);
    if (y === x) continue;
    copy ??= { ...(v as Record<string, unknown>) };
    Object.defineProperty(copy, k, { value: y, writable: true, enumerable: true, configurable: true });
  }
  return (copy ?? v) as T;
}
