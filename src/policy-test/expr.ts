/** A small, safe arithmetic evaluator for formula SSP policies: numbers, field names, + - * /,
 *  parentheses and a leading minus. No eval, no Function, no property access: a name is looked up only
 *  among the line's own numeric fields, so `constructor` or `__proto__` are unknown names like any other.
 *  Anything outside this grammar (a call, a dot, a comma, a string) is an error naming it. */
export type Expr = { k: "num"; v: number } | { k: "name"; n: string } | { k: "neg"; e: Expr } | { k: "bin"; op: "+" | "-" | "*" | "/"; l: Expr; r: Expr };

export class ExprError extends Error {}

type Token = { t: "num"; v: number; at: number } | { t: "name"; v: string; at: number } | { t: "op"; v: string; at: number };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const num = /^\d+(\.\d+)?/.exec(src.slice(i));
    if (num) {
      out.push({ t: "num", v: Number(num[0]), at: i });
      i += num[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (name) {
      out.push({ t: "name", v: name[0], at: i });
      i += name[0].length;
      continue;
    }
    if ("+-*/()".includes(c)) {
      out.push({ t: "op", v: c, at: i });
      i++;
      continue;
    }
    throw new ExprError(`${JSON.stringify(c)} at column ${i + 1} is not allowed in an expression (numbers, field names, + - * / and parentheses only)`);
  }
  return out;
}

const cache = new Map<string, Expr>();

/** Parses an expression (cached: a policy's expression is evaluated for many lines). */
export function parseExpr(src: string): Expr {
  const hit = cache.get(src);
  if (hit) return hit;
  const tokens = tokenize(src);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const fail = (what: string): never => {
    throw new ExprError(what);
  };
  const expr = (): Expr => {
    let left = term();
    for (let t = peek(); t && t.t === "op" && (t.v === "+" || t.v === "-"); t = peek()) {
      pos++;
      left = { k: "bin", op: t.v, l: left, r: term() };
    }
    return left;
  };
  const term = (): Expr => {
    let left = factor();
    for (let t = peek(); t && t.t === "op" && (t.v === "*" || t.v === "/"); t = peek()) {
      pos++;
      left = { k: "bin", op: t.v, l: left, r: factor() };
    }
    return left;
  };
  const factor = (): Expr => {
    const t = peek();
    if (!t) return fail("the expression ends too early");
    pos++;
    if (t.t === "num") return { k: "num", v: t.v };
    if (t.t === "name") {
      const next = peek();
      if (next?.t === "op" && next.v === "(") fail(`${t.v}( at column ${t.at + 1}: function calls are not allowed`);
      return { k: "name", n: t.v };
    }
    if (t.v === "-") return { k: "neg", e: factor() };
    if (t.v === "(") {
      const inner = expr();
      const close = peek();
      if (!close || close.t !== "op" || close.v !== ")") fail(`a parenthesis opened at column ${t.at + 1} is not closed`);
      pos++;
      return inner;
    }
    return fail(`${JSON.stringify(String(t.v))} at column ${t.at + 1} is not where a number or a field name can be`);
  };
  const tree = expr();
  const rest = peek();
  if (rest) fail(`${JSON.stringify(String(rest.v))} at column ${rest.at + 1} is not allowed here`);
  if (cache.size < 10_000) cache.set(src, tree);
  return tree;
}

/** The value of an expression over the line's numeric fields. */
export function evaluate(e: Expr, fields: ReadonlyMap<string, number>): number {
  switch (e.k) {
    case "num":
      return e.v;
    case "name": {
      const v = fields.get(e.n);
      if (v === undefined) throw new ExprError(`unknown name ${JSON.stringify(e.n)}: the line has no numeric field of that name`);
      return v;
    }
    case "neg":
      return -evaluate(e.e, fields);
    case "bin": {
      const l = evaluate(e.l, fields);
      const r = evaluate(e.r, fields);
      if (e.op === "/" && r === 0) throw new ExprError("division by zero");
      return e.op === "+" ? l + r : e.op === "-" ? l - r : e.op === "*" ? l * r : l / r;
    }
  }
}
