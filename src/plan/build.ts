import { UserError } from "../errors.js";
import type { DesiredBatch, DesiredSsp, DesiredState, DesiredTenantConfig } from "../config/repo.js";
import { UPDATABLE_TENANT_FIELDS } from "../config/rules.js";
import type { SspCreateBatch, SspCreateBody, SspCreateItem, SspItem, TenantConfigurationUpdateItem } from "../schema/generated/api.js";
import type { LivePolicy, LiveState } from "../live/read.js";
import { CsvSyntaxError } from "../ssp/csv.js";
import {
  ACTIONS,
  address,
  batchNameOf,
  DRIFT_CLASSES,
  PLAN_FORMAT_VERSION,
  planChecksum,
  summarize,
  targeted,
  type Change,
  type DriftItem,
  type DriftReport,
  type FieldDiff,
  type Plan,
} from "./model.js";
import { compareValues, compareValuesCsv, fieldDiff, keyedValues, normalizeSspFields, type ValuesDelta } from "./normalize.js";

/** The 14 fields of the update body (spec 4.2): the updatable ones and the guid. */
const UPDATE_FIELDS: (keyof TenantConfigurationUpdateItem)[] = [...UPDATABLE_TENANT_FIELDS, "guid"];

export const REASONS = {
  sspUpdate:
    "SSP policies have no update operation in the interface (spec 4.6 only creates): change this policy in the service's UI, or create a new policy under another name",
  batchMissing: "this batch does not exist in the service: upload its file there first (the interface has no upload for an existing policy)",
  batchBackwards: (from: string, to: string) => `a batch cannot move back from ${from} to ${to}`,
  batchValues: "the values of an uploaded batch cannot be changed through the interface: upload a new batch in the service",
  batchValuesBlocked: (status: string, rows: number, file: string) =>
    `blocked: the uploaded values differ from ${file} in ${rows} row(s), so revsync will not move this batch to ${status}: re-upload the batch with git's values in the service first (the interface cannot change uploaded values)`,
  calculatorCreate: "the create operation (spec 4.6) takes upload or formula policies; a calculator policy cannot be created through the interface",
  noTenant: "no tenant configuration of this name exists in the service, and the interface cannot create one",
  newBatchNoValues: "a batch of a new policy can only be created with it when it names a values file (and the policy's method is upload)",
} as const;

/** A difference the interface cannot write, shown with the reason and never applied. */
function unsupported(
  address: string,
  reason: string,
  o: Partial<Pick<Change, "before" | "after" | "diff" | "version_id" | "last_modified_on" | "source">> = {},
): Change {
  return { address, action: "unsupported", before: null, after: null, diff: [], version_id: null, last_modified_on: null, reason, ...o };
}

/** Rows that differ: a key counted once whether changed, only in git or only in the service. */
const countRows = (vdiff: FieldDiff[]): number => new Set(vdiff.map((x) => x.path)).size;

const pick = (o: Record<string, unknown>, keys: string[]): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, o[k]]));
const liveBatch = (lp: LivePolicy, name: string): SspItem | undefined => lp.batches?.find((b) => batchNameOf(b) === name);

/** What building a plan found that the plan itself cannot carry: problems (nothing may be sent) and
 *  notes (said once). */
export interface PlanFindings {
  problems: { file: string; line: number; column: number; message: string }[];
  /** Per policy, git's fields that were not compared because the service shows them as null. */
  unknown: Map<string, string[]>;
}

/** Comparable fields of a live SSP policy against git. A field the service answers as null (or leaves
 *  out) is unknown, not a change: it is not compared, and the plan says so once. */
function sspFieldDiff(d: DesiredSsp, lp: LivePolicy, findings?: PlanFindings): FieldDiff[] {
  const live = lp.item as unknown as Record<string, unknown>;
  const unknown: string[] = [];
  const keys = Object.keys(d.spec).filter((k) => {
    if (live[k] !== null && live[k] !== undefined) return true;
    unknown.push(k);
    return false;
  });
  if (unknown.length) findings?.unknown.set(d.name, unknown);
  return fieldDiff(normalizeSspFields(lp.item, keys), normalizeSspFields(d.spec as unknown as Record<string, unknown>, keys));
}

function valuesDiff(b: DesiredBatch, live: LiveState, policy: string): FieldDiff[] {
  if (!b.values) return [];
  const held = live.values.get(`${policy}/${b.name}`);
  if (!held) return [];
  const git = b.values;
  // The download is the uploaded file: byte-identical to git's file means the same values.
  if (!Array.isArray(held) && held.csv === git.text) return [];
  let delta: ValuesDelta;
  try {
    delta = Array.isArray(held) ? compareValues(keyedValues(git.rows), held) : compareValuesCsv(keyedValues(git.rows), held.csv);
  } catch (e) {
    if (!(e instanceof CsvSyntaxError)) throw e;
    throw new UserError(
      `the service's values file of ${address.batch(policy, b.name)} is not valid CSV (line ${e.line}: ${e.message}), so it cannot be compared with git`,
    );
  }
  const out: FieldDiff[] = [];
  for (const k of delta.changed) out.push({ path: `values[${k}]`, kind: "changed" });
  for (const k of delta.added) out.push({ path: `values[${k}]`, kind: "added" });
  for (const k of delta.removed) out.push({ path: `values[${k}]`, kind: "removed" });
  return out;
}

/** Fields a policy file must set for plan to create the policy (spec 4.6 requires them; the others default). */
export const CREATE_REQUIRED = ["method", "active", "hierarchy_no", "data_identifiers", "floor_percentage", "ceiling_percentage"] as const;

/** The create body's item for a policy of git, or the fields it lacks for one. */
export function createItem(d: DesiredSsp): { item: SspCreateItem; missing: [] } | { item?: undefined; missing: string[] } {
  const s = d.spec;
  const missing = CREATE_REQUIRED.filter((k) => s[k] === undefined);
  if (
    s.active === undefined ||
    s.hierarchy_no === undefined ||
    !s.data_identifiers ||
    s.floor_percentage === undefined ||
    s.ceiling_percentage === undefined ||
    missing.length
  ) {
    return { missing };
  }
  const item: SspCreateItem = {
    active: s.active,
    can_delete: s.can_delete ?? true,
    ceiling_percentage: s.ceiling_percentage,
    data_identifiers: s.data_identifiers,
    entity_type: s.entity_type ?? "policy",
    expression: s.expression ?? "",
    floor_percentage: s.floor_percentage,
    hierarchy_no: s.hierarchy_no,
    is_user_defined: s.is_user_defined ?? true,
    method: s.method === "formula" ? "formula" : "upload",
    name: d.name,
    transaction_above_range: s.transaction_above_range ?? "",
    transaction_below_range: s.transaction_below_range ?? "",
    transaction_mid_range: s.transaction_mid_range ?? "",
    type: s.type ?? "SSP",
    when: s.when ?? [],
  };
  return { item, missing: [] };
}

function uploadBatch(b: DesiredBatch): SspCreateBatch | undefined {
  if (!b.values) return undefined;
  const values = b.values.rows.map(({ line: _line, ...v }) => v);
  const starts = values.map((v) => v.effective_start_date).sort();
  const ends = values.map((v) => v.effective_end_date).sort();
  return {
    batch_name: b.name,
    file_name: b.values.file,
    effective_start_date: b.effective_start_date ?? starts[0] ?? "",
    effective_end_date: b.effective_end_date ?? ends[ends.length - 1] ?? "",
    ssp_values: values,
  };
}

function tenantChange(d: DesiredTenantConfig, live: LiveState): Change | undefined {
  const addr = address.tenant(d.name);
  const env = live.tenantConfigs.find((e) => e.compliance_name === d.name);
  const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
  if (!env || !item) {
    return unsupported(addr, REASONS.noTenant, { after: d.spec, source: `${d.source.file}:${d.source.line}` });
  }
  const keys = Object.keys(d.spec);
  const before = pick(item, keys);
  const diff = fieldDiff(before, d.spec);
  if (!diff.length) return undefined;
  const merged = { ...pick(item, UPDATE_FIELDS), ...d.spec, guid: item.guid } as TenantConfigurationUpdateItem;
  return {
    address: addr,
    action: "update",
    before,
    after: d.spec,
    diff,
    version_id: env.version_id ?? null,
    last_modified_on: env.last_modified_on ?? null,
    source: `${d.source.file}:${d.source.line}`,
    payload: { kind: "update", compliance_id: env.compliance_id ?? "", compliance_name: d.name, unique_key: env.unique_key ?? "", item: merged },
  };
}

function batchSteps(
  policy: string,
  b: DesiredBatch,
  from: string | null,
  version: { id: string | null; on: number | null; compliance_id: string | null },
): Change[] {
  const addr = address.batch(policy, b.name);
  const step = (action: "review" | "approve", before: string | null, after: string): Change => ({
    address: addr,
    action,
    before: { status: before },
    after: { status: after },
    diff: [{ path: "status", kind: before === null ? "added" : "changed", before, after }],
    version_id: version.id,
    last_modified_on: version.on,
    payload: { kind: "batch", compliance_id: version.compliance_id, policy, batch: b.name },
  });
  const cannot = (reason: string): Change[] => [
    unsupported(addr, reason, {
      before: { status: from },
      after: { status: b.status },
      diff: [{ path: "status", kind: "changed", before: from, after: b.status }],
      version_id: version.id,
      last_modified_on: version.on,
    }),
  ];
  if (from === "file uploaded" || from === null) {
    const r = step("review", from, "reviewed");
    return b.status === "approved" ? [r, step("approve", "reviewed", "approved")] : [r];
  }
  if (from === "reviewed") return b.status === "approved" ? [step("approve", "reviewed", "approved")] : [];
  if (from === "approved") return b.status === "approved" ? [] : cannot(REASONS.batchBackwards(from, b.status));
  return cannot(`the batch's status ${JSON.stringify(from)} has no transition to ${b.status}`);
}

function sspChanges(d: DesiredSsp, live: LiveState, targets: string[], findings: PlanFindings): Change[] {
  const out: Change[] = [];
  const addr = address.ssp(d.name);
  const lp = live.ssp.get(d.name);
  const source = `${d.source.file}:${d.source.line}`;
  if (!lp) {
    if (!targeted(addr, targets)) return out;
    if (d.spec.method === "calculator") {
      out.push(unsupported(addr, REASONS.calculatorCreate, { after: d.spec, source }));
      return out;
    }
    const made = createItem(d);
    if (!made.item) {
      findings.problems.push({
        ...d.specSource,
        message: `ssp/${d.name} does not exist in the service, and creating it needs ${made.missing.join(", ")} in spec`,
      });
      return out;
    }
    const item = made.item;
    const uploads = d.spec.method === "upload" ? d.batches.map(uploadBatch).filter((b): b is SspCreateBatch => !!b) : [];
    const body: SspCreateBody = {
      compliance_name: d.name,
      unique_key: d.name,
      format_type: "JSON",
      compliance_spec: [uploads.length ? { ...item, batches: uploads } : item],
    };
    out.push({
      address: addr,
      action: "create",
      before: null,
      after: item,
      diff: Object.entries(item).map(([path, after]) => ({ path, kind: "added" as const, after })),
      version_id: null,
      last_modified_on: null,
      source,
      payload: { kind: "create", body, hierarchy_no: item.hierarchy_no },
    });
    for (const b of d.batches) {
      if (!targeted(address.batch(d.name, b.name), targets)) continue;
      if (uploads.some((u) => u.batch_name === b.name)) out.push(...batchSteps(d.name, b, null, { id: null, on: null, compliance_id: null }));
      else out.push(unsupported(address.batch(d.name, b.name), REASONS.newBatchNoValues, { after: { status: b.status }, source }));
    }
    return out;
  }
  const version = { id: lp.envelope.version_id ?? null, on: lp.envelope.last_modified_on ?? null, compliance_id: lp.envelope.compliance_id ?? null };
  if (targeted(addr, targets)) {
    const diff = sspFieldDiff(d, lp, findings);
    if (diff.length) {
      out.push(
        unsupported(addr, REASONS.sspUpdate, {
          before: Object.fromEntries(diff.map((x) => [x.path, x.before])),
          after: Object.fromEntries(diff.map((x) => [x.path, x.after])),
          diff,
          version_id: version.id,
          last_modified_on: version.on,
          source,
        }),
      );
    }
  }
  for (const b of d.batches) {
    const baddr = address.batch(d.name, b.name);
    if (!targeted(baddr, targets)) continue;
    const lb = liveBatch(lp, b.name);
    if (!lb) {
      out.push(unsupported(baddr, REASONS.batchMissing, { after: { status: b.status }, version_id: version.id, last_modified_on: version.on, source }));
      continue;
    }
    // Never review or approve values that nobody reviewed: when the service's values differ from git's,
    // the batch gets one blocked entry and no review or approve.
    const vdiff = valuesDiff(b, live, d.name);
    if (!vdiff.length) {
      out.push(...batchSteps(d.name, b, lb.status ?? "", version));
      continue;
    }
    const from = lb.status ?? "";
    const moving = from !== b.status && from !== "approved";
    const reason = moving ? REASONS.batchValuesBlocked(b.status, countRows(vdiff), b.valuesShown ?? "git's file") : REASONS.batchValues;
    out.push(
      unsupported(baddr, reason, {
        before: { status: from },
        after: { status: b.status },
        diff: vdiff,
        version_id: version.id,
        last_modified_on: version.on,
        source,
      }),
    );
  }
  return out;
}

const ORDER: Record<string, number> = { update: 0, create: 1, review: 2, approve: 3, unsupported: 4 };

export interface PlanMeta {
  environment: string;
  baseUrl: string;
  authUrl: string;
  realm: string;
  user: string | null;
  targets: string[];
  now?: Date;
}

export function buildPlan(desired: DesiredState, live: LiveState, meta: PlanMeta): Plan {
  const changes: Change[] = [];
  for (const d of desired.tenantConfigs) {
    if (!targeted(address.tenant(d.name), meta.targets)) continue;
    const c = tenantChange(d, live);
    if (c) changes.push(c);
  }
  const findings: PlanFindings = { problems: [], unknown: new Map() };
  for (const d of desired.ssp) changes.push(...sspChanges(d, live, meta.targets, findings));
  if (findings.problems.length) {
    throw new UserError(
      `the plan cannot be made, so nothing was sent:\n  ${findings.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`).join("\n  ")}`,
      "add the fields to the policy file (revsync validate checks them offline)",
    );
  }
  const notes: string[] = [];
  if (findings.unknown.size) {
    const names = [...findings.unknown].map(([n, f]) => `${n} (${f.join(", ")})`);
    notes.push(`the service shows no value (null) for these fields, so git's values for them were not compared: ${names.join("; ")}`);
  }
  const hierarchy = (c: Change): number => (c.payload?.kind === "create" ? c.payload.hierarchy_no : 0);
  changes.sort((a, b) => (ORDER[a.action] ?? 9) - (ORDER[b.action] ?? 9) || hierarchy(a) - hierarchy(b) || a.address.localeCompare(b.address));
  return {
    format_version: "1",
    environment: meta.environment,
    created_at: (meta.now ?? new Date()).toISOString(),
    base_url: meta.baseUrl,
    auth_url: meta.authUrl,
    realm: meta.realm,
    user: meta.user,
    targets: meta.targets,
    changes,
    summary: summarize(ACTIONS, changes as unknown as { [k: string]: unknown }[], "action"),
    notes,
    checksum: planChecksum({ environment: meta.environment, base_url: meta.baseUrl, auth_url: meta.authUrl, realm: meta.realm, changes }),
  };
}

/** Drift: everything in which live differs from git, including what plan cannot act on. */
export function buildDrift(desired: DesiredState, live: LiveState, meta: { environment: string; targets: string[]; now?: Date }): DriftReport {
  const items: DriftItem[] = [];
  const t = meta.targets;
  for (const d of desired.tenantConfigs) {
    const addr = address.tenant(d.name);
    if (!targeted(addr, t)) continue;
    const env = live.tenantConfigs.find((e) => e.compliance_name === d.name);
    const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
    if (!item) {
      items.push({ address: addr, class: "missing", diff: [], message: "in git, not in the service" });
      continue;
    }
    // In drift, before is what git says and after what the service holds.
    const diff = fieldDiff(d.spec, pick(item, Object.keys(d.spec))).map((x) => ({ ...x, kind: "changed" as const }));
    if (diff.length)
      items.push({ address: addr, class: "changed", diff, message: `${diff.length} field(s) differ from git: ${diff.map((x) => x.path).join(", ")}` });
  }
  for (const env of live.tenantConfigs) {
    const name = env.compliance_name ?? "";
    if (targeted(address.tenant(name), t) && desired.tenantConfigs.length > 0 && !desired.tenantConfigs.some((d) => d.name === name)) {
      items.push({ address: address.tenant(name), class: "unmanaged", diff: [], message: "in the service, not in git" });
    }
  }
  for (const d of desired.ssp) {
    const addr = address.ssp(d.name);
    const lp = live.ssp.get(d.name);
    if (!lp) {
      if (targeted(addr, t)) items.push({ address: addr, class: "missing", diff: [], message: "in git, not in the service" });
      continue;
    }
    if (targeted(addr, t)) {
      const diff = sspFieldDiff(d, lp).map((x) => ({ ...x, before: x.after, after: x.before }));
      if (diff.length)
        items.push({ address: addr, class: "changed", diff, message: `${diff.length} field(s) differ from git: ${diff.map((x) => x.path).join(", ")}` });
    }
    for (const b of d.batches) {
      const baddr = address.batch(d.name, b.name);
      if (!targeted(baddr, t)) continue;
      const lb = liveBatch(lp, b.name);
      if (!lb) {
        items.push({ address: baddr, class: "missing", diff: [], message: "batch in git, not in the service" });
        continue;
      }
      if (lb.status !== b.status) {
        items.push({
          address: baddr,
          class: "batch_status",
          diff: [{ path: "status", kind: "changed", before: b.status, after: lb.status }],
          message: `status is ${JSON.stringify(lb.status)}, git says ${JSON.stringify(b.status)}`,
        });
      }
      const vdiff = valuesDiff(b, live, d.name);
      if (vdiff.length) {
        const n = (k: string): number => vdiff.filter((x) => x.kind === k).length;
        items.push({
          address: baddr,
          class: "batch_values",
          diff: vdiff.slice(0, 50),
          message: `values differ from ${b.valuesShown}: ${n("changed")} changed, ${n("added")} only in git, ${n("removed")} only in the service`,
        });
      }
    }
  }
  // A live batch that git does not list, of a policy git manages: plan leaves it alone, drift says so.
  for (const d of desired.ssp) {
    const lp = live.ssp.get(d.name);
    for (const lb of lp?.batches ?? []) {
      const name = batchNameOf(lb);
      const baddr = address.batch(d.name, name);
      if (!targeted(baddr, t) || d.batches.some((b) => b.name === name)) continue;
      items.push({
        address: baddr,
        class: "unmanaged_batch",
        diff: [{ path: "status", kind: "removed", before: undefined, after: lb.status ?? null }],
        message: `batch in the service (status ${JSON.stringify(lb.status ?? null)}), not listed in git`,
      });
    }
  }
  for (const name of live.ssp.keys()) {
    if (targeted(address.ssp(name), t) && !desired.ssp.some((d) => d.name === name)) {
      items.push({ address: address.ssp(name), class: "unmanaged", diff: [], message: "in the service, not in git" });
    }
  }
  // Who drifted: the live envelope of the policy concerned (the policy of a batch).
  const attributed = items.map((item) => {
    const [kind, ...rest] = item.address.split("/");
    const name = rest.join("/").split("/batch/")[0] ?? "";
    const env = kind === "tenant-configuration" ? live.tenantConfigs.find((e) => e.compliance_name === name) : live.ssp.get(name)?.envelope;
    const on = env?.last_modified_on;
    return { ...item, modified_by: env?.last_modified_by ?? null, modified_on: typeof on === "number" ? new Date(on * 1000).toISOString() : null };
  });
  return {
    format_version: PLAN_FORMAT_VERSION,
    environment: meta.environment,
    created_at: (meta.now ?? new Date()).toISOString(),
    drift: attributed,
    summary: summarize(DRIFT_CLASSES, items as unknown as { [k: string]: unknown }[], "class"),
  };
}
