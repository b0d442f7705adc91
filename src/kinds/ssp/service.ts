/** The SSP policies' requests of the service's interface (spec 4.3 to 4.7): the list, one policy, one
 *  batch with its values, the create, a batch's review and approve (each sent by the write unit,
 *  src/api/write.ts), the download of a batch's file and the template; every answer's batch statuses in
 *  revsync's words. */
import type { ApiCore, RequestSpec } from "../../api/core.js";
import { statusFromService } from "../../api/service-choices.js";
import { ApiError } from "../../errors.js";
import type { SspCreateBody, SspEnvelope, SspItem, SspList } from "../../schema/generated/api.js";
import { batchNameOf } from "../../shared/address.js";

const SSP = "/apis/policy-sets/v1/policy/ssp";
const enc = encodeURIComponent;

/** An SSP answer with its batch statuses in revsync's words (the tenant's texts, revsync.yaml
 *  service.batch_status): every reader, plan, drift, export and apply's checks, sees one vocabulary. */
function statusesFromService(core: ApiCore, list: SspList): SspList {
  const choices = core.service;
  const item = (i: SspItem): void => {
    if (typeof i.status === "string") i.status = statusFromService(choices, i.status);
    for (const b of i.batches ?? []) if (b && typeof b === "object") item(b as SspItem);
  };
  for (const env of list) for (const i of env.compliance_spec ?? []) item(i);
  return list;
}

// SSP policies: list, one policy, one batch, create, review and approve, download, template.
export const ssp = {
  list: async (core: ApiCore): Promise<SspList> => statusesFromService(core, await core.call({ method: "GET", path: SSP, kind: "read", schema: "SspList" })),

  /** One policy with its batches, matched by exact name (the first, where the service holds the name more
   *  than once); undefined when the service has no policy of exactly that name (a 404, or an answer
   *  holding only other policies). */
  async get(core: ApiCore, policyName: string): Promise<SspEnvelope | undefined> {
    return (await ssp.getAll(core, policyName))[0];
  },

  /** Every policy of exactly that name, with its batches: one, unless the service holds the name more than
   *  once (the spec promises no unique names); none for a 404 or an answer of other policies only. */
  async getAll(core: ApiCore, policyName: string): Promise<SspEnvelope[]> {
    try {
      const list = await core.call<SspList>({
        method: "GET",
        path: SSP,
        query: { policy_name: policyName },
        kind: "read",
        schema: "SspList",
        about: `SSP policy ${JSON.stringify(policyName)}`,
      });
      return statusesFromService(core, list).filter((e) => e.compliance_name === policyName);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return [];
      throw e;
    }
  },

  /** One batch with its SSP values: the item of exactly that batch name, in an envelope of exactly that
   *  policy name when the answer names its policy. */
  async batch(core: ApiCore, policyName: string, batchName: string): Promise<SspItem | undefined> {
    try {
      const list = await core.call<SspList>({
        method: "GET",
        path: SSP,
        query: { policy_name: policyName, batch_name: batchName },
        kind: "read",
        schema: "SspList",
        about: `SSP policy ${JSON.stringify(policyName)}, batch ${JSON.stringify(batchName)}`,
      });
      for (const env of statusesFromService(core, list)) {
        if (env.compliance_name !== undefined && env.compliance_name !== policyName) continue;
        const item = (env.compliance_spec ?? []).find((i) => batchNameOf(i) === batchName && (i.policy_name === undefined || i.policy_name === policyName));
        if (item) return item;
      }
      return undefined;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return undefined;
      throw e;
    }
  },

  /** The POST that creates a policy (sent by the write unit, src/api/write.ts). */
  createRequest: (body: SspCreateBody): RequestSpec => ({
    method: "POST",
    path: SSP,
    body,
    bodySchema: "SspCreateBody",
    kind: "write-once",
    schema: "SspUpdateResult",
    emptyOk: true,
  }),

  /** The PATCH that reviews or approves a batch (sent by the write unit). */
  batchActionRequest: (action: "review" | "approve", policyId: string, batchName: string, ifMatch?: string): RequestSpec => ({
    method: "PATCH",
    path: `${SSP}/${action}/${enc(policyId)}/${enc(batchName)}`,
    kind: "write",
    schema: "SspUpdateResult",
    ...(ifMatch ? { ifMatch } : {}),
    emptyOk: true,
  }),

  download: (core: ApiCore, fileId: string): Promise<Buffer> =>
    core.call({ method: "GET", path: `${SSP}/download/${enc(fileId)}`, kind: "read", schema: "bytes" }),

  /** The template; batch_name goes where the tenant takes it (service.template_batch_name: a query
   *  parameter by default, or a segment of the path; docs/decisions.md, "The service's own choices"). */
  template: (core: ApiCore, batchName?: string): Promise<Buffer> =>
    batchName !== undefined && core.service.templateBatchName === "path"
      ? core.call({ method: "GET", path: `${SSP}/template/${enc(batchName)}`, kind: "read", schema: "bytes" })
      : core.call({ method: "GET", path: `${SSP}/template`, query: { batch_name: batchName }, kind: "read", schema: "bytes" }),
};
