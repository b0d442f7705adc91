import { ApiError } from "../errors.js";
import type {
  ApprovalActionResult,
  ErrorTransactionFilter,
  ErrorTransactionsList,
  PendingApprovals,
  SspCreateBody,
  SspEnvelope,
  SspList,
  SspUpdateResult,
  TenantConfigurationList,
  TenantConfigurationUpdateBody,
  UpdateResult,
} from "../schema/generated/api.js";
import type { ApiCore } from "./core.js";

const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const SSP = "/apis/policy-sets/v1/policy/ssp";
const enc = encodeURIComponent;

// 4.1, 4.2
export const tenantConfigurations = {
  list: (core: ApiCore): Promise<TenantConfigurationList> => core.call({ method: "GET", path: TC, kind: "read", schema: "TenantConfigurationList" }),
  update: (core: ApiCore, id: string, body: TenantConfigurationUpdateBody, ifMatch?: string): Promise<UpdateResult> =>
    core.call({ method: "PATCH", path: `${TC}/${enc(id)}`, body, kind: "write", schema: "UpdateResult", ifMatch }),
};

export type CreateOutcome = { result: SspUpdateResult; recovered: boolean };

// 4.3 to 4.7
export const ssp = {
  list: (core: ApiCore): Promise<SspList> => core.call({ method: "GET", path: SSP, kind: "read", schema: "SspList" }),

  /** One policy with its batches; undefined when the service does not know it (404). */
  async get(core: ApiCore, policyName: string): Promise<SspEnvelope | undefined> {
    try {
      const list = await core.call<SspList>({ method: "GET", path: SSP, query: { policy_name: policyName }, kind: "read", schema: "SspList" });
      return list.find((e) => e.compliance_name === policyName) ?? list[0];
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return undefined;
      throw e;
    }
  },

  /** One batch with its SSP values. */
  async batch(core: ApiCore, policyName: string, batchName: string): Promise<SspEnvelope | undefined> {
    try {
      const list = await core.call<SspList>({
        method: "GET",
        path: SSP,
        query: { policy_name: policyName, batch_name: batchName },
        kind: "read",
        schema: "SspList",
      });
      return list[0];
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return undefined;
      throw e;
    }
  },

  /** POST is never retried blindly: after an unknown outcome the policy is looked up, and the create
   *  is sent again only when the service does not have it. */
  async create(core: ApiCore, body: SspCreateBody, maxAttempts = 4): Promise<CreateOutcome> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await core.call<SspUpdateResult>({ method: "POST", path: SSP, body, kind: "once", schema: "SspUpdateResult" });
        return { result, recovered: false };
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        const unknown = e.outcomeUnknown || e.status === 0;
        if (e.status === 429 && attempt < maxAttempts) continue;
        if (!unknown && !(e.status === 409 && attempt > 1)) throw e;
        const live = await ssp.get(core, body.compliance_name);
        if (live) {
          return {
            result: {
              compliance_id: live.compliance_id ?? "",
              compliance_details: [
                { error: [], message: "created (confirmed by reading it back after the answer was lost)", unique_key: body.compliance_name },
              ],
              error: [],
            },
            recovered: true,
          };
        }
        if (attempt >= maxAttempts) throw e;
      }
    }
  },

  /** Review or approve. A retry of a PATCH that the service had already applied answers 409; then the
   *  batch is read back, and reaching the target status counts as done. */
  async batchAction(core: ApiCore, action: "review" | "approve", policy: { id: string; name: string }, batchName: string): Promise<SspUpdateResult> {
    try {
      return await core.call<SspUpdateResult>({
        method: "PATCH",
        path: `${SSP}/${action}/${enc(policy.id)}/${enc(batchName)}`,
        kind: "write",
        schema: "SspUpdateResult",
      });
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 409) throw e;
      const live = await ssp.batch(core, policy.name, batchName);
      const status = live?.compliance_spec?.[0]?.status;
      const target = action === "review" ? ["reviewed", "approved"] : ["approved"];
      if (status && target.includes(status)) {
        return { compliance_id: policy.id, compliance_details: [{ error: [], message: `already ${status}`, unique_key: policy.name }], error: [] };
      }
      throw e;
    }
  },

  download: (core: ApiCore, fileId: string): Promise<Buffer> =>
    core.call({ method: "GET", path: `${SSP}/download/${enc(fileId)}`, kind: "read", schema: "bytes" }),

  /** batch_name goes as a query parameter: design.md 5. */
  template: (core: ApiCore, batchName?: string): Promise<Buffer> =>
    core.call({ method: "GET", path: `${SSP}/template`, query: { batch_name: batchName }, kind: "read", schema: "bytes" }),
};

// 4.8, 4.9
export const approvals = {
  pending: (core: ApiCore): Promise<PendingApprovals> =>
    core.call({ method: "GET", path: "/apis/oingest-approval/v1/pending", kind: "read", schema: "PendingApprovals" }),

  /** Not retried blindly; after an unknown outcome, the pending list tells which ids were processed. */
  async act(core: ApiCore, action: string, comments: string, ids: string[]): Promise<ApprovalActionResult & { recovered?: boolean }> {
    try {
      return await core.call<ApprovalActionResult>({
        method: "POST",
        path: "/apis/oingest-approval/v1/action",
        body: { action, comments, approval_ids: ids },
        kind: "once",
        schema: "ApprovalActionResult",
      });
    } catch (e) {
      if (!(e instanceof ApiError) || !(e.outcomeUnknown || e.status === 0)) throw e;
      const still = new Set((await approvals.pending(core)).records?.map((r) => r.approval_id));
      const left = ids.filter((id) => still.has(id));
      if (left.length === ids.length) throw e;
      return {
        message: `answer lost; ${ids.length - left.length} of ${ids.length} no longer pending`,
        processed_count: ids.length - left.length,
        status: left.length ? "partial" : "success",
        recovered: true,
      };
    }
  },
};

// 4.10
export const errorTransactions = {
  list: (core: ApiCore, filter: ErrorTransactionFilter): Promise<ErrorTransactionsList> =>
    core.call({ method: "POST", path: "/apis/errortransactions/v1/", body: filter, kind: "read", schema: "ErrorTransactionsList" }),
};
