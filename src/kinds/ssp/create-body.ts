/** The body of an SSP create: the item git's policy file asks for, with the defaults of the fields it
 *  leaves out (docs/decisions.md, "Defaults of a new SSP policy"), and the batches that go up with it. */
import type { DesiredBatch, DesiredSsp } from "./files.js";
import type { SspCreateBatch, SspCreateBody, SspCreateItem } from "../../schema/generated/api.js";

/** Fields a policy file must set for plan to create the policy (the create body requires them; the
 *  others default). */
export const CREATE_REQUIRED = ["method", "active", "hierarchy_no", "data_identifiers", "floor_percentage", "ceiling_percentage"] as const;

/** The create body's item for a policy of git, or the fields it lacks for one. */
export function createItem(d: DesiredSsp): { item: SspCreateItem; missing: [] } | { item?: undefined; missing: string[] } {
  const s = d.spec;
  const missing = CREATE_REQUIRED.filter((k) => s[k] === undefined);
  if (
    s.active === undefined ||
    s.hierarchy_no === undefined ||
    !s.data_identifiers ||
    s.floor_percentage === undefined ||
    s.ceiling_percentage === undefined ||
    missing.length
  ) {
    return { missing };
  }
  const item: SspCreateItem = {
    active: s.active,
    can_delete: s.can_delete ?? true,
    ceiling_percentage: s.ceiling_percentage,
    data_identifiers: s.data_identifiers,
    entity_type: s.entity_type ?? "policy",
    expression: s.expression ?? "",
    floor_percentage: s.floor_percentage,
    hierarchy_no: s.hierarchy_no,
    is_user_defined: s.is_user_defined ?? true,
    method: s.method === "formula" ? "formula" : "upload",
    name: d.name,
    transaction_above_range: s.transaction_above_range ?? "",
    transaction_below_range: s.transaction_below_range ?? "",
    transaction_mid_range: s.transaction_mid_range ?? "",
    type: s.type ?? "SSP",
    when: s.when ?? [],
  };
  return { item, missing: [] };
}

function uploadBatch(b: DesiredBatch): SspCreateBatch | undefined {
  if (!b.values) return undefined;
  const values = b.values.rows.map(({ line: _line, ...v }) => v);
  const starts = values.map((v) => v.effective_start_date).sort();
  const ends = values.map((v) => v.effective_end_date).sort();
  return {
    batch_name: b.name,
    file_name: b.values.file,
    effective_start_date: b.effective_start_date ?? starts[0] ?? "",
    effective_end_date: b.effective_end_date ?? ends[ends.length - 1] ?? "",
    ssp_values: values,
  };
}

/** The create request for a policy of git: its item, with the batches of an upload policy that name a
 *  values file (they are created with it, in `file uploaded`). */
export function createBody(d: DesiredSsp, item: SspCreateItem): { body: SspCreateBody; uploads: SspCreateBatch[] } {
  const uploads = d.spec.method === "upload" ? d.batches.map(uploadBatch).filter((b): b is SspCreateBatch => !!b) : [];
  const body: SspCreateBody = {
    compliance_name: d.name,
    unique_key: d.name,
    format_type: "JSON",
    compliance_spec: [uploads.length ? { ...item, batches: uploads } : item],
  };
  return { body, uploads };
}
