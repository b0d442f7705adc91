/** The manual uploads' approvals (spec 4.8, 4.9, the rules of 3.1): the pending list and the approve or
 *  reject action; and a manual upload itself (POST /__admin/uploads), a pending approval and, for SSP, an
 *  uploaded batch of a policy. */
import type { ApprovalActionBody, PendingApprovalRecord } from "../schema/generated/api.js";
import { apiValidator, describeAjvErrors } from "../schema/ajv.js";
import { json, only, type ApiResource } from "./resource.js";
import { EmuError, epoch, requiredText, validate, type Caller } from "./service.js";
import { uploadedBatch } from "./ssp.js";
import { nextId, type EmulatorState, type StoredApproval, type TenantState } from "./state.js";

const APPROVALS = "/apis/oingest-approval/v1";

export const approvals: ApiResource = {
  answer(req) {
    if (req.path === `${APPROVALS}/pending`) {
      only(req, "GET");
      return json(pendingApprovals(req.t, req.caller));
    }
    if (req.path === `${APPROVALS}/action`) {
      only(req, "POST");
      return json(approvalAction(req.t, req.caller, req.body()));
    }
    return undefined;
  },
};

export function pendingApprovals(t: TenantState, caller: Caller): unknown {
  const records: PendingApprovalRecord[] = t.approvals.records
    .filter((r) => r.status === "Pending Approval")
    .map((r) => ({ ...r, is_own_upload: r.uploaded_by === caller.user }));
  return { approval_enabled: t.approvals.enabled, approval_roles: t.approvals.roles, records, total_records: records.length };
}

export function approvalAction(t: TenantState, caller: Caller, raw: unknown): unknown {
  if (raw && typeof raw === "object" && (raw as { comments?: unknown }).comments === undefined) {
    throw new EmuError(400, "comments are mandatory", [{ field: "comments", message: "is required" }]);
  }
  const body = validate<ApprovalActionBody>("ApprovalActionBody", raw);
  if (body.comments.trim() === "") throw new EmuError(400, "comments are mandatory", [{ field: "comments", message: "must not be blank" }]);
  const approve = body.action === "Approved";
  if (!approve && body.action !== "Rejected") {
    throw new EmuError(400, `unknown action ${JSON.stringify(body.action)}`, [{ field: "action", message: 'must be "Approved" or "Rejected"' }]);
  }
  const role = caller.roles.find((r) => t.approvals.roles.includes(r));
  if (!role) throw new EmuError(403, `${caller.user} holds none of the approval roles (${t.approvals.roles.join(", ")})`);
  const records = body.approval_ids.map((id) => {
    const r = t.approvals.records.find((x) => x.approval_id === id);
    if (!r) throw new EmuError(404, `no approval record ${id}`, [{ field: "approval_ids", message: `${id} is unknown` }]);
    return r;
  });
  const own = records.filter((r) => r.uploaded_by === caller.user);
  if (approve && own.length) {
    throw new EmuError(
      403,
      "the uploader of a file cannot approve it",
      own.map((r) => ({ field: "approval_ids", message: `${r.approval_id} was uploaded by ${caller.user}` })),
    );
  }
  const notPending = records.filter((r) => r.status !== "Pending Approval");
  if (notPending.length) {
    throw new EmuError(
      409,
      "only records in Pending Approval can be acted on",
      notPending.map((r) => ({ field: "approval_ids", message: `${r.approval_id} is ${r.status}` })),
    );
  }
  const now = epoch();
  const unique = new Set(records);
  for (const r of unique) {
    Object.assign(r, {
      status: approve ? "Approved" : "Rejected",
      approved_by: caller.user,
      approved_on: now,
      approval_comments: body.comments,
      approver_role: role,
    });
  }
  const verb = approve ? "approved" : "rejected";
  return { message: `${unique.size} record(s) ${verb} successfully`, processed_count: unique.size, status: "success" };
}

/** Admin: simulates a manual upload, a pending approval, and for SSP an uploaded batch of an existing policy. */
export function uploadFile(state: EmulatorState, t: TenantState, raw: unknown): object {
  if (raw !== undefined && raw !== null && (typeof raw !== "object" || Array.isArray(raw))) throw new EmuError(400, "an upload is a JSON object");
  const b = (raw ?? {}) as Record<string, unknown>;
  checkUploadFields(b);
  const str = requiredText(b);
  const user = str("uploaded_by", "alice");
  const type = str("type", "order").toUpperCase();
  const now = epoch();
  const approvalId = nextId(state, "APR-");
  let fileName = typeof b.file_name === "string" ? b.file_name : `${type.toLowerCase()}-${approvalId}.csv`;
  let rows = typeof b.rows === "number" ? b.rows : 100;
  const batch = type === "SSP" ? uploadedBatch(state, t, b, user, now) : undefined;
  if (batch) {
    fileName = typeof batch.file_name === "string" ? batch.file_name : fileName;
    rows = batch.ssp_values.length;
  }
  const record: StoredApproval = {
    approval_id: approvalId,
    approval_comments: null,
    approved_by: null,
    approved_on: null,
    approver_role: null,
    context: type === "SSP" ? "SSP" : type.charAt(0) + type.slice(1).toLowerCase() + "s",
    file_date_format: "MM/DD/YYYY",
    file_format: "csv",
    file_id: nextId(state, "UPL-"),
    file_name: fileName,
    uploaded_file_name: fileName,
    ingested_transaction_type: type,
    status: "Pending Approval",
    total_rows_received: rows,
    upload_time: now,
    upload_type: "MANUAL",
    uploaded_by: user,
  };
  t.approvals.records.push(record);
  return { approval: record, batch };
}

/** The optional fields of an admin upload, each of its type, and each of its SSP value rows as an upload
 *  carries one (SspValueInput): a malformed one is refused (400) with the field or the row (`values[2]`,
 *  counted from 0) and what is wrong with it, before anything is stored. */
function checkUploadFields(b: Record<string, unknown>): void {
  for (const k of ["file_name", "csv", "realm"]) {
    if (b[k] !== undefined && typeof b[k] !== "string") throw new EmuError(400, `${k} must be a string`, [{ field: k, message: "must be a string" }]);
  }
  if (b.rows !== undefined && !(Number.isSafeInteger(b.rows) && (b.rows as number) >= 0))
    throw new EmuError(400, "rows must be a whole number, 0 or more", [{ field: "rows", message: "must be a whole number, 0 or more" }]);
  if (b.values === undefined) return;
  if (!Array.isArray(b.values)) throw new EmuError(400, "values must be a list of SSP value rows", [{ field: "values", message: "must be a list" }]);
  const fn = apiValidator("SspValueInput");
  b.values.forEach((row, i) => {
    if (fn(row)) return;
    const problems = describeAjvErrors(fn.errors).map((e) => ({
      field: e.field === "(body)" ? `values[${i}]` : `values[${i}].${e.field}`,
      message: e.message,
    }));
    throw new EmuError(400, `values[${i}] is not an SSP value row: ${problems.map((e) => `${e.field} ${e.message}`).join("; ")}`, problems);
  });
}

/** POST /__admin/uploads (and an upload fault): a manual upload to the tenant of `realm`, or the first. */
export function manualUpload(state: EmulatorState, raw: unknown): object {
  const realm = (raw as { realm?: unknown } | null)?.realm;
  const t = typeof realm === "string" ? state.tenants.find((x) => x.realm === realm) : state.tenants[0];
  if (!t) throw new EmuError(404, "unknown tenant");
  return uploadFile(state, t, raw);
}
