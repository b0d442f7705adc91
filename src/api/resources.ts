import { ApiError } from "../errors.js";
import type {
  ApprovalActionResult,
  ErrorTransactionFilter,
  ErrorTransactionsList,
  PendingApprovals,
  SspCreateBody,
  SspEnvelope,
  SspItem,
  SspList,
} from "../schema/generated/api.js";
import { batchNameOf } from "../shared/address.js";
import type { ApiCore, RequestSpec } from "./core.js";
import { runWrite, type WriteOutcome } from "./write.js";
import { statusFromService } from "./service-choices.js";

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

/** A write's outcome as the older callers take it: the result when it landed, an ApiError thrown when not. */
export async function landedOrThrow<T>(o: Promise<WriteOutcome<T>>): Promise<T | undefined> {
  const out = await o;
  if (out.kind === "done" || out.kind === "confirmed") return out.result;
  if (out.kind === "already") return undefined;
  if (out.kind === "blocked" || out.kind === "overwritten") throw new ApiError({ method: "", path: "", status: 0, message: out.reason });
  throw out.error;
}

// Manual-upload approvals: the pending list, the approve or reject action.
export const approvals = {
  pending: (core: ApiCore): Promise<PendingApprovals> =>
    core.call({ method: "GET", path: "/apis/oingest-approval/v1/pending", kind: "read", schema: "PendingApprovals" }),

  /** Sent again only when the pending list says that none of the ids was processed (the create rule).
   *  After an unknown outcome with some ids processed, the result is revsync's reading of the pending
   *  list: "no longer pending", with the status the list gives, never "approved" or "rejected" unless the
   *  service says so (the list shows pending uploads only: someone else may have acted on them), and
   *  `processed_count` counts only the uploads the list shows in the action's status. */
  async act(core: ApiCore, action: string, comments: string, ids: string[]): Promise<ApprovalActionResult & { recovered?: boolean }> {
    const spec: RequestSpec = {
      method: "POST",
      path: "/apis/oingest-approval/v1/action",
      body: { action, comments, approval_ids: ids },
      bodySchema: "ApprovalActionBody",
      kind: "write-once",
      schema: "ApprovalActionResult",
      emptyOk: true,
    };
    let why = "";
    let guarded = 0;
    const o = await runWrite<ApprovalActionResult, null>(core, {
      // The first send: the command checked the ids against the pending list right before asking. Each
      // resend: they must all be pending still (someone else may have acted on one meanwhile). None
      // pending: the action's effect, which the write unit reads back after a 429 or 503 the service may
      // have processed all the same (confirmed), and takes as someone else's otherwise (already).
      guard: async () => {
        if (guarded++ === 0) return { go: null };
        const records = new Map(((await approvals.pending(core)).records ?? []).map((r) => [r.approval_id, r]));
        const gone = ids.filter((id) => {
          const r = records.get(id);
          return !r || (r.status !== undefined && r.status !== "Pending Approval");
        });
        if (gone.length === ids.length) return { already: `no longer pending before the action was sent again: ${gone.join(", ")}` };
        return gone.length ? { blocked: `no longer pending before the action was sent again: ${gone.join(", ")}; nothing more was sent` } : { go: null };
      },
      request: () => spec,
      result: (body) => (body as ApprovalActionResult | undefined) ?? { message: "accepted (no answer body)", processed_count: ids.length, status: "success" },
      readBack: async () => {
        const records = new Map(((await approvals.pending(core)).records ?? []).map((r) => [r.approval_id, r]));
        const pending = (id: string): boolean => {
          const r = records.get(id);
          return !!r && (r.status === undefined || r.status === "Pending Approval");
        };
        const left = ids.filter(pending);
        if (left.length === ids.length) return { landed: false };
        const gone = ids.filter((id) => !pending(id));
        // A liberal read: a record the list still holds in another status says what became of it.
        const said = gone.map((id) => records.get(id)?.status).filter((st): st is string => !!st);
        const statuses = said.length ? `; the service shows ${[...new Set(said)].map((st) => JSON.stringify(st)).join(", ")}` : "";
        why = `read back: ${gone.length} of ${ids.length} no longer pending (${gone.join(", ")})${statuses}${left.length ? `; still pending: ${left.join(", ")}` : ""}`;
        // Processed as asked only where the list itself says so (a record kept in the action's status);
        // gone from a list of pending uploads is someone's approve or reject, revsync's or another's.
        const asked = action.toLowerCase().startsWith("approv") ? /^approved$/i : /^rejected$/i;
        const shown = gone.filter((id) => asked.test(records.get(id)?.status ?? "")).length;
        return { landed: true, result: { message: why, processed_count: shown, status: left.length ? "partial" : "no longer pending" } };
      },
    });
    if (o.kind === "done") return o.result;
    if (o.kind === "confirmed") return { ...o.result, message: `${o.why}; ${o.result.message}`, recovered: true };
    if (o.kind === "refused" || o.kind === "unknown") throw o.error;
    // Someone else's (already): the sends before were not processed (a 401), and none is pending now.
    const message = o.kind === "already" ? `${o.why}; revsync's action did not land: someone else acted on them` : o.reason;
    throw new ApiError({ method: spec.method, path: spec.path, status: 0, message });
  },
};

// Error transactions.
export const errorTransactions = {
  list: (core: ApiCore, filter: ErrorTransactionFilter): Promise<ErrorTransactionsList> =>
    core.call({
      method: "POST",
      path: "/apis/errortransactions/v1/",
      body: filter,
      bodySchema: "ErrorTransactionFilter",
      kind: "read",
      schema: "ErrorTransactionsList",
    }),
};
