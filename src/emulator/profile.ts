/** Answer profiles of the emulator. `default` answers the way revsync's own schemas describe the
 *  service; `literal` answers the way a literal reading of the spec allows (the brief's rule: where
 *  our emulator and the spec differ, the emulator grows a profile and the tests run against both):
 *  - null for every field the spec types as null in responses (2.2, 2.3);
 *  - condition operators in their symbol forms where the spec gives them (> < >= <=);
 *  - a refused write answered 200 with an `error` array instead of a 4xx;
 *  - undocumented extra fields in answers;
 *  - lists (envelopes, batches, conditions, data identifiers, records) in another order. */
export type Profile = "default" | "literal";

export const PROFILES: Profile[] = ["default", "literal"];

const NULL_FIELDS = new Set([
  // a tenant configuration
  "account_segment_delimiter",
  "contract_asset_journal_method",
  "contract_asset_segment",
  "cost_practical_expedient",
  "fx_adjustment_method",
  // an SSP policy item
  "ceiling_percentage",
  "floor_percentage",
  "compliance_percent",
  "ssp_calculation_method",
  "ssp_range_calc_type",
]);

/** Fields typed null only in an SSP policy item or batch (an object with entity_type or batch_name); a
 *  pending approval types them as string, so they keep their values there. */
const SSP_NULL_FIELDS = new Set(["file_id", "file_name"]);

const SYMBOLS: Record<string, string> = { "greater than": ">", "less than": "<", "greater or equal": ">=", "less or equal": "<=" };

/** The lists whose order the literal profile turns around. */
const REORDERED = new Set(["(root)", "compliance_spec", "batches", "when", "data_identifiers", "records", "ssp_values"]);

/** A JSON answer as the literal profile gives it; the stored state is untouched. */
export function literalAnswer(body: unknown): unknown {
  const walk = (node: unknown, key: string): unknown => {
    if (Array.isArray(node)) {
      const items = node.map((v) => walk(v, key));
      return REORDERED.has(key) ? items.reverse() : items;
    }
    if (!node || typeof node !== "object") return node;
    const out: Record<string, unknown> = {};
    const sspItem = "entity_type" in node || "batch_name" in node;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (NULL_FIELDS.has(k) || (sspItem && SSP_NULL_FIELDS.has(k))) out[k] = null;
      else if (k === "operator" && typeof v === "string") out[k] = SYMBOLS[v] ?? v;
      else out[k] = walk(v, k);
    }
    // Undocumented fields a real service may add.
    if ("compliance_name" in out || "compliance_id" in out) out.x_region = "eu-central";
    if ("created_at" in out) out.x_revision = 3;
    return out;
  };
  return walk(body, "(root)");
}

/** A refused write as the literal profile answers it: 200 with the error array. */
export function literalRefusal(message: string, errors: { field?: string; message: string }[]): object {
  return { compliance_id: "", compliance_details: [{ error: errors, message, unique_key: "" }], error: errors, message };
}
