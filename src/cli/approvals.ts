import { approvals } from "../api/resources.js";
import { ApiError, UserError } from "../errors.js";
import type { PendingApprovalRecord } from "../schema/generated/api.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { askYes } from "./prompt.js";
import { plural } from "../words.js";
import { table, time, withClient } from "./service-command.js";
import { terminalText } from "../report/escape.js";

// ---- approvals (4.8, 4.9)

export async function runApprovalsList(flags: GlobalFlags, out: Output): Promise<number> {
  return withClient(flags, out, async (core) => {
    const p = await approvals.pending(core);
    if (flags.format === "json") {
      out.json(p);
      return 0;
    }
    out.out(
      `Approval of manual uploads is ${p.approval_enabled ? "enabled" : "disabled"} for this tenant. Roles that may approve: ${(p.approval_roles ?? []).join(", ") || "(none listed)"}.`,
    );
    const records = p.records ?? [];
    if (!records.length) {
      out.out("No uploads are pending approval.");
      return 0;
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
    return 0;
  });
}

export interface ActFlags extends GlobalFlags {
  comment?: string;
  all?: boolean;
  type?: string;
  uploadedBy?: string;
  file?: string;
  dryRun?: boolean;
  yes?: boolean;
}

export async function runApprovalsAct(action: "approve" | "reject", flags: ActFlags, out: Output, ids: string[]): Promise<number> {
  if (!flags.comment || flags.comment.trim() === "") throw new UserError(`--comment is required: the service needs a comment to ${action} an upload`);
  if (flags.all && ids.length) throw new UserError("give approval ids or --all, not both");
  if (!flags.all && !ids.length) throw new UserError(`name the approval ids to ${action}, or use --all with filters (revsync approvals list shows them)`);
  if (!flags.all && (flags.type || flags.uploadedBy || flags.file)) throw new UserError("--type, --uploaded-by and --file filter --all");
  return withClient(flags, out, async (core, env) => {
    const pending = (await approvals.pending(core)).records ?? [];
    let chosen: PendingApprovalRecord[];
    if (flags.all) {
      chosen = pending.filter(
        (r) =>
          (!flags.type || (r.ingested_transaction_type ?? "").toUpperCase() === flags.type.toUpperCase()) &&
          (!flags.uploadedBy || r.uploaded_by === flags.uploadedBy) &&
          (!flags.file || (r.file_name ?? "").includes(flags.file)),
      );
    } else {
      const unknown = ids.filter((id) => !pending.some((r) => r.approval_id === id));
      if (unknown.length) throw new UserError(`not pending approval: ${unknown.join(", ")} (revsync approvals list shows what is pending)`);
      chosen = ids.map((id) => pending.find((r) => r.approval_id === id) as PendingApprovalRecord);
    }
    if (action === "approve") {
      for (const r of chosen.filter((x) => x.is_own_upload)) {
        out.warn(
          `${r.approval_id} (${r.file_name}) left out: you uploaded it, and the uploader of a file cannot approve it (spec 3.1); another approver must, or you may reject it`,
        );
      }
      chosen = chosen.filter((x) => !x.is_own_upload);
    }
    if (!chosen.length) {
      out.error(`nothing to ${action}`);
      return 1;
    }
    const idsToSend = chosen.map((r) => r.approval_id ?? "");
    if (flags.dryRun) {
      out.out(`Would ${action} ${plural(idsToSend.length, "upload")}:`);
      for (const r of chosen) out.out(uploadLine(r));
      return 0;
    }
    if ((flags.all || idsToSend.length > 1) && !flags.yes) {
      if (!out.interactive) {
        throw new UserError(
          `${action} of ${plural(idsToSend.length, "upload")} at once: without a terminal it needs --yes (or --dry-run to see them); nothing was sent`,
        );
      }
      out.info(`revsync will ${action} ${plural(idsToSend.length, "upload")} in ${env.name} (${env.baseUrl}, realm ${env.realm}):`);
      for (const r of chosen) out.info(uploadLine(r));
      if (!(await askYes(out, `\nDo you want to ${action} these uploads? Only 'yes' will be accepted: `))) {
        out.error(`${action} cancelled: nothing was sent`);
        return 1;
      }
    }
    const literal = action === "approve" ? env.service.approveAction : env.service.rejectAction;
    const res = await approvals.act(core, literal, flags.comment ?? "", idsToSend).catch((e: unknown) => {
      // A refusal of the action: say where its literal was set, the likely cause when it is not revsync's own.
      const aboutAction = e instanceof ApiError && (e.problems.some((p) => p.field === "action") || /\baction\b/i.test(e.serviceMessage));
      if (e instanceof ApiError && aboutAction && !e.outcomeUnknown && e.status >= 400 && e.status < 500 && !e.hint) {
        const from = env.service.actionSource?.[action];
        throw new ApiError({
          method: e.method,
          path: e.path,
          status: e.status,
          message: e.serviceMessage,
          problems: e.problems,
          hint: from
            ? `the action literal ${JSON.stringify(literal)} was set by ${from}: check it is the text this service accepts for a ${action}`
            : `revsync sent its default action literal ${JSON.stringify(literal)}; if this service uses another text, set service.${action}_action of the environment in revsync.yaml`,
        });
      }
      throw e;
    });
    // A recovered result is revsync's own reading of the pending list, not the service's words: the list
    // says an upload is no longer pending, not who acted on it nor how.
    const settled = res.status === "success" || (res.recovered === true && res.status === "no longer pending");
    if (flags.format === "json") out.json({ action, approval_ids: idsToSend, ...res });
    else {
      const done = action === "approve" ? "approved" : "rejected";
      const head =
        res.status === "success"
          ? action === "approve"
            ? "Approved"
            : "Rejected"
          : settled
            ? `No longer pending (whether ${idsToSend.length === 1 ? "it was" : "they were"} ${done}, and by whom, the service does not say)`
            : `Not all ${done} (status ${res.status})`;
      const said = res.recovered ? res.message : `the service said: ${res.message}`;
      out.out(`${head}: ${idsToSend.join(", ")}. processed_count ${res.processed_count}; ${said}`);
    }
    return settled ? 0 : 1;
  });
}

/** One upload, on one line: its fields are the service's text. */
const uploadLine = (r: PendingApprovalRecord): string =>
  `  ${terminalText(String(r.approval_id))}  ${terminalText(String(r.file_name))}  (${terminalText(String(r.ingested_transaction_type))}, ${r.total_rows_received} rows, uploaded by ${terminalText(String(r.uploaded_by))})`;
