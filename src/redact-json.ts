/** JSON data with every text in it (each string value and each key) passed through `redact`, and nothing
 *  else touched: numbers, true, false, null and the structure stay as they are. Secrets are taken out of
 *  structured output this way, field by field before it is serialized, never by replacing text in the
 *  serialized form, where a secret that is also a JSON word (`true`, `null`) or a key would break it. */
export function redactJson<T>(value: T, redact: (text: string) => string): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redact(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        // defineProperty, not assignment: a key "__proto__" stays a key (as JSON.parse makes it).
        Object.defineProperty(out, redact(k), { value: walk(x), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
