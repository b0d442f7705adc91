import { approvals, errorTransactions, ssp } from "../api/resources.js";
import { isDate } from "../config/values.js";
import { UserError } from "../errors.js";
import { writeUserFile } from "../user-files.js";
import type { ErrorTransactionFilter, ErrorTransactionRecord, PendingApprovalRecord } from "../schema/generated/api.js";
import { formatCsv } from "../ssp/csv.js";
import { openClient, openServiceEnv } from "./context.js";
import { askYes } from "./prompt.js";
import type { GlobalFlags } from "./main.js";
import type { Output } from "./output.js";

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

const time = (epoch: number | undefined): string => (epoch ? new Date(epoch * 1000).toISOString().replace(".000Z", "Z") : "");

async function withClient<T>(
  flags: GlobalFlags,
  out: Output,
  fn: (core: ReturnType<typeof openClient>, env: ReturnType<typeof openServiceEnv>) => Promise<T>,
): Promise<T> {
  const env = openServiceEnv(flags, out);
  const core = openClient(env, flags, out);
  try {
    return await fn(core, env);
  } finally {
    await core.close();
  }
}

// ---- approvals (4.8, 4.9)

export async function runApprovalsList(flags: GlobalFlags, out: Output): Promise<number> {
  return withClient(flags, out, async (core) => {
    const p = await approvals.pending(core);
    if (flags.format === "json") {
      out.out(JSON.stringify(p, null, 2));
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
      out.out(`Would ${action} ${idsToSend.length} upload(s):`);
      for (const r of chosen)
        out.out(`  ${r.approval_id}  ${r.file_name}  (${r.ingested_transaction_type}, ${r.total_rows_received} rows, uploaded by ${r.uploaded_by})`);
      return 0;
    }
    if ((flags.all || idsToSend.length > 1) && !flags.yes) {
      if (!out.interactive) {
        throw new UserError(
          `${action} of ${idsToSend.length} upload(s) at once: without a terminal it needs --yes (or --dry-run to see them); nothing was sent`,
        );
      }
      out.info(`revsync will ${action} ${idsToSend.length} upload(s) in ${env.name} (${env.baseUrl}, realm ${env.realm}):`);
      for (const r of chosen)
        out.info(`  ${r.approval_id}  ${r.file_name}  (${r.ingested_transaction_type}, ${r.total_rows_received} rows, uploaded by ${r.uploaded_by})`);
      if (!(await askYes(out, `\nDo you want to ${action} these uploads? Only 'yes' will be accepted: `))) {
        out.error(`${action} cancelled: nothing was sent`);
        return 1;
      }
    }
    const literal = action === "approve" ? env.approveAction : env.rejectAction;
    const res = await approvals.act(core, literal, flags.comment ?? "", idsToSend);
    if (flags.format === "json") out.out(JSON.stringify({ action, approval_ids: idsToSend, ...res }, null, 2));
    else
      out.out(
        `${action === "approve" ? "Approved" : "Rejected"}: ${idsToSend.join(", ")}. processed_count ${res.processed_count}; the service said: ${res.message}`,
      );
    return res.status === "success" ? 0 : 1;
  });
}

// ---- error transactions (4.10)

export interface ErrorsFlags extends GlobalFlags {
  type?: string;
  kind?: string;
  code?: string;
  requestId?: string;
  financialId?: string;
  from?: string;
  to?: string;
  legalEntity?: string;
  summary?: boolean;
}

const MISSING_POLICY_SET: Record<string, string> = {
  "ERR-00015": "revenue rules: no valid revenue rule policy is available. Create the revenue rule policy set for these transactions, then reprocess them",
};

export async function runErrors(flags: ErrorsFlags, out: Output): Promise<number> {
  const type = (flags.type ?? "").toLowerCase();
  if (!["order", "invoice", "event", "mje"].includes(type))
    throw new UserError(`--type must be order, invoice, event or mje${flags.type ? `, got ${JSON.stringify(flags.type)}` : " (it is required)"}`);
  if (flags.kind && !["remediable", "discarded"].includes(flags.kind))
    throw new UserError(`--kind must be remediable or discarded, got ${JSON.stringify(flags.kind)}`);
  for (const [flag, v] of [
    ["--from", flags.from],
    ["--to", flags.to],
  ] as const) {
    if (v !== undefined && !isDate(v)) throw new UserError(`${flag} must be a date YYYY-MM-DD, got ${JSON.stringify(v)}`);
  }
  if (flags.from && flags.to && flags.from > flags.to) throw new UserError(`--from ${flags.from} is after --to ${flags.to}`);
  const filter: ErrorTransactionFilter = {
    transaction_type: type as ErrorTransactionFilter["transaction_type"],
    error_warning_type: flags.kind as ErrorTransactionFilter["error_warning_type"],
    error_warning_code: flags.code,
    error_request_id: flags.requestId,
    financial_id: flags.financialId,
    error_from_date: flags.from,
    error_to_date: flags.to,
    legal_entity: flags.legalEntity,
  };
  for (const k of Object.keys(filter) as (keyof ErrorTransactionFilter)[]) if (filter[k] === undefined) delete filter[k];
  return withClient(flags, out, async (core) => {
    const list = await errorTransactions.list(core, filter);
    const records: ErrorTransactionRecord[] = list.flatMap((e) => e.compliance_spec ?? []);
    if (flags.summary) {
      const groups = new Map<string, ErrorTransactionRecord[]>();
      for (const r of records) groups.set(r.error_warning_code ?? "", [...(groups.get(r.error_warning_code ?? "") ?? []), r]);
      const rows = [...groups]
        .sort((a, b) => b[1].length - a[1].length)
        .map(([code, rs]) => ({
          code,
          count: rs.length,
          message: rs[0]?.error_warning_message ?? "",
          suggestion: rs[0]?.suggestions ?? "",
          missing_policy_set: MISSING_POLICY_SET[code],
        }));
      if (flags.format === "json") out.out(JSON.stringify(rows, null, 2));
      else if (flags.format === "csv")
        out.raw(formatCsv([["code", "count", "message", "suggestion"], ...rows.map((r) => [r.code, String(r.count), r.message, r.suggestion])]));
      else {
        if (!rows.length) out.out("No error transactions match.");
        for (const r of rows) {
          out.out(`${out.paint("bold", r.code)}  ${r.count} transaction(s): ${r.message}`);
          out.out(`    suggestion: ${r.suggestion}`);
          if (r.missing_policy_set) out.out(`    missing policy set: ${r.missing_policy_set}`);
        }
      }
      return 0;
    }
    if (flags.format === "json") out.out(JSON.stringify(records, null, 2));
    else if (flags.format === "csv") {
      out.raw(
        formatCsv([
          [
            "error_id",
            "error_date",
            "error_warning_code",
            "error_warning_type",
            "document_identifier",
            "request_id",
            "legal_entity",
            "error_warning_field",
            "error_warning_message",
            "suggestions",
          ],
          ...records.map((r) => [
            r.error_id ?? "",
            r.error_date ?? "",
            r.error_warning_code ?? "",
            r.error_warning_type ?? "",
            r.document_identifier ?? "",
            r.request_id ?? "",
            r.document_details?.legal_entity ?? "",
            r.error_warning_field ?? "",
            r.error_warning_message ?? "",
            r.suggestions ?? "",
          ]),
        ]),
      );
    } else if (!records.length) out.out("No error transactions match.");
    else {
      out.out(
        table([
          ["ERROR ID", "DATE", "CODE", "KIND", "DOCUMENT", "ENTITY", "FIELD", "MESSAGE"],
          ...records.map((r) => [
            r.error_id ?? "",
            r.error_date ?? "",
            r.error_warning_code ?? "",
            r.error_warning_type ?? "",
            r.document_identifier ?? "",
            r.document_details?.legal_entity ?? "",
            r.error_warning_field ?? "",
            r.error_warning_message ?? "",
          ]),
        ]),
      );
      out.out(`\n${list[0]?.total_records ?? records.length} error transaction(s).`);
    }
    return 0;
  });
}

// ---- SSP files (4.4, 4.5)

export async function runSspFile(
  what: "template" | "download",
  flags: GlobalFlags & { batch?: string; output?: string },
  out: Output,
  args: string[],
): Promise<number> {
  return withClient(flags, out, async (core) => {
    const bytes = what === "template" ? await ssp.template(core, flags.batch) : await ssp.download(core, args[0] ?? "");
    if (flags.output) {
      writeUserFile(flags.output, bytes);
      out.info(`wrote ${bytes.length} bytes to ${flags.output}`);
    } else process.stdout.write(bytes);
    return 0;
  });
}
