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

/** Every string value of a documented field that is not in its list, anywhere in an answer. */
export function unknownValues(body: unknown): UnknownValue[] {
  const found: UnknownValue[] = [];
  const walk = (node: unknown, pointer: string, policy: string | undefined): void => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, `${pointer}/${i}`, policy));
      return;
    }
    if (!node || typeof node !== "object") return;
    const o = node as Record<string, unknown>;
    const name = typeof o.compliance_name === "string" ? o.compliance_name : policy;
    for (const [k, v] of Object.entries(o)) {
      // Own fields of the list only: an answer's "constructor" or "toString" is no list.
      const list = Object.hasOwn(DOCUMENTED_VALUES, k) ? DOCUMENTED_VALUES[k] : undefined;
      if (list && typeof v === "string" && !list.includes(v)) found.push({ field: k, value: v, pointer: `${pointer}/${k}`, policy: name });
      else if (v && typeof v === "object") walk(v, `${pointer}/${k}`, name);
    }
  };
  walk(body, "", undefined);
  return found;
}
