import type {
  ApprovalActionBody,
  SspCreateBatch,
  SspValueInput,
  ErrorTransactionFilter,
  PendingApprovalRecord,
  SspCreateBody,
  SspEnvelope,
  SspItem,
  TenantConfigurationUpdateBody,
} from "../schema/generated/api.js";
import { apiValidator, describeAjvErrors } from "../schema/ajv.js";
import { asTheServiceHoldsIt, templateCsv, valuesToCsv } from "../ssp/csv.js";
import { nextId, type EmulatorState, type StoredApproval, type StoredBatch, type StoredSspPolicy, type TenantState } from "./state.js";

/** A refusal with its status (docs/decisions.md, "Failure statuses") and the error array the client reads. */
export class EmuError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: { field?: string; message: string }[] = [{ message }],
  ) {
    super(message);
  }
  body(): object {
    return { status: this.status, message: this.message, error: this.errors };
  }
}

export interface Caller {
  user: string;
  roles: string[];
}

const epoch = (): number => Math.floor(Date.now() / 1000);

function validate<T>(definition: string, body: unknown): T {
  const fn = apiValidator(definition);
  if (!fn(body)) throw new EmuError(400, "invalid request body", describeAjvErrors(fn.errors));
  return body as T;
}

function bump(env: { version_id: string; last_modified_on: number; last_modified_by: string }, user: string, step = 1): void {
  env.version_id = String(Number(env.version_id) + step);
  // last_modified_on never goes backwards nor stands still across writes, even within one second.
  env.last_modified_on = Math.max(epoch(), env.last_modified_on + 1);
  env.last_modified_by = user;
}

function checkIfMatch(ifMatch: string | undefined, version: string): void {
  if (ifMatch !== undefined && ifMatch.replace(/^W\/|"/g, "") !== version) {
    throw new EmuError(412, `precondition failed: version_id is ${version}, not ${ifMatch}`, [
      { field: "If-Match", message: `the resource is at version_id ${version}` },
    ]);
  }
}

// ---- tenant configuration (4.1, 4.2)

export function listTenantConfigurations(t: TenantState): unknown {
  return t.tenantConfigurations;
}

export function patchTenantConfiguration(t: TenantState, caller: Caller, id: string, raw: unknown, ifMatch: string | undefined, versionStep = 1): unknown {
  const body = validate<TenantConfigurationUpdateBody>("TenantConfigurationUpdateBody", raw);
  const env = t.tenantConfigurations.find((e) => e.compliance_id === id);
  if (!env) throw new EmuError(404, `no tenant configuration with compliance_id ${id}`);
  checkIfMatch(ifMatch, env.version_id ?? "1");
  const live = env.compliance_spec?.[0];
  if (!live) throw new EmuError(409, "tenant configuration has no policy item");
  const problems: { field: string; message: string }[] = [];
  if (body.unique_key !== env.unique_key) problems.push({ field: "unique_key", message: "does not match the policy's unique_key" });
  if (body.compliance_name !== env.compliance_name) problems.push({ field: "compliance_name", message: "does not match the policy's name" });
  if (body.compliance_spec.length !== 1) problems.push({ field: "compliance_spec", message: "must hold exactly one item" });
  const item = body.compliance_spec[0];
  if (item && item.guid !== live.guid) problems.push({ field: "compliance_spec.0.guid", message: "does not match the live guid" });
  if (problems.length) throw new EmuError(400, "invalid request body", problems);
  if (!item) throw new EmuError(400, "invalid request body");
  Object.assign(live, item, { updated_at: epoch(), updated_by: caller.user });
  bump(env as { version_id: string; last_modified_on: number; last_modified_by: string }, caller.user, versionStep);
  return {
    compliance_id: env.compliance_id,
    compliance_details: [{ error: [], message: "Tenant configuration updated", unique_key: env.unique_key }],
    error: [],
  };
}

// ---- SSP (4.3 to 4.7)

function policySummary(p: StoredSspPolicy, withBatches: boolean): SspEnvelope {
  const item: SspItem = { ...p.item };
  if (withBatches) item.batches = p.batches.map(({ ssp_values: _v, ...b }) => b);
  return {
    compliance_id: p.compliance_id,
    compliance_name: p.compliance_name,
    compliance_spec: [item],
    created_by: p.created_by,
    created_on: p.created_on,
    last_modified_by: p.last_modified_by,
    last_modified_on: p.last_modified_on,
    policy_type: p.policy_type,
    status: p.status,
    unique_key: p.unique_key,
    version_id: p.version_id,
  };
}

/** 4.3: no filter lists policies (without batches); policy_name gives one policy with its batches;
 *  batch_name gives that batch with its SSP values. */
export function getSsp(t: TenantState, policyName?: string, batchName?: string): unknown {
  if (policyName === undefined && batchName === undefined) return t.ssp.map((p) => policySummary(p, false));
  const candidates = policyName === undefined ? t.ssp : t.ssp.filter((p) => p.compliance_name === policyName);
  if (candidates.length === 0) throw new EmuError(404, `no SSP policy named ${JSON.stringify(policyName)}`);
  if (batchName === undefined) return candidates.map((p) => policySummary(p, true));
  const found = candidates.flatMap((p) => p.batches.filter((b) => b.batch_name === batchName).map((b) => ({ p, b })));
  if (found.length === 0) throw new EmuError(404, `no SSP batch named ${JSON.stringify(batchName)}`);
  return found.map(({ p, b }) => ({ ...policySummary(p, false), compliance_spec: [b] }));
}

export function createSsp(state: EmulatorState, t: TenantState, caller: Caller, raw: unknown): unknown {
  const body = validate<SspCreateBody>("SspCreateBody", raw);
  const item = body.compliance_spec[0];
  if (!item) throw new EmuError(400, "invalid request body");
  const problems: { field: string; message: string }[] = [];
  if (item.name !== body.compliance_name) problems.push({ field: "compliance_spec.0.name", message: "must equal compliance_name" });
  if (item.method === "formula" && item.expression.trim() === "")
    problems.push({ field: "compliance_spec.0.expression", message: "is required for a formula policy" });
  if (item.floor_percentage > item.ceiling_percentage)
    problems.push({ field: "compliance_spec.0.floor_percentage", message: "must not be above ceiling_percentage" });
  if (item.method !== "upload" && item.batches?.length)
    problems.push({ field: "compliance_spec.0.batches", message: "only an upload policy can carry batches" });
  const seen = new Set<string>();
  for (const [i, b] of (item.batches ?? []).entries()) {
    if (seen.has(b.batch_name)) problems.push({ field: `compliance_spec.0.batches.${i}.batch_name`, message: "is a duplicate" });
    seen.add(b.batch_name);
  }
  if (problems.length) throw new EmuError(400, "invalid request body", problems);
  if (t.ssp.some((p) => p.compliance_name === body.compliance_name)) {
    throw new EmuError(409, `an SSP policy named ${JSON.stringify(body.compliance_name)} already exists`, [
      { field: "compliance_name", message: "already exists" },
    ]);
  }
  const now = epoch();
  const id = nextId(state, "SSP-");
  const { batches: inputBatches, ...fields } = item;
  const stamp = { created_at: now, created_by: caller.user, updated_at: now, updated_by: caller.user };
  const batches = (inputBatches ?? []).map((b) => storeBatch(state, t, { policy: body.compliance_name, method: "upload", user: caller.user, now, batch: b }));
  t.ssp.push({
    compliance_id: id,
    compliance_name: body.compliance_name,
    created_by: caller.user,
    created_on: now,
    last_modified_by: caller.user,
    last_modified_on: now,
    policy_type: "SSP",
    status: "Active",
    unique_key: nextId(state, "uk-"),
    version_id: "1",
    item: { ...fields, ...stamp },
    batches,
  });
  return { compliance_id: id, compliance_details: [{ error: [], message: "SSP policy created", unique_key: body.compliance_name }], error: [] };
}

/** A batch as an upload leaves it: values with their ids, the file kept for download, status "file uploaded". */
function storeBatch(
  state: EmulatorState,
  t: TenantState,
  o: { policy: string; method: SspItem["method"]; user: string; now: number; batch: SspCreateBatch; csv?: string },
): StoredBatch {
  const fileId = nextId(state, "FILE-");
  const values = o.batch.ssp_values.map((v) => ({ ...v, ssp_value_id: nextId(state, "SV") }));
  t.files[fileId] = o.csv ?? valuesToCsv(values, asTheServiceHoldsIt);
  return {
    created_at: o.now,
    created_by: o.user,
    updated_at: o.now,
    updated_by: o.user,
    can_delete: true,
    is_user_defined: true,
    entity_type: "batch",
    name: o.batch.batch_name,
    batch_name: o.batch.batch_name,
    policy_name: o.policy,
    method: o.method,
    status: "file uploaded",
    file_id: fileId,
    file_name: o.batch.file_name ?? `${o.batch.batch_name}.csv`,
    effective_start_date: o.batch.effective_start_date,
    effective_end_date: o.batch.effective_end_date,
    timestamp: o.now,
    ssp_values: values,
  };
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

/** A text field of an admin request, required (or its default). */
const requiredText =
  (b: Record<string, unknown>) =>
  (k: string, dflt?: string): string => {
    const v = b[k] ?? dflt;
    if (typeof v !== "string" || v === "") throw new EmuError(400, `${k} is required (a string)`);
    return v;
  };

/** An uploaded SSP batch of an existing upload policy, stored as a new batch of it. */
function uploadedBatch(state: EmulatorState, t: TenantState, b: Record<string, unknown>, user: string, now: number): StoredBatch {
  const str = requiredText(b);
  const policy = t.ssp.find((p) => p.compliance_name === str("policy_name"));
  if (!policy) throw new EmuError(404, "no such SSP policy");
  if (policy.item.method === "formula") throw new EmuError(409, "a formula policy has no uploaded batches");
  const batchName = str("batch_name");
  // The spec promises no unique batch names: `duplicate` ("first" or "last") stores a second batch of a
  // name the policy holds, listed before or after the first.
  const duplicate = b.duplicate;
  if (duplicate !== undefined && duplicate !== "first" && duplicate !== "last")
    throw new EmuError(400, 'duplicate must be "first" or "last"', [{ field: "duplicate", message: 'must be "first" or "last"' }]);
  if (!duplicate && policy.batches.some((x) => x.batch_name === batchName)) throw new EmuError(409, "a batch of that name exists");
  const input: SspCreateBatch = {
    batch_name: batchName,
    file_name: typeof b.file_name === "string" ? b.file_name : undefined,
    effective_start_date: str("effective_start_date", "2026-01-01"),
    effective_end_date: str("effective_end_date", "2026-12-31"),
    ssp_values: Array.isArray(b.values) ? (b.values as SspValueInput[]) : [],
  };
  const batch = storeBatch(state, t, {
    policy: policy.compliance_name,
    method: policy.item.method ?? "upload",
    user,
    now,
    batch: input,
    csv: typeof b.csv === "string" ? b.csv : undefined,
  });
  if (duplicate === "first") policy.batches.unshift(batch);
  else policy.batches.push(batch);
  bump(policy, user);
  return batch;
}

/** `fourEyes`: the user who reviewed a batch cannot approve it, nor the user who uploaded it (as the
 *  interface's rule refuses an uploader approving their own file). Who did is what the batch says: a
 *  reviewed batch's updated_by is its reviewer (nothing else changes a reviewed batch), its created_by
 *  its uploader (an upload, or the create that carried it). */
export function batchAction(
  t: TenantState,
  caller: Caller,
  action: string,
  id: string,
  batchName: string,
  ifMatch: string | undefined,
  opts: { fourEyes?: boolean; versionStep?: number } = {},
): unknown {
  const fourEyes = opts.fourEyes === true;
  if (action !== "review" && action !== "approve") throw new EmuError(404, `unknown SSP batch action ${JSON.stringify(action)}`);
  const p = t.ssp.find((x) => x.compliance_id === id);
  if (!p) throw new EmuError(404, `no SSP policy with compliance_id ${id}`);
  checkIfMatch(ifMatch, p.version_id);
  if (p.item.method === "formula") {
    throw new EmuError(409, `${p.compliance_name} is a formula policy: its batches cannot be reviewed or approved`);
  }
  const b = p.batches.find((x) => x.batch_name === batchName);
  if (!b) throw new EmuError(404, `no batch ${JSON.stringify(batchName)} in ${p.compliance_name}`);
  const from = action === "review" ? "file uploaded" : "reviewed";
  const to = action === "review" ? "reviewed" : "approved";
  if (b.status !== from) {
    throw new EmuError(409, `cannot ${action} batch ${batchName}: its status is ${JSON.stringify(b.status)}, expected ${JSON.stringify(from)}`, [
      { field: "status", message: `is ${b.status}` },
    ]);
  }
  if (fourEyes && action === "approve" && b.updated_by === caller.user) {
    throw new EmuError(403, `four eyes: ${caller.user} reviewed batch ${batchName} and cannot approve it; another user must`, [
      { field: "user", message: `${caller.user} reviewed this batch` },
    ]);
  }
  if (fourEyes && action === "approve" && b.created_by === caller.user) {
    throw new EmuError(403, `four eyes: ${caller.user} uploaded batch ${batchName} and cannot approve it; another user must`, [
      { field: "user", message: `${caller.user} uploaded this batch` },
    ]);
  }
  const now = epoch();
  Object.assign(b, { status: to, updated_at: now, updated_by: caller.user, timestamp: now, can_delete: to !== "approved" });
  bump(p, caller.user, opts.versionStep);
  return {
    compliance_id: p.compliance_id,
    compliance_details: [{ error: [], message: `Batch ${batchName} ${to}`, unique_key: p.compliance_name }],
    error: [],
  };
}

export function downloadBatch(t: TenantState, fileId: string): string {
  const csv = t.files[fileId];
  if (csv === undefined) throw new EmuError(404, `no uploaded file with file_id ${fileId}`);
  return csv;
}

export function sspTemplate(t: TenantState, batchName: string | undefined): string {
  if (batchName !== undefined && !t.ssp.some((p) => p.batches.some((b) => b.batch_name === batchName))) {
    throw new EmuError(404, `no SSP batch named ${JSON.stringify(batchName)}`);
  }
  return templateCsv();
}

// ---- approvals (4.8, 4.9, rules of 3.1)

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

// ---- error transactions (4.10)

export function errorTransactions(t: TenantState, raw: unknown): unknown {
  const f = validate<ErrorTransactionFilter>("ErrorTransactionFilter", raw);
  if (f.error_from_date && f.error_to_date && f.error_from_date > f.error_to_date) {
    throw new EmuError(400, "error_from_date is after error_to_date", [{ field: "error_from_date", message: "must not be after error_to_date" }]);
  }
  const records = t.errorTransactions.records.filter(
    (r) =>
      r.transaction_type === f.transaction_type.toUpperCase() &&
      (f.error_warning_type === undefined || r.error_warning_type === f.error_warning_type) &&
      (f.error_warning_code === undefined || r.error_warning_code === f.error_warning_code) &&
      (f.error_request_id === undefined || r.request_id === f.error_request_id) &&
      (f.financial_id === undefined || r.document_identifier === f.financial_id) &&
      (f.error_from_date === undefined || (r.error_date ?? "") >= f.error_from_date) &&
      (f.error_to_date === undefined || (r.error_date ?? "") <= f.error_to_date) &&
      (f.legal_entity === undefined || r.document_details?.legal_entity === f.legal_entity),
  );
  return [
    {
      compliance_id: t.errorTransactions.compliance_id,
      compliance_name: t.errorTransactions.compliance_name,
      compliance_spec: records,
      total_records: String(records.length),
    },
  ];
}
