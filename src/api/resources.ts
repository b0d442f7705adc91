/** The operations of the service's interface that belong to no resource kind: the manual uploads'
 *  approvals (spec 4.8, 4.9) and the error transactions (4.10). Each kind's own requests are in its folder
 *  (src/kinds/<name>/). */
import { ApiError } from "../errors.js";
import type { ApprovalActionResult, ErrorTransactionFilter, ErrorTransactionsList, PendingApprovals } from "../schema/generated/api.js";
import type { ApiCore, RequestSpec } from "./core.js";
import { runWrite } from "./write.js";

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
