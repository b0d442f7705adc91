/** A small, safe arithmetic evaluator for formula SSP policies: numbers, field names, + - * /,
 *  parentheses and a leading minus. No eval, no Function, no property access: a name is looked up only
 *  among the line's own numeric fields, so `constructor` or `__proto__` are unknown names like any other.
 *  Anything outside this grammar (a call, a dot, a comma, a string) is an error naming it.
 *  Whatever the input, the only thing it throws is an ExprError: nesting is bounded (MAX_DEPTH), so a
 *  long run of parentheses or minus signs cannot exhaust the stack. */
import { readNumber } from "../number.js";

export type Expr = { k: "num"; v: number } | { k: "name"; n: string } | { k: "neg"; e: Expr } | { k: "bin"; op: "+" | "-" | "*" | "/"; l: Expr; r: Expr };

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

type Token = { t: "num"; v: number; at: number } | { t: "name"; v: string; at: number } | { t: "op"; v: string; at: number };

const SPACE = /\s+/y;
const NUMBER = /\d+(\.\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;

function match(re: RegExp, src: string, i: number): string | undefined {
  re.lastIndex = i;
  return re.exec(src)?.[0];
}

function tokenize(src: string): Token[] {
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
    const name = match(NAME, src, i);
    if (name) {
      out.push({ t: "name", v: name, at: i });
      i += name.length;
      continue;
    }
    const c = String.fromCodePoint(src.codePointAt(i) ?? 0);
    if ("+-*/()".includes(c)) {
      out.push({ t: "op", v: c, at: i });
      i++;
      continue;
    }
    throw new ExprError(`${JSON.stringify(c)} at column ${i + 1} is not allowed in an expression (numbers, field names, + - * / and parentheses only)`, i);
  }
  return out;
}

const cache = new Map<string, Expr>();

/** Parses an expression (cached: a policy's expression is evaluated for many lines). */
export function parseExpr(src: string): Expr {
  const hit = cache.get(src);
  if (hit) return hit;
  const tree = new ExprParser(src, tokenize(src)).whole();
  if (cache.size < 10_000) cache.set(src, tree);
  return tree;
}

type BinOp = "+" | "-" | "*" | "/";

/** A recursive-descent parser of the grammar: expr = term (+|- term)*, term = factor (*|/ factor)*,
 *  factor = number | name | -factor | (expr). Every level of nesting, and every operator of a chain (a
 *  tree as deep as the chain is long), counts towards MAX_DEPTH. */
class ExprParser {
  private pos = 0;
  private depth = 0;
  constructor(
    private readonly src: string,
    private readonly tokens: Token[],
  ) {}

  /** The whole expression: nothing may follow it. */
  whole(): Expr {
    const tree = this.expr();
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

  private expr(): Expr {
    return this.chain(["+", "-"], () => this.term());
  }

  private term(): Expr {
    return this.chain(["*", "/"], () => this.factor());
  }

  /** Operands joined by these operators, left to right. */
  private chain(ops: readonly BinOp[], operand: () => Expr): Expr {
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

  private factor(): Expr {
    const t = this.peek();
    if (!t) return this.fail("the expression ends too early", this.src.length);
    this.pos++;
    if (t.t === "num") return { k: "num", v: t.v };
    if (t.t === "name") {
      const next = this.peek();
      if (next?.t === "op" && next.v === "(") this.fail(`${t.v}( at column ${t.at + 1}: function calls are not allowed`, t.at);
      return { k: "name", n: t.v };
    }
    const start = this.depth;
    if (t.v === "-") {
      this.deeper(t.at);
      const e: Expr = { k: "neg", e: this.factor() };
      this.depth = start;
      return e;
    }
    if (t.v === "(") {
      this.deeper(t.at);
      const inner = this.expr();
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
