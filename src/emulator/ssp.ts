/** The SSP policies and their batches (spec 4.3 to 4.7): the list, one policy, one batch with its values,
 *  the create, a batch's review and approve, the download of a batch's file and the template; and a batch
 *  a manual upload adds to a policy (POST /__admin/uploads). */
import type { SspCreateBatch, SspValueInput, SspCreateBody, SspEnvelope, SspItem } from "../schema/generated/api.js";
import { asTheServiceHoldsIt, templateCsv, valuesToCsv } from "../ssp/csv.js";
import { Reply } from "./reply.js";
import { json, only, type ApiResource } from "./resource.js";
import { bump, checkIfMatch, EmuError, epoch, requiredText, validate, type Caller } from "./service.js";
import { nextId, type EmulatorState, type StoredBatch, type StoredSspPolicy, type TenantState } from "./state.js";

const SSP = "/apis/policy-sets/v1/policy/ssp";
const CSV = "text/csv; charset=utf-8";

export const sspPolicies: ApiResource = {
  answer(req) {
    const { path, seg, t } = req;
    if (path === SSP) {
      if (req.method === "GET") return json(getSsp(t, req.query("policy_name"), req.query("batch_name")));
      only(req, "POST");
      return json(createSsp(req.state, t, req.caller, req.body()));
    }
    if (path === `${SSP}/template`) {
      only(req, "GET");
      return new Reply(200, sspTemplate(t, req.query("batch_name")), CSV);
    }
    // The spec declares batch_name a path parameter of a path without a placeholder (4.5): a tenant may
    // take it as a last segment, so the emulator does too (revsync.yaml service.template_batch_name).
    if (path.startsWith(`${SSP}/template/`) && seg.length === 8) {
      only(req, "GET");
      return new Reply(200, sspTemplate(t, seg[7] ?? ""), CSV);
    }
    if (path.startsWith(`${SSP}/download/`) && seg.length === 8) {
      only(req, "GET");
      return new Reply(200, downloadBatch(t, seg[7] ?? ""), CSV, { "content-disposition": `attachment; filename="${seg[7] ?? "batch"}.csv"` });
    }
    if (path.startsWith(`${SSP}/`) && seg.length === 9) {
      only(req, "PATCH");
      const opts = { fourEyes: req.settings.four_eyes, versionStep: req.settings.version_step };
      return json(batchAction(t, req.caller, seg[6] ?? "", seg[7] ?? "", seg[8] ?? "", req.ifMatch, opts));
    }
    return undefined;
  },
};

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

/** An uploaded SSP batch of an existing upload policy, stored as a new batch of it. */
export function uploadedBatch(state: EmulatorState, t: TenantState, b: Record<string, unknown>, user: string, now: number): StoredBatch {
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
