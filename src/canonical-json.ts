import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { UserError } from "./errors.js";

/** The one canonical JSON of revsync: the JSON Canonicalization Scheme of RFC 8785 (object keys sorted
 *  by UTF-16 code units at every depth, arrays in their order, no whitespace, strings and numbers as
 *  ECMAScript writes them, members whose value is undefined left out), written by the `canonicalize`
 *  library, so that any JCS implementation computes the same text and the same hashes. The plan's
 *  checksum, the evidence record's hash and every "is this the same data" comparison use it; none has a
 *  copy of its own. A key named `__proto__` is a key like any other (JSON.parse makes it one): its
 *  content is in the text. What RFC 8785 cannot write (NaN, Infinity, a string with a lone surrogate) is
 *  an error that names where it is, never a text another implementation would not write. */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (e) {
    throw new UserError(`canonical JSON (RFC 8785) has no form for ${unwritable(value, "") ?? (e as Error).message}`);
  }
  if (text === undefined) throw new UserError("canonical JSON (RFC 8785) has no form for undefined");
  return text;
}

/** "sha256:" and the hex sha256 of the UTF-8 canonical JSON of a value. */
export function canonicalHash(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value), "utf8").digest("hex")}`;
}

/** Whether two values are the same data, whatever order their keys were written in. */
export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What RFC 8785 cannot write, and its JSON pointer: said only when canonicalizing failed. */
function unwritable(v: unknown, at: string): string | undefined {
  const where = at || "/";
  if (typeof v === "number" && !Number.isFinite(v)) return `the number ${v} at ${where}`;
  if (typeof v === "string" && LONE_SURROGATE.test(v)) return `a text with a lone surrogate (half of a UTF-16 pair, not Unicode text) at ${where}`;
  if (v === null || typeof v !== "object") return undefined;
  for (const [k, x] of Object.entries(v)) {
    const key = k.replace(/~/g, "~0").replace(/\//g, "~1");
    if (LONE_SURROGATE.test(k)) return `a key with a lone surrogate (half of a UTF-16 pair, not Unicode text) at ${at}/${key}`;
    const found = unwritable(x, `${at}/${key}`);
    if (found) return found;
  }
  return undefined;
}
