/** A small, safe arithmetic evaluator for formula SSP policies: numbers, field names, + - * /,
 *  parentheses and a leading minus. No eval, no Function, no property access: a name is looked up only
 *  among the line's own numeric fields, so `constructor` or `__proto__` are unknown names like any other.
 *  Anything outside this grammar (a call, a dot, a comma, a string) is an error naming it.
 *  Whatever the input, the only thing it throws is an ExprError: nesting is bounded (MAX_DEPTH), so a
 *  long run of parentheses or minus signs cannot exhaust the stack.
 *
 *  The same language, one level up, is a condition (a guardrail's `when`, parseCondition): a formula on
 *  either side of a comparison (== != < <= > >=), joined by and, or, not, with text in double quotes,
 *  true, false, null, and names with dots (after.carves_allocation). A formula stays a formula: none of
 *  this is read in one. */
import { readNumber } from "../number.js";

export type Expr = { k: "num"; v: number } | { k: "name"; n: string; at?: number } | { k: "neg"; e: Expr } | { k: "bin"; op: BinOp; l: Expr; r: Expr };

export type CmpOp = "==" | "!=" | "<" | "<=" | ">" | ">=";

/** A condition: the formula's nodes over conditions, and a literal (text, true, false, null), a
 *  comparison, and/or, and not. A formula's tree is a condition's too. */
export type Condition =
  | { k: "num"; v: number }
  | { k: "name"; n: string; at?: number }
  | { k: "neg"; e: Condition }
  | { k: "bin"; op: BinOp; l: Condition; r: Condition }
  | { k: "lit"; v: string | boolean | null }
  | { k: "cmp"; op: CmpOp; l: Condition; r: Condition }
  | { k: "logic"; op: "and" | "or"; l: Condition; r: Condition }
  | { k: "not"; e: Condition };

/** What a condition's names and parts are: a number, text, true or false, or nothing known (null). */
export type Value = number | string | boolean | null;

export class ExprError extends Error {
  /** Where in the expression the problem is (0-based), when it is at one place. */
  readonly index: number | undefined;
  constructor(message: string, index?: number) {
    super(message);
    this.name = "ExprError";
    this.index = index;
  }
}

/** How deep an expression may nest (parentheses, minus signs, and chains of operators): far beyond any
 *  real formula, far below what the stack holds. */
export const MAX_DEPTH = 200;

type Token =
  { t: "num"; v: number; at: number } | { t: "name"; v: string; at: number } | { t: "op"; v: string; at: number } | { t: "str"; v: string; at: number };

const SPACE = /\s+/y;
const NUMBER = /\d+(\.\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
/** A condition's name may have dots: before.carves_allocation. */
const DOTTED = /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/y;
/** A condition's comparison operators, the two-character ones first. */
const COMPARISON = /==|!=|<=|>=|<|>/y;
/** Text in double quotes, with \" and \\ inside. */
const TEXT = /"((?:[^"\\\n]|\\["\\])*)"/y;

/** The grammar a text is read in: a formula, or a condition (a formula compared, and/or/not). */
type Mode = "formula" | "condition";

function match(re: RegExp, src: string, i: number): string | undefined {
  re.lastIndex = i;
  return re.exec(src)?.[0];
}

/** A condition's own tokens at `i`: text in quotes, a comparison; undefined when none starts there. */
function conditionToken(src: string, i: number): Token | undefined {
  if (src[i] === '"') {
    TEXT.lastIndex = i;
    const m = TEXT.exec(src);
    if (!m) throw new ExprError(`the text in quotes at column ${i + 1} is not closed (a quote inside is written \\")`, i);
    return { t: "str", v: (m[1] ?? "").replace(/\\(["\\])/g, "$1"), at: i };
  }
  const op = match(COMPARISON, src, i);
  return op ? { t: "op", v: op, at: i } : undefined;
}

function tokenize(src: string, mode: Mode = "formula"): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const space = match(SPACE, src, i);
    if (space) {
      i += space.length;
      continue;
    }
    const num = match(NUMBER, src, i);
    if (num) {
      // The one number rule: a number a double cannot hold exactly is refused, never rounded.
      const read = readNumber(num);
      if (!read.ok) throw new ExprError(`${num} at column ${i + 1}: ${read.problem}`, i);
      out.push({ t: "num", v: read.value, at: i });
      i += num.length;
      continue;
    }
    const name = match(mode === "condition" ? DOTTED : NAME, src, i);
    if (name) {
      out.push({ t: "name", v: name, at: i });
      i += name.length;
      continue;
    }
    const own = mode === "condition" ? conditionToken(src, i) : undefined;
    if (own) {
      out.push(own);
      i = own.t === "str" ? TEXT.lastIndex : i + String(own.v).length;
      continue;
    }
    const c = String.fromCodePoint(src.codePointAt(i) ?? 0);
    if ("+-*/()".includes(c)) {
      out.push({ t: "op", v: c, at: i });
      i++;
      continue;
    }
    throw new ExprError(
      mode === "condition"
        ? `${JSON.stringify(c)} at column ${i + 1} is not allowed in a condition (numbers, names, "text", + - * /, == != < <= > >=, and, or, not, parentheses)`
        : `${JSON.stringify(c)} at column ${i + 1} is not allowed in an expression (numbers, field names, + - * / and parentheses only)`,
      i,
    );
  }
  return out;
}

const cache = new Map<string, Expr>();

/** Parses an expression (cached: a policy's expression is evaluated for many lines). */
export function parseExpr(src: string): Expr {
  const hit = cache.get(src);
  if (hit) return hit;
  // A formula's parse makes only a formula's nodes.
  const tree = new ExprParser(src, tokenize(src), "formula").whole() as Expr;
  if (cache.size < 10_000) cache.set(src, tree);
  return tree;
}

const conditions = new Map<string, Condition>();

/** Parses a condition (cached: a guardrail's `when` is evaluated for every change). */
export function parseCondition(src: string): Condition {
  const hit = conditions.get(src);
  if (hit) return hit;
  const tree = new ExprParser(src, tokenize(src, "condition"), "condition").whole();
  if (conditions.size < 10_000) conditions.set(src, tree);
  return tree;
}

type BinOp = "+" | "-" | "*" | "/";

/** Words a condition reads as its own, never as names. */
const KEYWORDS = new Set(["and", "or", "not", "true", "false", "null"]);

/** A recursive-descent parser of the grammar: expr = term (+|- term)*, term = factor (*|/ factor)*,
 *  factor = number | name | -factor | (expr). Every level of nesting, and every operator of a chain (a
 *  tree as deep as the chain is long), counts towards MAX_DEPTH. */
class ExprParser {
  private pos = 0;
  private depth = 0;
  constructor(
    private readonly src: string,
    private readonly tokens: Token[],
    private readonly mode: Mode,
  ) {}

  /** The whole expression: nothing may follow it. */
  whole(): Condition {
    const tree = this.mode === "condition" ? this.or() : this.expr();
    const rest = this.peek();
    if (rest) this.fail(`${JSON.stringify(String(rest.v))} at column ${rest.at + 1} is not allowed here`, rest.at);
    return tree;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private fail(what: string, at?: number): never {
    throw new ExprError(what, at);
  }

  private deeper(at: number): void {
    if (++this.depth > MAX_DEPTH)
      this.fail(`the expression nests too deeply at column ${at + 1} (more than ${MAX_DEPTH} levels of parentheses, signs or operators)`, at);
  }

  /** A condition's or, and, not and comparison, each binding tighter than the one before. */
  private or(): Condition {
    return this.logic("or", () => this.and());
  }

  private and(): Condition {
    return this.logic("and", () => this.not());
  }

  private logic(op: "and" | "or", operand: () => Condition): Condition {
    const start = this.depth;
    let left = operand();
    for (let t = this.peek(); t?.t === "name" && t.v === op; t = this.peek()) {
      this.pos++;
      this.deeper(t.at);
      left = { k: "logic", op, l: left, r: operand() };
    }
    this.depth = start;
    return left;
  }

  private not(): Condition {
    const t = this.peek();
    if (t?.t !== "name" || t.v !== "not") return this.comparison();
    this.pos++;
    const start = this.depth;
    this.deeper(t.at);
    const e: Condition = { k: "not", e: this.not() };
    this.depth = start;
    return e;
  }

  private comparison(): Condition {
    const left = this.expr();
    const t = this.peek();
    if (t?.t !== "op" || !["==", "!=", "<", "<=", ">", ">="].includes(t.v)) return left;
    this.pos++;
    const right = this.expr();
    const again = this.peek();
    if (again?.t === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(again.v))
      this.fail(`${again.v} at column ${again.at + 1}: comparisons do not chain; join them with and`, again.at);
    return { k: "cmp", op: t.v as CmpOp, l: left, r: right };
  }

  private expr(): Condition {
    return this.chain(["+", "-"], () => this.term());
  }

  private term(): Condition {
    return this.chain(["*", "/"], () => this.factor());
  }

  /** Operands joined by these operators, left to right. */
  private chain(ops: readonly BinOp[], operand: () => Condition): Condition {
    const start = this.depth;
    let left = operand();
    for (let t = this.peek(); t && t.t === "op" && (ops as readonly string[]).includes(t.v); t = this.peek()) {
      this.pos++;
      this.deeper(t.at);
      left = { k: "bin", op: t.v as BinOp, l: left, r: operand() };
    }
    this.depth = start;
    return left;
  }

  /** A name, or in a condition one of its words (true, false, null; and, or, not stand elsewhere). */
  private named(t: { v: string; at: number }): Condition {
    const next = this.peek();
    if (next?.t === "op" && next.v === "(") this.fail(`${t.v}( at column ${t.at + 1}: function calls are not allowed`, t.at);
    if (this.mode === "condition" && KEYWORDS.has(t.v)) {
      if (t.v === "true" || t.v === "false") return { k: "lit", v: t.v === "true" };
      if (t.v === "null") return { k: "lit", v: null };
      this.fail(`${t.v} at column ${t.at + 1} is not where a number, a name or a text can be`, t.at);
    }
    return { k: "name", n: t.v, at: t.at };
  }

  private factor(): Condition {
    const t = this.peek();
    if (!t) return this.fail("the expression ends too early", this.src.length);
    this.pos++;
    if (t.t === "num") return { k: "num", v: t.v };
    if (t.t === "str") return { k: "lit", v: t.v };
    if (t.t === "name") return this.named(t);
    const start = this.depth;
    if (t.v === "-") {
      this.deeper(t.at);
      const e: Condition = { k: "neg", e: this.factor() };
      this.depth = start;
      return e;
    }
    if (t.v === "(") {
      this.deeper(t.at);
      const inner = this.mode === "condition" ? this.or() : this.expr();
      const close = this.peek();
      if (!close || close.t !== "op" || close.v !== ")") this.fail(`a parenthesis opened at column ${t.at + 1} is not closed`, t.at);
      this.pos++;
      this.depth = start;
      return inner;
    }
    return this.fail(`${JSON.stringify(String(t.v))} at column ${t.at + 1} is not where a number or a field name can be`, t.at);
  }
}

/** The value of an expression over the line's numeric fields: a finite number, or an ExprError. */
export function evaluate(e: Expr, fields: ReadonlyMap<string, number>): number {
  const v = value(e, fields);
  if (!Number.isFinite(v)) throw new ExprError(`the result is not a finite number (${v})`);
  return v;
}

function value(e: Expr, fields: ReadonlyMap<string, number>): number {
  switch (e.k) {
    case "num":
      return e.v;
    case "name": {
      const v = fields.get(e.n);
      if (v === undefined) throw new ExprError(`unknown name ${JSON.stringify(e.n)}: the line has no numeric field of that name`);
      return v;
    }
    case "neg":
      return -value(e.e, fields);
    case "bin": {
      const l = value(e.l, fields);
      const r = value(e.r, fields);
      if (e.op === "/" && r === 0) throw new ExprError("division by zero");
      return e.op === "+" ? l + r : e.op === "-" ? l - r : e.op === "*" ? l * r : l / r;
    }
  }
}

/** Parses and evaluates: a finite number or an ExprError, whatever `src` holds. */
export function evaluateText(src: string, fields: ReadonlyMap<string, number>): number {
  return evaluate(parseExpr(src), fields);
}

/** Whether a formula's SSP is per unit or for the whole line, told by the fields it reads (docs/decisions.md,
 *  "An SSP per unit or for the line"): each field counts the order's units. A `unit_…` field is per unit
 *  (0), a `total_…` field and `order_quantity` are for the line (1); numbers and other fields (a rate, a
 *  percent) count none of their own and take the unit of what they stand beside. Products add the counts,
 *  quotients subtract them, sums and differences need one count on both sides. The formula's SSP is per
 *  unit at 0 (or with no count at all, a constant), for the line at 1; anything else (unit_list_price +
 *  total_list_price, a square of the quantity) cannot be told, and says why. */
export type SspScope = { per: "unit" | "line" } | { error: string };

type Count = number | "free";

export function sspScope(src: string): SspScope {
  let tree: Expr;
  try {
    tree = parseExpr(src);
  } catch (e) {
    if (e instanceof ExprError) return { error: e.message };
    throw e;
  }
  const mixed: string[] = [];
  const count = (e: Expr): Count => {
    switch (e.k) {
      case "num":
        return "free";
      case "name":
        return e.n === "order_quantity" || e.n.startsWith("total_") ? 1 : e.n.startsWith("unit_") ? 0 : "free";
      case "neg":
        return count(e.e);
      case "bin": {
        const l = count(e.l);
        const r = count(e.r);
        if (e.op === "+" || e.op === "-") {
          if (l === "free") return r;
          if (r === "free" || l === r) return l;
          mixed.push(`${show(e.l)} ${e.op} ${show(e.r)}`);
          return l;
        }
        if (l === "free" && r === "free") return "free";
        const a = l === "free" ? 0 : l;
        const b = r === "free" ? 0 : r;
        return e.op === "*" ? a + b : a - b;
      }
    }
  };
  const c = count(tree);
  if (mixed.length) return { error: `${mixed[0]} adds an amount per unit to one for the whole line` };
  if (c === "free" || c === 0) return { per: "unit" };
  if (c === 1) return { per: "line" };
  return { error: `it counts the line's quantity ${c > 1 ? `${c} times` : "negatively"} (per unit and for the line are the two an SSP can be)` };
}

/** An expression written back, for messages. */
function show(e: Expr): string {
  switch (e.k) {
    case "num":
      return String(e.v);
    case "name":
      return e.n;
    case "neg":
      return `-${show(e.e)}`;
    case "bin":
      return `(${show(e.l)} ${e.op} ${show(e.r)})`;
  }
}

const kindOf = (v: Value): string => (v === null ? "null" : typeof v === "string" ? "text" : typeof v === "boolean" ? "true or false" : "a number");

/** A number operand of + - * /, or null where a side is null (nothing known: the result is not known
 *  either); anything else is an error in words. */
function arithmetic(op: BinOp, l: Value, r: Value): number | null {
  if (l === null || r === null) return null;
  if (typeof l !== "number" || typeof r !== "number") throw new ExprError(`${op} needs numbers on both sides, got ${kindOf(l)} and ${kindOf(r)}`);
  if (op === "/" && r === 0) throw new ExprError("division by zero");
  const v = op === "+" ? l + r : op === "-" ? l - r : op === "*" ? l * r : l / r;
  if (!Number.isFinite(v)) throw new ExprError(`the result is not a finite number (${v})`);
  return v;
}

/** A comparison: == and != of two values of one kind (null equals null alone); an order (< <= > >=) of
 *  two numbers or two texts, false where a side is null. Two values of different kinds are an error: a
 *  condition that compares a number with a text says so rather than hold never. */
function compare(op: CmpOp, l: Value, r: Value): boolean {
  if (l === null || r === null) return op === "==" ? l === r : op === "!=" ? l !== r : false;
  if (typeof l !== typeof r) throw new ExprError(`${op} compares ${kindOf(l)} with ${kindOf(r)}`);
  if (op === "==") return l === r;
  if (op === "!=") return l !== r;
  if (typeof l === "boolean") throw new ExprError(`${op} cannot order true and false`);
  return op === "<" ? l < r : op === "<=" ? l <= r : op === ">" ? l > r : l >= (r as number | string);
}

/** true or false, for and, or and not: anything else is an error. */
function truth(v: Value, what: string): boolean {
  if (typeof v !== "boolean") throw new ExprError(`${what} needs true or false, got ${v === null ? "null" : kindOf(v)}`);
  return v;
}

/** The value of a condition, `lookup` giving each name's (undefined: no such name, an error). and and
 *  or read their right side only when the left does not decide. Whatever the input, it throws only
 *  ExprError. */
export function evaluateCondition(c: Condition, lookup: (name: string) => Value | undefined): Value {
  switch (c.k) {
    case "num":
      return c.v;
    case "lit":
      return c.v;
    case "name": {
      const v = lookup(c.n);
      if (v === undefined) throw new ExprError(`unknown name ${JSON.stringify(c.n)}`);
      return v;
    }
    case "neg": {
      const v = evaluateCondition(c.e, lookup);
      if (v === null) return null;
      if (typeof v !== "number") throw new ExprError(`a minus sign needs a number, got ${kindOf(v)}`);
      return -v;
    }
    case "bin":
      return arithmetic(c.op, evaluateCondition(c.l, lookup), evaluateCondition(c.r, lookup));
    case "cmp":
      return compare(c.op, evaluateCondition(c.l, lookup), evaluateCondition(c.r, lookup));
    case "not":
      return !truth(evaluateCondition(c.e, lookup), "not");
    case "logic": {
      const l = truth(evaluateCondition(c.l, lookup), c.op);
      if (c.op === "and" ? !l : l) return l;
      return truth(evaluateCondition(c.r, lookup), c.op);
    }
  }
}

/** Whether a condition holds: it must give true or false. */
export function conditionHolds(c: Condition, lookup: (name: string) => Value | undefined): boolean {
  const v = evaluateCondition(c, lookup);
  if (typeof v !== "boolean") throw new ExprError(`the condition gives ${v === null ? "null" : kindOf(v)}, not true or false: compare it (> 20, == true)`);
  return v;
}

/** Every name a condition reads, with where it stands (0-based), in order. */
export function namesOf(c: Condition): { name: string; at: number }[] {
  switch (c.k) {
    case "num":
    case "lit":
      return [];
    case "name":
      return [{ name: c.n, at: c.at ?? 0 }];
    case "neg":
    case "not":
      return namesOf(c.e);
    default:
      return [...namesOf(c.l), ...namesOf(c.r)];
  }
}

/** What a name is, as far as a check before any value is known can tell: "any" where it can be any kind. */
export type StaticKind = "number" | "text" | "boolean" | "any";

/** What a condition's checked kind comes to, and the mistakes a check before evaluation finds: numbers
 *  and texts mixed in arithmetic or a comparison, and/or/not over what is not true or false. Names are
 *  given their kinds by `kinds` (unknown names are the caller's to report). */
export function conditionKind(c: Condition, kinds: (name: string) => StaticKind, problems: string[] = []): StaticKind | "null" {
  const both = (l: StaticKind | "null", r: StaticKind | "null"): boolean => l === "any" || r === "any" || l === "null" || r === "null" || l === r;
  switch (c.k) {
    case "num":
      return "number";
    case "lit":
      return c.v === null ? "null" : typeof c.v === "string" ? "text" : "boolean";
    case "name":
      return kinds(c.n);
    case "neg":
    case "bin": {
      const sides = c.k === "neg" ? [conditionKind(c.e, kinds, problems)] : [conditionKind(c.l, kinds, problems), conditionKind(c.r, kinds, problems)];
      for (const s of sides)
        if (s !== "number" && s !== "any" && s !== "null") problems.push(`${c.k === "neg" ? "a minus sign" : c.op} needs numbers, got ${s}`);
      return "number";
    }
    case "cmp": {
      const l = conditionKind(c.l, kinds, problems);
      const r = conditionKind(c.r, kinds, problems);
      if (!both(l, r)) problems.push(`${c.op} compares ${l} with ${r}`);
      else if (c.op !== "==" && c.op !== "!=" && (l === "boolean" || r === "boolean")) problems.push(`${c.op} cannot order true and false`);
      return "boolean";
    }
    case "not":
    case "logic": {
      const sides = c.k === "not" ? [conditionKind(c.e, kinds, problems)] : [conditionKind(c.l, kinds, problems), conditionKind(c.r, kinds, problems)];
      for (const s of sides) if (s !== "boolean" && s !== "any") problems.push(`${c.k === "not" ? "not" : c.op} needs true or false, got ${s}`);
      return "boolean";
    }
  }
}
