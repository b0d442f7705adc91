import { approvals } from "../api/resources.js";
import type { ApiCore } from "../api/core.js";
import type { ResolvedEnv } from "../config/repo.js";
import { ApiError, UserError } from "../errors.js";
import type { PendingApprovalRecord } from "../schema/generated/api.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { askYes } from "./prompt.js";
import { plural } from "../words.js";
import { withClient } from "./service-command.js";
import { terminalText } from "../report/escape.js";
import { pickView } from "../report/view.js";
import { approvalsActViews, approvalsListViews } from "../report/views/approvals.js";

// ---- approvals (4.8, 4.9)

export async function runApprovalsList(flags: GlobalFlags, out: Output): Promise<number> {
  const view = await pickView(approvalsListViews, flags.format);
  return withClient(flags, out, async (core) => {
    view(await approvals.pending(core), out);
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

type Action = "approve" | "reject";

export async function runApprovalsAct(action: Action, flags: ActFlags, out: Output, ids: string[]): Promise<number> {
  const view = await pickView(approvalsActViews, flags.format);
  checkActFlags(action, flags, ids);
  return withClient(flags, out, async (core, env) => {
    const chosen = chooseUploads(action, flags, ids, (await approvals.pending(core)).records ?? [], out);
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
    if (!(await confirmed(action, chosen, flags, out, env))) return 1;
    const result = await sendAction(core, env, action, flags.comment ?? "", idsToSend);
    // A recovered result is revsync's own reading of the pending list, not the service's words: the list
    // says an upload is no longer pending, not who acted on it nor how (someone else's reject looks the
    // same as revsync's approve). Settled only where the list shows each in the action's status; else
    // unsure, and said so, exit 1 (docs/reliability.md).
    const settled = result.status === "success" || (result.recovered === true && result.processed_count === idsToSend.length);
    view({ action, ids: idsToSend, result, settled }, out);
    return settled ? 0 : 1;
  });
}

/** The flags of an approve or reject, checked before anything is read: a comment, and ids or --all. */
function checkActFlags(action: Action, flags: ActFlags, ids: string[]): void {
  if (!flags.comment || flags.comment.trim() === "") throw new UserError(`--comment is required: the service needs a comment to ${action} an upload`);
  if (flags.all && ids.length) throw new UserError("give approval ids or --all, not both");
  if (!flags.all && !ids.length) throw new UserError(`name the approval ids to ${action}, or use --all with filters (revsync approvals list shows them)`);
  if (!flags.all && (flags.type || flags.uploadedBy || flags.file)) throw new UserError("--type, --uploaded-by and --file filter --all");
}

/** The pending uploads the command names: its ids (each must be pending), or those --all's filters
 *  select. An approve leaves out the user's own uploads, each said: an uploader cannot approve their file. */
function chooseUploads(action: Action, flags: ActFlags, ids: string[], pending: PendingApprovalRecord[], out: Output): PendingApprovalRecord[] {
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
  if (action === "reject") return chosen;
  for (const r of chosen.filter((x) => x.is_own_upload)) {
    out.warn(
      `${r.approval_id} (${r.file_name}) left out: you uploaded it, and the uploader of a file cannot approve it (the service's rule); another approver must, or you may reject it`,
    );
  }
  return chosen.filter((x) => !x.is_own_upload);
}

/** More than one upload (or --all) is acted on only when a person says yes at the terminal, or --yes
 *  says it beforehand; without a terminal, --yes is required. */
async function confirmed(action: Action, chosen: PendingApprovalRecord[], flags: ActFlags, out: Output, env: ResolvedEnv): Promise<boolean> {
  if (!(flags.all || chosen.length > 1) || flags.yes) return true;
  if (!out.interactive) {
    throw new UserError(
      `${action} of ${plural(chosen.length, "upload")} at once: without a terminal it needs --yes (or --dry-run to see them); nothing was sent`,
    );
  }
  out.info(`revsync will ${action} ${plural(chosen.length, "upload")} in ${env.name} (${env.baseUrl}, realm ${env.realm}):`);
  for (const r of chosen) out.info(uploadLine(r));
  if (await askYes(out, `\nDo you want to ${action} these uploads? Only 'yes' will be accepted: `)) return true;
  out.error(`${action} cancelled: nothing was sent`);
  return false;
}

/** Sends the action with the environment's literal for it. A refusal of that literal says where it was
 *  set: the likely cause when it is not revsync's own. */
async function sendAction(core: ApiCore, env: ResolvedEnv, action: Action, comment: string, ids: string[]): ReturnType<typeof approvals.act> {
  const literal = action === "approve" ? env.service.approveAction : env.service.rejectAction;
  return approvals.act(core, literal, comment, ids).catch((e: unknown) => {
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
}

/** One upload, on one line: its fields are the service's text. */
const uploadLine = (r: PendingApprovalRecord): string =>
  `  ${terminalText(String(r.approval_id))}  ${terminalText(String(r.file_name))}  (${terminalText(String(r.ingested_transaction_type))}, ${r.total_rows_received} rows, uploaded by ${terminalText(String(r.uploaded_by))})`;
