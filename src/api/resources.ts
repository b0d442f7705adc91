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
  SspUpdateResult,
  TenantConfigurationList,
  TenantConfigurationUpdateBody,
  UpdateResult,
} from "../schema/generated/api.js";
import { batchNameOf } from "../shared/address.js";
import { fieldDiff, normalizeSspFields } from "../shared/normalize.js";
import type { ApiCore, ReadBack } from "./core.js";
import type { Written } from "./outcome.js";
import { statusFromService } from "./service-choices.js";

const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const SSP = "/apis/policy-sets/v1/policy/ssp";
const enc = encodeURIComponent;

// Tenant configurations: list, update.
export const tenantConfigurations = {
  list: (core: ApiCore): Promise<TenantConfigurationList> => core.call({ method: "GET", path: TC, kind: "read", schema: "TenantConfigurationList" }),
  /** A PATCH whose answer was lost, or a repeat refused after such a send (a 412 for the If-Match it
   *  moved on), may have landed: it is settled by reading the configuration back, never by sending
   *  again, and counts as done only when the service holds exactly what was sent. */
  async update(core: ApiCore, id: string, body: TenantConfigurationUpdateBody, ifMatch?: string): Promise<Written<UpdateResult>> {
    const empty: UpdateResult = { compliance_id: id, compliance_details: [], error: [] };
    try {
      const res = await core.call<UpdateResult | undefined>({
        method: "PATCH",
        path: `${TC}/${enc(id)}`,
        body,
        kind: "write",
        schema: "UpdateResult",
        ifMatch,
        emptyOk: true,
      });
      return { kind: "done", result: res ?? empty };
    } catch (e) {
      if (!(e instanceof ApiError) || !e.outcomeUnknown) throw e;
      let live: Record<string, unknown>;
      try {
        const env = (await tenantConfigurations.list(core)).find((x) => x.compliance_id === id);
        live = (env?.compliance_spec?.[0] ?? {}) as Record<string, unknown>;
      } catch (readErr) {
        throw ApiError.readBackFailed(e, readErr);
      }
      if (Object.entries(body.compliance_spec[0] ?? {}).every(([k, v]) => JSON.stringify(live[k]) === JSON.stringify(v)))
        return { kind: "confirmed", result: empty };
      const message = `${e.serviceMessage}; read back: the tenant configuration does not hold the new values`;
      throw new ApiError({ method: e.method, path: e.path, status: e.status, message, problems: e.problems });
    }
  },
};

/** The fields of a create body that identify what was asked for: a policy of the same name that differs
 *  in one of them is another policy, not ours. Fields the service answers as null are unknown, not a difference. */
const IDENTITY_FIELDS = ["method", "active", "hierarchy_no", "expression", "data_identifiers", "when", "floor_percentage", "ceiling_percentage"] as const;

/** Fields in which a live policy differs from the item that was sent to create it, compared as plan
 *  compares them (conditions and identifiers as sets, operator spellings as one). */
export function createMismatch(sent: SspCreateBody["compliance_spec"][number], live: SspItem | undefined): string[] {
  if (!live) return ["(no policy item)"];
  const l = live as unknown as Record<string, unknown>;
  const keys = IDENTITY_FIELDS.filter((k) => l[k] !== null && l[k] !== undefined);
  return fieldDiff(normalizeSspFields(live, keys), normalizeSspFields(sent as unknown as Record<string, unknown>, keys)).map((d) => d.path);
}

const exactPolicy = (list: SspList, name: string): SspEnvelope | undefined => list.find((e) => e.compliance_name === name);

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

  /** One policy with its batches, matched by exact name; undefined when the service has no policy of
   *  exactly that name (a 404, or an answer holding only other policies). */
  async get(core: ApiCore, policyName: string): Promise<SspEnvelope | undefined> {
    try {
      const list = await core.call<SspList>({ method: "GET", path: SSP, query: { policy_name: policyName }, kind: "read", schema: "SspList" });
      return exactPolicy(statusesFromService(core, list), policyName);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return undefined;
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

  /** Creates a policy. After an unknown outcome or a 409 the policy is read back by exact name; it counts
   *  as created only when its fields are those that were sent (another policy of the same name is a
   *  conflict), and the POST is sent again only when the read says it is not there. */
  async create(core: ApiCore, body: SspCreateBody): Promise<Written<SspUpdateResult>> {
    const name = body.compliance_name;
    const sent = body.compliance_spec[0];
    const readBack = async (): Promise<ReadBack<SspUpdateResult>> => {
      const live = await ssp.get(core, name);
      if (!live) return { found: false };
      const differs = sent ? createMismatch(sent, live.compliance_spec?.[0]) : [];
      if (differs.length) {
        throw new ApiError({
          method: "POST",
          path: SSP,
          status: 409,
          message: `an SSP policy named ${JSON.stringify(name)} exists in the service but differs from the one revsync sent (${differs.join(", ")}): it is not ours to count as created`,
          conflict: true,
        });
      }
      const result: SspUpdateResult = { compliance_id: live.compliance_id ?? "", compliance_details: [], error: [] };
      return { found: true, result };
    };
    const out = await core.writeOnce<SspUpdateResult>(
      { method: "POST", path: SSP, body, kind: "write-once", schema: "SspUpdateResult", emptyOk: true },
      readBack,
    );
    // Read back after a lost or unreadable answer, or after a 409 for the very policy that was sent (an
    // earlier send landed); `why` says which.
    const landed = out.recovered ? ({ kind: "confirmed", why: out.why } as const) : ({ kind: "done" } as const);
    if (out.result?.compliance_id) return { ...landed, result: out.result };
    // A 2xx without a body, or without an id: the id comes from reading the policy back.
    const again = await readBack();
    if (!again.found)
      throw new ApiError({ method: "POST", path: SSP, status: 200, message: `the service accepted ${name} but does not show it`, outcomeUnknown: true });
    return { ...landed, result: again.result };
  },

  /** Review or approve. A repeat of a PATCH that the service had already applied answers 409; then the
   *  batch is read back (exact names), and reaching the target status counts as done: "already" after a
   *  first send, "confirmed" after a send that may have landed. */
  async batchAction(core: ApiCore, action: "review" | "approve", policy: { id: string; name: string }, batchName: string): Promise<Written<SspUpdateResult>> {
    const answer = (status: string): SspUpdateResult => ({
      compliance_id: policy.id,
      compliance_details: [{ error: [], message: status, unique_key: policy.name }],
      error: [],
    });
    try {
      const res = await core.call<SspUpdateResult | undefined>({
        method: "PATCH",
        path: `${SSP}/${action}/${enc(policy.id)}/${enc(batchName)}`,
        kind: "write",
        schema: "SspUpdateResult",
        emptyOk: true,
      });
      return { kind: "done", result: res ?? answer(action === "review" ? "reviewed" : "approved") };
    } catch (e) {
      // A 409, or a refusal or no answer after a send that may have landed: read the batch's status.
      if (!(e instanceof ApiError) || (e.status !== 409 && !e.outcomeUnknown)) throw e;
      let status: string | undefined;
      try {
        status = (await ssp.batch(core, policy.name, batchName))?.status;
      } catch (readErr) {
        if (!e.outcomeUnknown) throw e;
        throw ApiError.readBackFailed(e, readErr);
      }
      const target = action === "review" ? ["reviewed", "approved"] : ["approved"];
      if (status && target.includes(status)) return { kind: e.outcomeUnknown ? "confirmed" : "already", status, result: answer(status) };
      throw e;
    }
  },

  download: (core: ApiCore, fileId: string): Promise<Buffer> =>
    core.call({ method: "GET", path: `${SSP}/download/${enc(fileId)}`, kind: "read", schema: "bytes" }),

  /** The template; batch_name goes where the tenant takes it (service.template_batch_name: a query
   *  parameter by default, or a segment of the path; docs/decisions.md, "The service's own choices"). */
  template: (core: ApiCore, batchName?: string): Promise<Buffer> =>
    batchName !== undefined && core.service.templateBatchName === "path"
      ? core.call({ method: "GET", path: `${SSP}/template/${enc(batchName)}`, kind: "read", schema: "bytes" })
      : core.call({ method: "GET", path: `${SSP}/template`, query: { batch_name: batchName }, kind: "read", schema: "bytes" }),
};

// Manual-upload approvals: the pending list, the approve or reject action.
export const approvals = {
  pending: (core: ApiCore): Promise<PendingApprovals> =>
    core.call({ method: "GET", path: "/apis/oingest-approval/v1/pending", kind: "read", schema: "PendingApprovals" }),

  /** Sent again only when the pending list says that none of the ids was processed (the create rule).
   *  After an unknown outcome with some ids processed, the result is revsync's reading of the pending
   *  list: "no longer pending", with the status the list gives, never "approved" or "rejected" unless the
   *  service says so (the list shows pending uploads only: someone else may have acted on them). */
  async act(core: ApiCore, action: string, comments: string, ids: string[]): Promise<ApprovalActionResult & { recovered?: boolean }> {
    const readBack = async (why: string): Promise<ReadBack<ApprovalActionResult>> => {
      const records = new Map(((await approvals.pending(core)).records ?? []).map((r) => [r.approval_id, r]));
      const pending = (id: string): boolean => {
        const r = records.get(id);
        return !!r && (r.status === undefined || r.status === "Pending Approval");
      };
      const left = ids.filter(pending);
      if (left.length === ids.length) return { found: false };
      const gone = ids.filter((id) => !pending(id));
      // A liberal read: a record the list still holds in another status says what became of it.
      const said = gone.map((id) => records.get(id)?.status).filter((st): st is string => !!st);
      const statuses = said.length ? `; the service shows ${[...new Set(said)].map((st) => JSON.stringify(st)).join(", ")}` : "";
      const message = `${why}; read back: ${gone.length} of ${ids.length} no longer pending (${gone.join(", ")})${statuses}${left.length ? `; still pending: ${left.join(", ")}` : ""}`;
      return { found: true, result: { message, processed_count: gone.length, status: left.length ? "partial" : "no longer pending" } };
    };
    const out = await core.writeOnce<ApprovalActionResult>(
      {
        method: "POST",
        path: "/apis/oingest-approval/v1/action",
        body: { action, comments, approval_ids: ids },
        kind: "write-once",
        schema: "ApprovalActionResult",
        emptyOk: true,
      },
      readBack,
    );
    if (out.result) return { ...out.result, ...(out.recovered ? { recovered: true } : {}) };
    return { message: "accepted (no answer body)", processed_count: ids.length, status: "success" };
  },
};

// Error transactions.
export const errorTransactions = {
  list: (core: ApiCore, filter: ErrorTransactionFilter): Promise<ErrorTransactionsList> =>
    core.call({ method: "POST", path: "/apis/errortransactions/v1/", body: filter, kind: "read", schema: "ErrorTransactionsList" }),
};
