import { createHash } from "node:crypto";

/** Canonical JSON, the text an evidence record's hash is taken of: object keys sorted by UTF-16 code
 *  units, arrays in their order, no whitespace, strings and numbers as JSON.stringify writes them, keys
 *  whose value is undefined left out. For the records revsync writes (no lone surrogates, no non-finite
 *  numbers) this is the JSON Canonicalization Scheme of RFC 8785, so any JCS library recomputes it. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`canonical JSON has no form for ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (typeof value === "object") {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
  }
  throw new TypeError(`canonical JSON has no form for a ${typeof value}`);
}

/** A record's hash: "sha256:" and the hex sha256 of the UTF-8 canonical JSON of the record without its
 *  own `hash` field (`prev` is inside it, which chains the records). */
export function recordHash(record: Record<string, unknown>): string {
  const { hash: _own, ...content } = record;
  return `sha256:${createHash("sha256").update(canonicalJson(content), "utf8").digest("hex")}`;
}
