import type { ApprovalActionResult, PendingApprovals } from "../../schema/generated/api.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

export type ApprovalsListView = (pending: PendingApprovals, out: Sink) => void;

/** revsync approvals list: the service's pending list, as a table or as it answered. */
export const approvalsListViews: Views<ApprovalsListView> = {
  text: async () => {
    const { table, time } = await import("../table.js");
    return (p, out) => {
      out.out(
        `Approval of manual uploads is ${p.approval_enabled ? "enabled" : "disabled"} for this tenant. Roles that may approve: ${(p.approval_roles ?? []).join(", ") || "(none listed)"}.`,
      );
      const records = p.records ?? [];
      if (!records.length) {
        out.out("No uploads are pending approval.");
        return;
      }
      out.out("");
      out.out(
        table([
          ["APPROVAL ID", "FILE", "TYPE", "ROWS", "UPLOADED BY", "UPLOADED AT", "OWN UPLOAD"],
          ...records.map((r) => [
            r.approval_id ?? "",
            r.file_name ?? "",
            r.ingested_transaction_type ?? "",
            String(r.total_rows_received ?? ""),
            r.uploaded_by ?? "",
            time(r.upload_time),
            r.is_own_upload ? "yes" : "no",
          ]),
        ]),
      );
      out.out(`\n${p.total_records ?? records.length} pending.`);
    };
  },
  json: async () => (p, out) => out.json(p),
};

/** An approve or reject sent: its ids, the result (`recovered`: revsync's reading of the pending list
 *  after an unknown outcome, not the service's words), and whether every upload is settled. */
export interface Acted {
  action: "approve" | "reject";
  ids: string[];
  result: ApprovalActionResult & { recovered?: boolean };
  settled: boolean;
}

export type ApprovalsActView = (acted: Acted, out: Sink) => void;

/** revsync approvals approve|reject. */
export const approvalsActViews: Views<ApprovalsActView> = {
  text:
    async () =>
    ({ action, ids, result: res, settled }, out) => {
      const done = action === "approve" ? "approved" : "rejected";
      const head =
        res.status === "success"
          ? action === "approve"
            ? "Approved"
            : "Rejected"
          : settled
            ? `${action === "approve" ? "Approved" : "Rejected"} (read back: the service lists ${ids.length === 1 ? "it" : "them"} ${done})`
            : res.recovered && res.status === "no longer pending"
              ? `Unsure: no longer pending, but whether ${ids.length === 1 ? "it was" : "they were"} ${done}, and by whom, the service does not say (it lists pending uploads only: someone else's approve or reject looks the same); check ${ids.length === 1 ? "it" : "them"} in the service before acting again`
              : `Not all ${done} (status ${res.status})`;
      const said = res.recovered ? res.message : `the service said: ${res.message}`;
      out.out(`${head}: ${ids.join(", ")}. processed_count ${res.processed_count}; ${said}`);
    },
  json:
    async () =>
    ({ action, ids, result, settled }, out) =>
      out.json({ action, approval_ids: ids, ...result, settled }),
};
