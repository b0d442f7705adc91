/** The plan: what apply would do to make the service hold what git says, and every difference it
 *  cannot act on, each with its reason. Pure. Drift is src/plan/drift.ts; what both compare is
 *  src/plan/compare.ts; the create request's body is src/plan/create-body.ts. */
import { posix } from "node:path";
import { UserError } from "../errors.js";
import type { DesiredBatch, DesiredSsp, DesiredState, DesiredTenantConfig } from "../config/repo.js";
import { UPDATABLE_TENANT_FIELDS } from "../config/rules.js";
import type { SspCreateItem, SspItem, TenantConfigurationUpdateItem } from "../schema/generated/api.js";
import type { LivePolicy, LiveState } from "../live/read.js";
import { address, byCodePoint, targeted, valuesFileFor } from "../shared/address.js";
import { canonicalConditions, fieldDiff } from "../shared/normalize.js";
import { plural } from "../words.js";
import { batchDatesDiff, liveBatch, pick, sspFieldDiff, unmanagedOf, valuesDiff, VALUE_ROWS_SHOWN, type PlanFindings } from "./compare.js";
import { createBody, createItem } from "./create-body.js";
import { ACTIONS, planChecksum, summarize, type Change, type Plan, type ValuesSummary } from "./model.js";
import { unknownNotes } from "../shared/unknown.js";
import { valuesChecksum } from "./values.js";
import { whoWords } from "../shared/who.js";
import { numberOrNull, plainData } from "../number.js";

/** The 14 fields of the tenant configuration update body: the updatable ones and the guid. */
export const UPDATE_FIELDS: (keyof TenantConfigurationUpdateItem)[] = [...UPDATABLE_TENANT_FIELDS, "guid"];

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
  batchDates:
    "the service's dates of this batch differ from git's, and the interface has no call to change the dates of a batch that exists: change them in the service (or upload the batch again there with git's dates), or make git hold the service's (revsync export writes them); until then git and the service disagree about the days the batch prices",
  batchDatesBlocked: (status: string) =>
    `the service's dates of this batch differ from git's, so revsync will not move it to ${status} (it would approve the batch for days nobody reviewed), and the interface has no call to change them: change them in the service (or upload the batch again there with git's dates), or make git hold the service's (revsync export writes them), then plan again`,
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
    last_modified_on: numberOrNull(env.last_modified_on),
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
  const { body, uploads } = createBody(d, item);
  // The create sends its batches too: the entry lists each one it sends, in file uploaded, with its file,
  // the number of rows and the checksum of its values (the values themselves are shown in the batch's
  // review or approve; a batch git leaves in file uploaded has none, and the checksum binds it to git's
  // file all the same).
  const sent = uploads.map((u) => ({
    batch_name: u.batch_name,
    status: "file uploaded",
    file_name: u.file_name,
    rows: u.ssp_values.length,
    values_checksum: valuesChecksum(u.ssp_values),
  }));
  out.push({
    address: addr,
    action: "create",
    before: null,
    after: sent.length ? { ...item, batches: sent } : item,
    diff: sent.length ? [...diff, { path: "batches", kind: "added" as const, after: sent }] : diff,
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
    // The batch goes up with the create, holding git's values: the plan binds them (apply sends the
    // create only with these values, and moves the batch only while the service holds them).
    const ctx: BatchContext = {
      policy: d.name,
      version: { id: null, on: null, compliance_id: null },
      file_id: null,
      values_checksum: valuesChecksum(b.values.rows),
      values: valuesSummary(b.valuesShown ?? b.values.file, b.values.rows),
    };
    // The create uploads it, so it starts in file uploaded.
    out.push(...batchSteps(b, "file uploaded", ctx, source));
  }
  return out;
}

function sspChanges(d: DesiredSsp, desired: DesiredState, live: LiveState, targets: string[], findings: PlanFindings): Change[] {
  const lp = live.ssp.get(d.name);
  if (!lp) return createChanges(d, desired, live, targets, findings);
  const out: Change[] = [];
  const addr = address.ssp(d.name);
  const source = `${d.source.file}:${d.source.line}`;
  const version = { id: lp.envelope.version_id ?? null, on: numberOrNull(lp.envelope.last_modified_on), compliance_id: lp.envelope.compliance_id ?? null };
  const versioned = { version_id: version.id, last_modified_on: version.on, source };
  if (targeted(addr, targets)) {
    const diff = sspFieldDiff(d, lp, findings.unknown);
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
    // Every value git sets is compared: the batch's dates too. The interface cannot change them, so a
    // difference is shown with what to do, and a batch is never moved forward over it.
    const dates = batchDatesDiff(b, lb, baddr, findings.unknown);
    if (dates.length) {
      const onDates = {
        before: { ...status.before, ...Object.fromEntries(dates.map((x) => [x.path, x.before])) },
        after: { ...status.after, ...Object.fromEntries(dates.map((x) => [x.path, x.after])) },
        diff: dates,
        ...versioned,
      };
      if (moving) {
        out.push(shown("blocked", baddr, REASONS.batchDatesBlocked(b.status), onDates));
        continue;
      }
      out.push(shown("unsupported", baddr, REASONS.batchDates, onDates));
    }
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
    const who = whoWords(u, "last modified");
    changes.push(shown("not_in_git", u.address, `${reason}${who}`, { before: u.before, version_id: u.version_id, last_modified_on: u.last_modified_on }));
  }
  const notes = unknownNotes(findings.unknown);
  const hierarchy = (c: Change): number => (c.payload?.kind === "create" ? c.payload.hierarchy_no : 0);
  // Code point order: the same plan on every machine, whatever its locale.
  changes.sort((a, b) => (ORDER[a.action] ?? 9) - (ORDER[b.action] ?? 9) || hierarchy(a) - hierarchy(b) || byCodePoint(a.address, b.address));
  const plan: Omit<Plan, "checksum"> = {
    format_version: "1",
    environment: meta.environment,
    created_at: (meta.now ?? new Date()).toISOString(),
    base_url: meta.baseUrl,
    auth_url: meta.authUrl,
    realm: meta.realm,
    user: meta.user,
    targets: meta.targets,
    // The service's values as plain data (a number it gave that is not comparable, as its text): the
    // plan reads back from its file as it was made.
    changes: plainData(changes),
    summary: summarize(ACTIONS, changes as unknown as { [k: string]: unknown }[], "action"),
    notes,
  };
  return { ...plan, checksum: planChecksum(plan) };
}
