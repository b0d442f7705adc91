/** The value lists the service's interface documents for fields of its answers. They describe, they do not fence: an
 *  answer with another value is read as it is, and revsync warns once per value (liberal reads). What
 *  revsync writes is still checked against them (schemas/api.schema.json, the policy file schemas). */
export const DOCUMENTED_VALUES: Readonly<Record<string, readonly string[]>> = {
  // fields of the tenant-wide settings
  distribution_method: ["Days in Calendar Period", "Prorate"],
  account_segment_delimiter: ["-", ",", "|", "~", "#", ":", ".", "$"],
  // an SSP policy item
  method: ["upload", "formula", "calculator"],
  operator: [
    "equality",
    "inequality",
    "greater than",
    "less than",
    "greater or equal",
    "less or equal",
    ">",
    "<",
    ">=",
    "<=",
    "in",
    "not in",
    "contains",
    "not contains",
    "starts with",
    "ends with",
    "null",
    "not null",
  ],
  // SSP values
  value_type: ["Amount", "Percent"],
  // error transactions
  error_warning_type: ["remediable", "discarded"],
};

export interface UnknownValue {
  field: string;
  value: string;
  /** JSON pointer into the answer, and the name of the nearest policy envelope. */
  pointer: string;
  policy?: string;
}

/** Every string value of a documented field that is not in its list, anywhere in an answer. Every
 *  answer is walked whole: the pointer is the path of keys, made into text only for a value found. */
export function unknownValues(body: unknown): UnknownValue[] {
  const found: UnknownValue[] = [];
  const path: (string | number)[] = [];
  const pointer = (k: string): string => `${path.map((p) => `/${p}`).join("")}/${k}`;
  const walk = (node: object, policy: string | undefined): void => {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (!v || typeof v !== "object") continue;
        path.push(i);
        walk(v, policy);
        path.pop();
      }
      return;
    }
    const o = node as Record<string, unknown>;
    const name = typeof o.compliance_name === "string" ? o.compliance_name : policy;
    for (const k of Object.keys(o)) {
      const v = o[k];
      // Own fields of the list only: an answer's "constructor" or "toString" is no list.
      const list = typeof v === "string" && Object.hasOwn(DOCUMENTED_VALUES, k) ? DOCUMENTED_VALUES[k] : undefined;
      if (list) {
        if (!list.includes(v as string)) found.push({ field: k, value: v as string, pointer: pointer(k), policy: name });
      } else if (v && typeof v === "object") {
        path.push(k);
        walk(v, name);
        path.pop();
      }
    }
  };
  if (body && typeof body === "object") walk(body, undefined);
  return found;
}
