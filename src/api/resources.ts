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
import type { ApiCore, RequestSpec } from "./core.js";
import { runWrite, type GuardVerdict, type WriteOutcome } from "./write.js";
import { envelopeWho, isoOf, shortIso, whoWords, type Who } from "../shared/who.js";
import { statusFromService } from "./service-choices.js";

const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const SSP = "/apis/policy-sets/v1/policy/ssp";
const enc = encodeURIComponent;

// Tenant configurations: list, update.
export const tenantConfigurations = {
  list: (core: ApiCore): Promise<TenantConfigurationList> => core.call({ method: "GET", path: TC, kind: "read", schema: "TenantConfigurationList" }),
  /** The PATCH of one tenant configuration: sent by the write unit (src/api/write.ts), which guards,
   *  sends and settles it. */
  updateRequest: (id: string, body: TenantConfigurationUpdateBody, ifMatch?: string): RequestSpec => ({
    method: "PATCH",
    path: `${TC}/${enc(id)}`,
    body,
    kind: "write",
    schema: "UpdateResult",
    ...(ifMatch ? { ifMatch } : {}),
    emptyOk: true,
  }),
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

/** "overwritten after revsync's write by bob at …: what differs", the words of a write someone else's
 *  write undid (WriteOutcome "overwritten"). */
export function overwrittenWords(who: Who, what: string[]): string {
  return `overwritten after revsync's write${who.modified_by ? ` by ${who.modified_by}` : ""}${who.modified_on ? ` at ${shortIso(who.modified_on)}` : ""}: ${what.join(", ")}`;
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

  /** The POST that creates a policy (sent by the write unit, src/api/write.ts). */
  createRequest: (body: SspCreateBody): RequestSpec => ({ method: "POST", path: SSP, body, kind: "write-once", schema: "SspUpdateResult", emptyOk: true }),

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

// The writes of apply, each described for the write unit (src/api/write.ts). The caller gives the
// guard: what the plan saw is apply's to compare.

/** A write's guard: reads the resource right before each send and says go (with what the send needs),
 *  blocked or already. Without one (a caller outside apply, a test) every send goes as asked. */
export type GuardOf<R> = () => Promise<GuardVerdict<R>>;

export const writes = {
  /** A tenant configuration PATCH. The guard gives the body of each send (rebuilt from its fresh read)
   *  and the If-Match. A send that may have landed is settled by reading the configuration: landed when
   *  it holds every field the last send set, not landed when it holds every such field as before. */
  update(
    core: ApiCore,
    id: string,
    guard: GuardOf<{ body: TenantConfigurationUpdateBody; ifMatch?: string; before?: Record<string, unknown> }>,
  ): Promise<WriteOutcome<UpdateResult>> {
    let sent: Record<string, unknown> = {};
    let before: Record<string, unknown> | undefined;
    const empty: UpdateResult = { compliance_id: id, compliance_details: [], error: [] };
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
    return runWrite<UpdateResult, { body: TenantConfigurationUpdateBody; ifMatch?: string; before?: Record<string, unknown> }>(core, {
      guard,
      maxSends: core.sendBudget,
      request: (read) => {
        sent = (read.body.compliance_spec[0] ?? {}) as unknown as Record<string, unknown>;
        before = read.before;
        return tenantConfigurations.updateRequest(id, read.body, read.ifMatch);
      },
      result: (body) => (body as UpdateResult | undefined) ?? empty,
      readBack: async () => {
        const env = (await tenantConfigurations.list(core)).find((x) => x.compliance_id === id);
        const live = (env?.compliance_spec?.[0] ?? {}) as Record<string, unknown>;
        if (Object.entries(sent).every(([k, v]) => same(live[k], v))) return { landed: true, result: empty };
        // As the guard read it right before the send: the write did not land (its guard runs again).
        const b = before;
        if (b && Object.keys(sent).every((k) => same(live[k], b[k]))) return { landed: false };
        return { other: "the tenant configuration holds neither the new values nor those read right before the write" };
      },
      // Read again right after the write: a field the service holds otherwise than sent was written over
      // since, by someone else (a null the service answers tells nothing, as the interface allows it).
      check: async () => {
        const env = (await tenantConfigurations.list(core)).find((x) => x.compliance_id === id);
        if (!env) return `the tenant configuration is no longer in the service after revsync's write`;
        const live = (env.compliance_spec?.[0] ?? {}) as Record<string, unknown>;
        const moved = Object.entries(sent)
          .filter(([k, v]) => live[k] !== null && live[k] !== undefined && !same(live[k], v))
          .map(([k, v]) => `${k} ${JSON.stringify(v)} -> ${JSON.stringify(live[k])}`);
        return moved.length ? overwrittenWords(envelopeWho(env), moved) : undefined;
      },
      firstRefusal: async (err) =>
        err.status === 412
          ? {
              kind: "refused",
              error: new ApiError({
                method: err.method,
                path: err.path,
                status: 412,
                message: "the tenant configuration changed since the plan was made: plan again",
              }),
            }
          : undefined,
    });
  },

  /** An SSP create. After a send that may have landed, the policy is read back by exact name: landed
   *  only when it equals what was sent on every field the create sets and `verify` (the values of its
   *  batches) finds nothing amiss; another policy of that name is someone else's. A 409 to a send no
   *  earlier send of which may have landed is a conflict: someone else's policy, never "created". */
  create(
    core: ApiCore,
    body: SspCreateBody,
    guard: GuardOf<null> = async () => ({ go: null }),
    verify: (live: SspEnvelope) => Promise<string[]> = async () => [],
  ): Promise<WriteOutcome<SspUpdateResult>> {
    const name = body.compliance_name;
    const sent = body.compliance_spec[0];
    const found = (live: SspEnvelope): SspUpdateResult => ({ compliance_id: live.compliance_id ?? "", compliance_details: [], error: [] });
    return runWrite<SspUpdateResult, null>(core, {
      guard,
      request: () => ssp.createRequest(body),
      result: (b) => {
        const r = b as SspUpdateResult | undefined;
        return r?.compliance_id ? r : undefined;
      },
      readBack: async () => {
        const live = await ssp.get(core, name);
        if (!live) return { landed: false };
        const differs = [...(sent ? createMismatch(sent, live.compliance_spec?.[0]) : []), ...(await verify(live))];
        if (differs.length) {
          return {
            other: `an SSP policy named ${JSON.stringify(name)} exists in the service${whoWords(envelopeWho(live), "created")} but differs from the one revsync sent (${differs.join(", ")}): it is not ours to count as created`,
          };
        }
        return { landed: true, result: found(live) };
      },
      firstRefusal: async (err) => {
        if (err.status !== 409) return undefined;
        const live = await ssp.get(core, name).catch(() => undefined);
        const who = live
          ? whoWords({ modified_by: live.created_by ?? live.last_modified_by ?? null, modified_on: isoOf(live.created_on ?? live.last_modified_on) }, "created")
          : "";
        return {
          kind: "refused",
          error: new ApiError({
            method: err.method,
            path: err.path,
            status: 409,
            message: `ssp/${name} exists in the service now${who}: someone else's policy, not created by this run; its batches are left alone`,
            conflict: true,
          }),
        };
      },
    });
  },

  /** A review or approve. A send that may have landed is settled by reading the batch: at the target
   *  status, landed; at the status before it, not landed. A 409 to a first send reads the batch: at the
   *  target status (someone else moved it), already; otherwise refused. */
  batchAction(
    core: ApiCore,
    action: "review" | "approve",
    policy: { id: string; name: string },
    batchName: string,
    guard: GuardOf<{ ifMatch?: string; id?: string }> = async () => ({ go: {} }),
  ): Promise<WriteOutcome<SspUpdateResult>> {
    // The guard's read may give the policy's id (a policy this run created has one only now).
    let id = policy.id;
    const target = action === "review" ? ["reviewed", "approved"] : ["approved"];
    const answer = (status: string): SspUpdateResult => ({
      compliance_id: id,
      compliance_details: [{ error: [], message: status, unique_key: policy.name }],
      error: [],
    });
    return runWrite<SspUpdateResult, { ifMatch?: string; id?: string }>(core, {
      guard,
      maxSends: core.sendBudget,
      request: (read) => {
        id = read.id ?? id;
        return ssp.batchActionRequest(action, id, batchName, read.ifMatch);
      },
      result: (b) => (b as SspUpdateResult | undefined) ?? answer(action === "review" ? "reviewed" : "approved"),
      readBack: async () => {
        const status = (await ssp.batch(core, policy.name, batchName))?.status;
        if (status && target.includes(status)) return { landed: true, status, result: answer(status) };
        return { landed: false };
      },
      firstRefusal: async (err) => {
        if (err.status !== 409) return undefined;
        const status = (await ssp.batch(core, policy.name, batchName).catch(() => undefined))?.status;
        return status && target.includes(status) ? { kind: "already", status, why: `the service answered ${err.status}` } : undefined;
      },
    });
  },
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
   *  service says so (the list shows pending uploads only: someone else may have acted on them). */
  async act(core: ApiCore, action: string, comments: string, ids: string[]): Promise<ApprovalActionResult & { recovered?: boolean }> {
    const spec: RequestSpec = {
      method: "POST",
      path: "/apis/oingest-approval/v1/action",
      body: { action, comments, approval_ids: ids },
      kind: "write-once",
      schema: "ApprovalActionResult",
      emptyOk: true,
    };
    let why = "";
    let guarded = 0;
    const o = await runWrite<ApprovalActionResult, null>(core, {
      // The first send: the command checked the ids against the pending list right before asking. Each
      // resend: they must all be pending still (someone else may have acted on one meanwhile).
      guard: async () => {
        if (guarded++ === 0) return { go: null };
        const records = new Map(((await approvals.pending(core)).records ?? []).map((r) => [r.approval_id, r]));
        const gone = ids.filter((id) => {
          const r = records.get(id);
          return !r || (r.status !== undefined && r.status !== "Pending Approval");
        });
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
        return { landed: true, result: { message: why, processed_count: gone.length, status: left.length ? "partial" : "no longer pending" } };
      },
    });
    if (o.kind === "done") return o.result;
    if (o.kind === "confirmed") return { ...o.result, message: `${o.why}; ${o.result.message}`, recovered: true };
    if (o.kind === "refused" || o.kind === "unknown") throw o.error;
    throw new ApiError({ method: spec.method, path: spec.path, status: 0, message: o.kind === "blocked" || o.kind === "overwritten" ? o.reason : o.why });
  },
};

// Error transactions.
export const errorTransactions = {
  list: (core: ApiCore, filter: ErrorTransactionFilter): Promise<ErrorTransactionsList> =>
    core.call({ method: "POST", path: "/apis/errortransactions/v1/", body: filter, kind: "read", schema: "ErrorTransactionsList" }),
};
