import { posix } from "node:path";
import { UserError } from "../errors.js";
import type { DesiredBatch, DesiredSsp, DesiredState, DesiredTenantConfig } from "../config/repo.js";
import { UPDATABLE_TENANT_FIELDS } from "../config/rules.js";
import type { SspCreateBatch, SspCreateBody, SspCreateItem, SspItem, TenantConfigurationUpdateItem } from "../schema/generated/api.js";
import type { LivePolicy, LiveState } from "../live/read.js";
import { CsvSyntaxError } from "../ssp/csv.js";
import { plural } from "../words.js";
import {
  ACTIONS,
  DRIFT_CLASSES,
  PLAN_FORMAT_VERSION,
  planChecksum,
  summarize,
  type Change,
  type DriftItem,
  type DriftReport,
  type Plan,
  type ValuesSummary,
} from "./model.js";
import { compareValues, keyedValues, valuesChecksum, type HeldValues } from "./values.js";
import { address, batchNameOf, byCodePoint, targeted, valuesFileFor } from "../shared/address.js";
import { canonicalConditions, fieldDiff, normalizeSspFields, type FieldDiff } from "../shared/normalize.js";

/** The 14 fields of the update body (spec 4.2): the updatable ones and the guid. */
export const UPDATE_FIELDS: (keyof TenantConfigurationUpdateItem)[] = [...UPDATABLE_TENANT_FIELDS, "guid"];

/** How many differing rows of a batch's values a plan or drift entry shows, field by field. */
export const VALUE_ROWS_SHOWN = 20;

export const REASONS = {
  sspUpdate:
    "SSP policies have no update operation in the interface (spec 4.6 only creates): change this policy in the service's UI, or create a new policy under another name",
  batchMissing: "this batch does not exist in the service: upload its file there first (the interface has no upload for an existing policy)",
  batchBackwards: (from: string, to: string) => `a batch cannot move back from ${from} to ${to}`,
  batchValues: "the values of an uploaded batch cannot be changed through the interface: upload a new batch in the service",
  batchValuesBlocked: (status: string, rows: number, file: string) =>
    `the service's values differ from ${file} in ${plural(rows, "row")}, so revsync will not move this batch to ${status}: re-upload the batch with git's values in the service first (the interface cannot change uploaded values), or make ${file} hold the values you reviewed`,
  batchNoValues: (status: string, how: string) =>
    `git holds no values for this batch, so revsync will not move it to ${status} (values nobody reviewed are never reviewed or approved): ${how}`,
  batchValuesUnread: (status: string) => `the service's values of this batch could not be read, so revsync will not move it to ${status}`,
  calculatorCreate: "the create operation (spec 4.6) takes upload or formula policies; a calculator policy cannot be created through the interface",
  noTenant: "no tenant configuration of this name exists in the service, and the interface cannot create one",
  newBatchNoValues: "a batch of a new policy can only be created with it when it names a values file (and the policy's method is upload)",
  hierarchyHeld: (n: number, holders: string) =>
    `hierarchy_no ${n} is held by the active live ${holders}: two policies in one place of the hierarchy make it undefined which one prices an order line, so revsync will not create this one; give it a hierarchy_no no active policy holds`,
  rename: (n: number, old: string, name: string) =>
    `hierarchy_no ${n} is held by the active live policy ${JSON.stringify(old)}, which is not in git and has the same conditions: this looks like a rename. The interface cannot rename, update or delete an SSP policy: deactivate or delete ${JSON.stringify(old)} in the service first (then plan again: it creates ${JSON.stringify(name)}), or keep the old name in git`,
  createBlocked: (policy: string) => `the create of ${policy} is blocked, so nothing is done for its batches`,
  notInGitPolicy: (name: string) =>
    `the service holds this SSP policy and git has no file for it. The interface has no update or delete for SSP policies: deactivate or delete it in the service, or keep it by adding its file (revsync export --dir DIR --target ${JSON.stringify(address.ssp(name))} writes one)`,
  notInGitBatch: (policy: string) =>
    `the service holds this batch and git does not list it, so revsync never moves it: add it to the batches of ${JSON.stringify(policy)} in git (with its status and values), or leave it in the service (revsync export --dir DIR --target ${JSON.stringify(address.ssp(policy))} writes the policy's file with it)`,
  notInGitTenant:
    "the service holds this tenant configuration and git has no file for it (the interface cannot create or delete one): add its file to manage it",
} as const;

type Extra = Partial<Pick<Change, "before" | "after" | "diff" | "version_id" | "last_modified_on" | "source" | "diff_rows">>;

/** An entry apply never acts on: a difference the interface cannot write, a write revsync refuses, or
 *  something the service holds that git does not; always shown with the reason. */
function shown(action: "unsupported" | "blocked" | "not_in_git", address: string, reason: string, o: Extra = {}): Change {
  return { address, action, before: null, after: null, diff: [], version_id: null, last_modified_on: null, reason, ...o };
}

const pick = (o: Record<string, unknown>, keys: string[]): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, o[k]]));
const liveBatch = (lp: LivePolicy, name: string): SspItem | undefined => lp.batches?.find((b) => batchNameOf(b) === name);
const isoOf = (epoch: unknown): string | null => (typeof epoch === "number" ? new Date(epoch * 1000).toISOString() : null);

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

interface ValuesDiff {
  diff: FieldDiff[];
  /** Rows that differ in all (changed, only in git, only in the service); the diff shows the first ones. */
  total: number;
  changed: number;
  added: number;
  removed: number;
}

/** git's values file against the values the service holds, row by row and field by field, in key order:
 *  the first VALUE_ROWS_SHOWN differing rows are in the diff, all are counted. In a plan `before` is the
 *  service's value and `after` git's; in drift the other way round. */
function valuesDiff(git: NonNullable<DesiredBatch["values"]>, held: HeldValues, where: string, side: "plan" | "drift"): ValuesDiff {
  // The download is the uploaded file: byte-identical to git's file means the same values.
  if (!Array.isArray(held) && (held as { csv: string }).csv === git.text) return { diff: [], total: 0, changed: 0, added: 0, removed: 0 };
  let delta;
  try {
    delta = compareValues(keyedValues(git.rows), held);
  } catch (e) {
    if (!(e instanceof CsvSyntaxError)) throw e;
    throw new UserError(`the service's values file of ${where} is not valid CSV (line ${e.line}: ${e.message}), so it cannot be compared with git`);
  }
  const rows: { key: string; diff: FieldDiff[] }[] = [];
  for (const c of delta.changed) {
    rows.push({
      key: c.key,
      diff: c.fields.map((f) => ({
        path: `values[${c.key}].${f.field}`,
        kind: "changed" as const,
        before: side === "plan" ? f.service : f.git,
        after: side === "plan" ? f.git : f.service,
      })),
    });
  }
  for (const k of delta.added) rows.push({ key: k, diff: [{ path: `values[${k}]`, kind: "added" }] });
  for (const k of delta.removed) rows.push({ key: k, diff: [{ path: `values[${k}]`, kind: "removed" }] });
  rows.sort((a, b) => byCodePoint(a.key, b.key));
  return {
    diff: rows.slice(0, VALUE_ROWS_SHOWN).flatMap((r) => r.diff),
    total: rows.length,
    changed: delta.changed.length,
    added: delta.added.length,
    removed: delta.removed.length,
  };
}

/** What a review or approve moves forward, for the reviewer: rows, products, currencies, dates. */
export function valuesSummary(
  file: string,
  rows: readonly { product_id: string; currency_code: string; effective_start_date: string; effective_end_date: string }[],
): ValuesSummary {
  const starts = rows.map((r) => r.effective_start_date).sort(byCodePoint);
  const ends = rows.map((r) => r.effective_end_date).sort(byCodePoint);
  return {
    file,
    rows: rows.length,
    products: new Set(rows.map((r) => r.product_id)).size,
    currencies: [...new Set(rows.map((r) => r.currency_code))].sort(byCodePoint),
    from: starts[0] ?? "",
    to: ends[ends.length - 1] ?? "",
  };
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
    return shown("unsupported", addr, REASONS.noTenant, { after: d.spec, source: `${d.source.file}:${d.source.line}` });
  }
  const keys = Object.keys(d.spec);
  const before = pick(item, keys);
  const diff = fieldDiff(before, d.spec);
  if (!diff.length) return undefined;
  // The 13 fields git leaves alone are the live values the plan read: apply re-reads them right before
  // the PATCH and sends nothing when one of them changed since (README, Reliability).
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

interface BatchContext {
  policy: string;
  version: { id: string | null; on: number | null; compliance_id: string | null };
  /** What a saved plan binds the batch's steps to (null for a batch the plan's create uploads). */
  file_id: string | null;
  values_checksum: string | null;
  values?: ValuesSummary;
}

/** The steps that move a batch forward from `from` to git's status (review, then approve), or the
 *  reason it cannot move (backwards, or from a status with no transition). */
function batchSteps(b: DesiredBatch, from: string | null, ctx: BatchContext, source?: string): Change[] {
  const addr = address.batch(ctx.policy, b.name);
  const step = (action: "review" | "approve", before: string | null, after: string): Change => ({
    address: addr,
    action,
    before: { status: before },
    after: { status: after },
    diff: [{ path: "status", kind: before === null ? "added" : "changed", before, after }],
    version_id: ctx.version.id,
    last_modified_on: ctx.version.on,
    ...(source ? { source } : {}),
    ...(ctx.values ? { values: ctx.values } : {}),
    payload: {
      kind: "batch",
      compliance_id: ctx.version.compliance_id,
      policy: ctx.policy,
      batch: b.name,
      file_id: ctx.file_id,
      values_checksum: ctx.values_checksum,
    },
  });
  const cannot = (reason: string): Change[] => [
    shown("unsupported", addr, reason, {
      before: { status: from },
      after: { status: b.status },
      diff: [{ path: "status", kind: "changed", before: from, after: b.status }],
      version_id: ctx.version.id,
      last_modified_on: ctx.version.on,
      ...(source ? { source } : {}),
    }),
  ];
  if (from === b.status) return [];
  if (from === "file uploaded" || from === null) {
    if (b.status === "file uploaded") return [];
    const r = step("review", from, "reviewed");
    return b.status === "approved" ? [r, step("approve", "reviewed", "approved")] : [r];
  }
  if (from === "reviewed") return b.status === "approved" ? [step("approve", "reviewed", "approved")] : cannot(REASONS.batchBackwards(from, b.status));
  if (from === "approved") return cannot(REASONS.batchBackwards(from, b.status));
  return cannot(`the batch's status ${JSON.stringify(from)} has no transition to ${b.status}`);
}

/** How to get a batch's values into git, for the reason of a batch blocked for want of them. */
function valuesHow(d: DesiredSsp, b: DesiredBatch, lb: SspItem): string {
  const ref = valuesFileFor(d.name, b.name);
  const path = posix.join(posix.dirname(d.source.file.split("\\").join("/")), ref);
  const fileId = typeof lb.file_id === "string" && lb.file_id ? lb.file_id : undefined;
  const get = fileId
    ? `revsync ssp download ${fileId} --output ${JSON.stringify(path)} gets them`
    : `revsync export --dir DIR --target ${JSON.stringify(address.ssp(d.name))} writes them (with the policy's file) into DIR`;
  return `${get}; review them, then add \`values: ${ref}\` to this batch in ${d.source.file}`;
}

/** The active live policies holding each hierarchy_no (a policy whose `active` is not false counts). */
function hierarchyHolders(live: LiveState): Map<number, LivePolicy[]> {
  const out = new Map<number, LivePolicy[]>();
  for (const lp of live.ssp.values()) {
    const n = lp.item.hierarchy_no;
    if (typeof n !== "number" || lp.item.active === false) continue;
    out.set(n, [...(out.get(n) ?? []), lp]);
  }
  return out;
}

/** A create whose hierarchy_no an active live policy holds: why it is blocked (naming both policies, and
 *  a rename when the holder is not in git and has the same conditions), or undefined when it is free. */
function hierarchyClash(name: string, item: SspCreateItem, desired: DesiredState, live: LiveState): string | undefined {
  const holders = (hierarchyHolders(live).get(item.hierarchy_no) ?? []).filter((lp) => lp.envelope.compliance_name !== name);
  if (!holders.length) return undefined;
  const inGit = new Set(desired.ssp.map((d) => d.name));
  const want = JSON.stringify(canonicalConditions(item.when));
  const renamed = holders.find(
    (lp) => !inGit.has(lp.envelope.compliance_name ?? "") && JSON.stringify(canonicalConditions(Array.isArray(lp.item.when) ? lp.item.when : [])) === want,
  );
  if (renamed) return REASONS.rename(item.hierarchy_no, renamed.envelope.compliance_name ?? "", name);
  const named = holders.map((lp) => {
    const n = lp.envelope.compliance_name ?? "";
    return `${JSON.stringify(n)}${inGit.has(n) ? "" : " (not in git)"}`;
  });
  return REASONS.hierarchyHeld(item.hierarchy_no, `${holders.length === 1 ? "policy" : "policies"} ${named.join(" and ")}`);
}

function createChanges(d: DesiredSsp, desired: DesiredState, live: LiveState, targets: string[], findings: PlanFindings): Change[] {
  const addr = address.ssp(d.name);
  const source = `${d.source.file}:${d.source.line}`;
  if (!targeted(addr, targets)) return [];
  if (d.spec.method === "calculator") return [shown("unsupported", addr, REASONS.calculatorCreate, { after: d.spec, source })];
  const made = createItem(d);
  if (!made.item) {
    findings.problems.push({
      ...d.specSource,
      message: `ssp/${d.name} does not exist in the service, and creating it needs ${made.missing.join(", ")} in spec`,
    });
    return [];
  }
  const item = made.item;
  const diff = Object.entries(item).map(([path, after]) => ({ path, kind: "added" as const, after }));
  const clash = hierarchyClash(d.name, item, desired, live);
  const out: Change[] = [];
  if (clash) {
    out.push(shown("blocked", addr, clash, { after: item, diff, source }));
    for (const b of d.batches) {
      const baddr = address.batch(d.name, b.name);
      if (targeted(baddr, targets)) out.push(shown("blocked", baddr, REASONS.createBlocked(addr), { after: { status: b.status }, source }));
    }
    return out;
  }
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
    diff,
    version_id: null,
    last_modified_on: null,
    source,
    payload: { kind: "create", body, hierarchy_no: item.hierarchy_no },
  });
  for (const b of d.batches) {
    if (!targeted(address.batch(d.name, b.name), targets)) continue;
    if (!b.values || !uploads.some((u) => u.batch_name === b.name)) {
      out.push(shown("unsupported", address.batch(d.name, b.name), REASONS.newBatchNoValues, { after: { status: b.status }, source }));
      continue;
    }
    // The batch goes up with the create, holding git's values: nothing else to bind it to.
    const ctx: BatchContext = {
      policy: d.name,
      version: { id: null, on: null, compliance_id: null },
      file_id: null,
      values_checksum: null,
      values: valuesSummary(b.valuesShown ?? b.values.file, b.values.rows),
    };
    out.push(...batchSteps(b, null, ctx, source));
  }
  return out;
}

function sspChanges(d: DesiredSsp, desired: DesiredState, live: LiveState, targets: string[], findings: PlanFindings): Change[] {
  const lp = live.ssp.get(d.name);
  if (!lp) return createChanges(d, desired, live, targets, findings);
  const out: Change[] = [];
  const addr = address.ssp(d.name);
  const source = `${d.source.file}:${d.source.line}`;
  const version = { id: lp.envelope.version_id ?? null, on: lp.envelope.last_modified_on ?? null, compliance_id: lp.envelope.compliance_id ?? null };
  const versioned = { version_id: version.id, last_modified_on: version.on, source };
  if (targeted(addr, targets)) {
    const diff = sspFieldDiff(d, lp, findings);
    if (diff.length) {
      out.push(
        shown("unsupported", addr, REASONS.sspUpdate, {
          before: Object.fromEntries(diff.map((x) => [x.path, x.before])),
          after: Object.fromEntries(diff.map((x) => [x.path, x.after])),
          diff,
          ...versioned,
        }),
      );
    }
  }
  for (const b of d.batches) {
    const baddr = address.batch(d.name, b.name);
    if (!targeted(baddr, targets)) continue;
    const lb = liveBatch(lp, b.name);
    if (!lb) {
      out.push(shown("unsupported", baddr, REASONS.batchMissing, { after: { status: b.status }, ...versioned }));
      continue;
    }
    const from = lb.status ?? "";
    const ctx: BatchContext = { policy: d.name, version, file_id: typeof lb.file_id === "string" ? lb.file_id : null, values_checksum: null };
    const steps = batchSteps(b, from, ctx, source);
    const moving = steps.some((s) => s.action === "review" || s.action === "approve");
    const status = { before: { status: from }, after: { status: b.status } };
    // Values nobody reviewed are never reviewed or approved: a batch moves only when git holds its values
    // and they equal the service's.
    if (!b.values) {
      out.push(...(moving ? [shown("blocked", baddr, REASONS.batchNoValues(b.status, valuesHow(d, b, lb)), { ...status, ...versioned })] : steps));
      continue;
    }
    const held = live.values.get(`${d.name}/${b.name}`);
    if (!held) {
      out.push(...(moving ? [shown("blocked", baddr, REASONS.batchValuesUnread(b.status), { ...status, ...versioned })] : steps));
      continue;
    }
    const shownFile = b.valuesShown ?? b.values.file;
    const vd = valuesDiff(b.values, held, baddr, "plan");
    if (vd.total === 0) {
      // What the reviewer approves, and what apply checks right before the batch's first write: the
      // same file, the same values.
      const checksum = moving ? valuesChecksum(held) : null;
      for (const s of steps) {
        if (s.payload?.kind !== "batch") continue;
        s.payload.values_checksum = checksum;
        s.values = valuesSummary(shownFile, b.values.rows);
      }
      out.push(...steps);
      continue;
    }
    const rows = { diff: vd.diff, diff_rows: { shown: Math.min(vd.total, VALUE_ROWS_SHOWN), total: vd.total } };
    if (moving) out.push(shown("blocked", baddr, REASONS.batchValuesBlocked(b.status, vd.total, shownFile), { ...status, ...rows, ...versioned }));
    else out.push(...steps, shown("unsupported", baddr, REASONS.batchValues, { ...status, ...rows, ...versioned }));
  }
  return out;
}

/** Something the service holds that git does not: plan shows it as `not in git`, drift as `unmanaged`
 *  (a policy or a tenant configuration) or `unmanaged_batch` (a batch of a policy git manages). One
 *  list, so that plan and drift classify the same things the same way. */
interface Unmanaged {
  address: string;
  kind: "tenant" | "policy" | "batch";
  before: Record<string, unknown>;
  version_id: string | null;
  last_modified_on: number | null;
  modified_by: string | null;
  modified_on: string | null;
  /** The policy's or tenant configuration's name (of a batch: its policy's). */
  name: string;
}

function unmanagedOf(desired: DesiredState, live: LiveState, targets: string[]): Unmanaged[] {
  const out: Unmanaged[] = [];
  // A tenant configuration counts when git manages tenant configurations at all.
  if (desired.tenantConfigs.length) {
    for (const env of live.tenantConfigs) {
      const name = env.compliance_name ?? "";
      if (!targeted(address.tenant(name), targets) || desired.tenantConfigs.some((d) => d.name === name)) continue;
      out.push({
        address: address.tenant(name),
        name,
        kind: "tenant",
        before: {},
        version_id: env.version_id ?? null,
        last_modified_on: env.last_modified_on ?? null,
        modified_by: env.last_modified_by ?? null,
        modified_on: isoOf(env.last_modified_on),
      });
    }
  }
  const inGit = new Map(desired.ssp.map((d) => [d.name, d]));
  for (const [name, lp] of live.ssp) {
    const d = inGit.get(name);
    const envelope = {
      version_id: lp.envelope.version_id ?? null,
      last_modified_on: lp.envelope.last_modified_on ?? null,
    };
    if (!d) {
      if (!targeted(address.ssp(name), targets)) continue;
      const item = lp.item as unknown as Record<string, unknown>;
      out.push({
        address: address.ssp(name),
        name,
        kind: "policy",
        before: pick(item, ["method", "active", "hierarchy_no", "when"]),
        ...envelope,
        modified_by: lp.envelope.last_modified_by ?? null,
        modified_on: isoOf(lp.envelope.last_modified_on),
      });
      continue;
    }
    // A live batch that git does not list, of a policy git manages.
    for (const lb of lp.batches ?? []) {
      const batch = batchNameOf(lb);
      const baddr = address.batch(name, batch);
      if (!targeted(baddr, targets) || d.batches.some((b) => b.name === batch)) continue;
      out.push({
        address: baddr,
        kind: "batch",
        before: { status: lb.status ?? null },
        ...envelope,
        modified_by: lb.updated_by ?? null,
        modified_on: isoOf(lb.updated_at),
        name,
      });
    }
  }
  return out;
}

const ORDER: Record<string, number> = { update: 0, create: 1, review: 2, approve: 3, blocked: 4, unsupported: 5, not_in_git: 6 };

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
  for (const d of desired.ssp) changes.push(...sspChanges(d, desired, live, meta.targets, findings));
  if (findings.problems.length) {
    throw new UserError(
      `the plan cannot be made, so nothing was sent:\n  ${findings.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`).join("\n  ")}`,
      "add the fields to the policy file (revsync validate checks them offline)",
    );
  }
  for (const u of unmanagedOf(desired, live, meta.targets)) {
    const reason = u.kind === "tenant" ? REASONS.notInGitTenant : u.kind === "policy" ? REASONS.notInGitPolicy(u.name) : REASONS.notInGitBatch(u.name);
    const who =
      u.modified_by || u.modified_on
        ? ` (last modified${u.modified_by ? ` by ${u.modified_by}` : ""}${u.modified_on ? ` at ${u.modified_on.replace(".000Z", "Z")}` : ""})`
        : "";
    changes.push(shown("not_in_git", u.address, `${reason}${who}`, { before: u.before, version_id: u.version_id, last_modified_on: u.last_modified_on }));
  }
  const notes: string[] = [];
  if (findings.unknown.size) {
    const names = [...findings.unknown].map(([n, f]) => `${n} (${f.join(", ")})`);
    notes.push(`the service shows no value (null) for these fields, so git's values for them were not compared: ${names.join("; ")}`);
  }
  const hierarchy = (c: Change): number => (c.payload?.kind === "create" ? c.payload.hierarchy_no : 0);
  // Code point order: the same plan on every machine, whatever its locale.
  changes.sort((a, b) => (ORDER[a.action] ?? 9) - (ORDER[b.action] ?? 9) || hierarchy(a) - hierarchy(b) || byCodePoint(a.address, b.address));
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
  // Who drifted: the thing itself. A policy or tenant configuration names its envelope's last change, a
  // batch its own (updated_by, updated_at); what the service does not hold names nobody.
  const policyWho = (name: string): Pick<DriftItem, "modified_by" | "modified_on"> => {
    const env = live.ssp.get(name)?.envelope;
    return { modified_by: env?.last_modified_by ?? null, modified_on: isoOf(env?.last_modified_on) };
  };
  const batchWho = (lb: SspItem | undefined): Pick<DriftItem, "modified_by" | "modified_on"> => ({
    modified_by: lb?.updated_by ?? null,
    modified_on: isoOf(lb?.updated_at),
  });
  const nobody = { modified_by: null, modified_on: null };
  for (const d of desired.tenantConfigs) {
    const addr = address.tenant(d.name);
    if (!targeted(addr, t)) continue;
    const env = live.tenantConfigs.find((e) => e.compliance_name === d.name);
    const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
    if (!env || !item) {
      items.push({ address: addr, class: "missing", diff: [], message: "in git, not in the service", ...nobody });
      continue;
    }
    // In drift, before is what git says and after what the service holds.
    const diff = fieldDiff(d.spec, pick(item, Object.keys(d.spec))).map((x) => ({ ...x, kind: "changed" as const }));
    if (diff.length)
      items.push({
        address: addr,
        class: "changed",
        diff,
        message: `${plural(diff.length, "field")} ${diff.length === 1 ? "differs" : "differ"} from git: ${diff.map((x) => x.path).join(", ")}`,
        modified_by: env.last_modified_by ?? null,
        modified_on: isoOf(env.last_modified_on),
      });
  }
  for (const d of desired.ssp) {
    const addr = address.ssp(d.name);
    const lp = live.ssp.get(d.name);
    if (!lp) {
      if (targeted(addr, t)) items.push({ address: addr, class: "missing", diff: [], message: "in git, not in the service", ...nobody });
      continue;
    }
    if (targeted(addr, t)) {
      const diff = sspFieldDiff(d, lp).map((x) => ({ ...x, before: x.after, after: x.before }));
      if (diff.length)
        items.push({
          address: addr,
          class: "changed",
          diff,
          message: `${plural(diff.length, "field")} ${diff.length === 1 ? "differs" : "differ"} from git: ${diff.map((x) => x.path).join(", ")}`,
          ...policyWho(d.name),
        });
    }
    for (const b of d.batches) {
      const baddr = address.batch(d.name, b.name);
      if (!targeted(baddr, t)) continue;
      const lb = liveBatch(lp, b.name);
      if (!lb) {
        items.push({ address: baddr, class: "missing", diff: [], message: "batch in git, not in the service", ...nobody });
        continue;
      }
      if (lb.status !== b.status) {
        items.push({
          address: baddr,
          class: "batch_status",
          diff: [{ path: "status", kind: "changed", before: b.status, after: lb.status }],
          message: `status is ${JSON.stringify(lb.status)}, git says ${JSON.stringify(b.status)}`,
          ...batchWho(lb),
        });
      }
      const held = live.values.get(`${d.name}/${b.name}`);
      if (!b.values || !held) continue;
      const vd = valuesDiff(b.values, held, baddr, "drift");
      if (vd.total) {
        items.push({
          address: baddr,
          class: "batch_values",
          diff: vd.diff,
          diff_rows: { shown: Math.min(vd.total, VALUE_ROWS_SHOWN), total: vd.total },
          message: `values differ from ${b.valuesShown}: ${vd.changed} changed, ${vd.added} only in git, ${vd.removed} only in the service`,
          ...batchWho(lb),
        });
      }
    }
  }
  for (const u of unmanagedOf(desired, live, t)) {
    if (u.kind === "batch") {
      items.push({
        address: u.address,
        class: "unmanaged_batch",
        diff: [{ path: "status", kind: "removed", before: undefined, after: u.before.status ?? null }],
        message: `batch in the service (status ${JSON.stringify(u.before.status ?? null)}), not listed in git`,
        modified_by: u.modified_by,
        modified_on: u.modified_on,
      });
    } else
      items.push({
        address: u.address,
        class: "unmanaged",
        diff: [],
        message: "in the service, not in git",
        modified_by: u.modified_by,
        modified_on: u.modified_on,
      });
  }
  return {
    format_version: PLAN_FORMAT_VERSION,
    environment: meta.environment,
    created_at: (meta.now ?? new Date()).toISOString(),
    drift: items,
    summary: summarize(DRIFT_CLASSES, items as unknown as { [k: string]: unknown }[], "class"),
  };
}
