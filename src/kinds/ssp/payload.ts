/** What apply sends for an SSP policy's changes (a create, a batch's review or approve), and the check
 *  that a payload sends exactly what its entry shows. */
import { sameJson } from "../../canonical-json.js";
import type { SspCreateBatch, SspCreateBody, SspCreateItem } from "../../schema/generated/api.js";
import type { Change, Payload } from "../../shared/entries.js";
import { sspAddress } from "./read.js";
import { valuesChecksum } from "./values.js";

/** A create: the body, and the place in the hierarchy it takes. */
export interface CreatePayload extends Payload {
  kind: "create";
  body: SspCreateBody;
  hierarchy_no: number;
}

/** A review or approve of a batch. */
export interface BatchPayload extends Payload {
  kind: "batch";
  compliance_id: string | null;
  policy: string;
  batch: string;
  /** The batch's file as the plan saw it, and a checksum of its values (valuesChecksum): apply moves the
   *  batch only while both still hold. Null for a batch the plan's own create uploads. */
  file_id?: string | null;
  values_checksum?: string | null;
}

/** The schemas of a saved plan's SSP payloads (src/plan/schema.ts): a create and a batch's review or approve. */
export const SSP_PAYLOADS = {
  create: {
    actions: ["create"],
    schema: {
      type: "object",
      required: ["kind", "body", "hierarchy_no"],
      additionalProperties: false,
      properties: { kind: { const: "create" }, body: { $ref: "#/definitions/SspCreateBody" }, hierarchy_no: { type: "integer" } },
    },
  },
  batch: {
    actions: ["review", "approve"],
    schema: {
      type: "object",
      required: ["kind", "compliance_id", "policy", "batch"],
      additionalProperties: false,
      properties: {
        kind: { const: "batch" },
        compliance_id: { type: ["string", "null"] },
        policy: { type: "string", minLength: 1 },
        batch: { type: "string", minLength: 1 },
        file_id: {
          type: ["string", "null"],
          description:
            "The batch's file id as the plan saw it: apply moves the batch only while it still holds (null: the plan's own create uploads the batch, or the service shows none)",
        },
        values_checksum: {
          type: ["string", "null"],
          pattern: "^sha256:[0-9a-f]{64}$",
          description: "A checksum of the batch's values as the plan saw them: apply moves the batch only while the service still holds them",
        },
      },
    },
  },
} as const;

export const createPayload = (c: Pick<Change, "payload">): CreatePayload | undefined =>
  c.payload?.kind === "create" ? (c.payload as CreatePayload) : undefined;
export const batchPayload = (c: Pick<Change, "payload">): BatchPayload | undefined => (c.payload?.kind === "batch" ? (c.payload as BatchPayload) : undefined);

/** A create's item and the batches it uploads. */
export const createdItem = (p: CreatePayload): SspCreateItem & { batches?: SspCreateBatch[] } =>
  (p.body.compliance_spec[0] ?? {}) as SspCreateItem & { batches?: SspCreateBatch[] };

/** What a create's entry lists of each batch it uploads: its name, file and number of rows, and the
 *  checksum of its values. */
const shownBatch = (b: SspCreateBatch): Record<string, unknown> => ({
  batch_name: b.batch_name,
  status: "file uploaded",
  file_name: b.file_name,
  rows: b.ssp_values.length,
  values_checksum: valuesChecksum(b.ssp_values),
});

/** A create's payload against its entry: the policy it names, its fields, and each batch it uploads (a
 *  batch whose values or file differ, or one the entry does not list, is refused: a plan of an older
 *  revsync lists none); a batch this plan also reviews or approves uploads the values shown there. */
function createProblems(c: Change, p: CreatePayload, changes: readonly Change[]): string[] {
  const out: string[] = [];
  const { batches, ...item } = createdItem(p);
  const name = p.body.compliance_name;
  if (c.address !== sspAddress.policy(name) || p.body.unique_key !== name || p.body.compliance_spec.length !== 1) out.push("the payload names another policy");
  const { batches: shownBatches, ...shownItem } = (c.after ?? {}) as Record<string, unknown> & { batches?: unknown };
  if (!sameJson(item, shownItem) || item.hierarchy_no !== p.hierarchy_no) out.push("the payload's policy is not the reviewed one");
  for (const d of c.diff) {
    const shownValue = d.path === "batches" ? shownBatches : (item as Record<string, unknown>)[d.path];
    if (!sameJson(shownValue, d.after)) out.push(`the payload's ${d.path} is not the reviewed value`);
  }
  if (!sameJson(shownBatches ?? [], (batches ?? []).map(shownBatch))) out.push("the payload's batches are not the ones the plan shows");
  for (const b of batches ?? []) {
    const sum = changes.map(batchPayload).find((x) => x?.policy === name && x.batch === b.batch_name)?.values_checksum;
    if (sum && valuesChecksum(b.ssp_values) !== sum) out.push(`the values of the batch ${b.batch_name} are not the ones the plan showed`);
  }
  return out;
}

/** An SSP change's payload against its entry, in words (none when it sends what it shows). */
export function sspPayloadProblems(c: Change, changes: readonly Change[]): string[] {
  const want = c.action === "create" ? "create" : "batch";
  if (c.payload?.kind !== want) return [`a ${c.payload?.kind} payload`];
  if (c.action === "create") return createProblems(c, c.payload as CreatePayload, changes);
  const p = c.payload as BatchPayload;
  return c.address === sspAddress.batch(p.policy, p.batch) ? [] : [`the payload names ${JSON.stringify(`${p.policy}/${p.batch}`)}`];
}
