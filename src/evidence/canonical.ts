import { createHash } from "node:crypto";

/** Canonical JSON, the text an evidence record's hash is taken of: object keys sorted by UTF-16 code
 *  units, arrays in their order, no whitespace, strings and numbers as JSON.stringify writes them, keys
 *  whose value is undefined left out. For the records revsync writes (no lone surrogates, no non-finite
 *  numbers) this is the JSON Canonicalization Scheme of RFC 8785, so any JCS library recomputes it. */
export function canonicalJson(value: unknown): string {
  // A copy with every object's keys in order, written by the engine's own JSON.stringify: a record of 200
  // changes is some 20,000 values. An object with a key that looks like an array index cannot hold its
  // keys in that order (the engine lists those first), so such a value is written key by key instead.
  try {
    return JSON.stringify(ordered(value));
  } catch (e) {
    if (e !== INDEX_KEY) throw e;
    return written(value);
  }
}

const INDEX_KEY = new Error("an array-index key");
const INDEX = /^(?:0|[1-9]\d*)$/;

function ordered(v: unknown): unknown {
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new TypeError(`canonical JSON has no form for ${v}`);
    return v;
  }
  if (Array.isArray(v)) return v.map((x: unknown) => (x === undefined ? null : ordered(x)));
  if (typeof v !== "object") throw new TypeError(`canonical JSON has no form for a ${typeof v}`);
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) {
    if (INDEX.test(k)) throw INDEX_KEY;
    const x = o[k];
    if (x !== undefined) out[k] = ordered(x);
  }
  return out;
}

/** The same text, written value by value. */
function written(value: unknown): string {
  let out = "";
  const write = (v: unknown): void => {
    if (v === null || typeof v === "boolean" || typeof v === "string") {
      out += JSON.stringify(v);
    } else if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new TypeError(`canonical JSON has no form for ${v}`);
      out += JSON.stringify(v);
    } else if (Array.isArray(v)) {
      out += "[";
      for (let i = 0; i < v.length; i++) {
        if (i) out += ",";
        const x: unknown = v[i];
        if (x === undefined) out += "null";
        else write(x);
      }
      out += "]";
    } else if (typeof v === "object") {
      const o = v as Record<string, unknown>;
      out += "{";
      let first = true;
      for (const k of Object.keys(o).sort()) {
        const x = o[k];
        if (x === undefined) continue;
        if (!first) out += ",";
        first = false;
        out += JSON.stringify(k);
        out += ":";
        write(x);
      }
      out += "}";
    } else {
      throw new TypeError(`canonical JSON has no form for a ${typeof v}`);
    }
  };
  write(value);
  return out;
}

/** A record's hash: "sha256:" and the hex sha256 of the UTF-8 canonical JSON of the record without its
 *  own `hash` field (`prev` is inside it, which chains the records). */
export function recordHash(record: Record<string, unknown>): string {
  const { hash: _own, ...content } = record;
  return `sha256:${createHash("sha256").update(canonicalJson(content), "utf8").digest("hex")}`;
}
