/** An SSP policy's plan entries: its create (with the batches that go up with it) or the differences
 *  the interface cannot write, each batch's review and approve, and why a batch cannot move. Pure. */
import { posix } from "node:path";
import type { SspCreateItem, SspItem } from "../../schema/generated/api.js";
import { byCodePoint, targeted, valuesFileFor } from "../../shared/address.js";
import type { Change, ValuesSummary } from "../../shared/entries.js";
import { canonicalConditions } from "../../shared/normalize.js";
import { sameJson } from "../../canonical-json.js";
import { numberOrNull } from "../../number.js";
import { plural } from "../../words.js";
import { segmentProblem } from "../../api/core.js";
import { shownEntry } from "../entries.js";
import type { PlanFindings } from "../kind.js";
import { envelopeWho } from "../../shared/who.js";
import { pasteable, shellQuote } from "../../shell-quote.js";
import { batchDatesDiff, exportHint, liveBatch, shownValuesDiff, sspFieldDiff } from "./compare.js";
import { createBody, createItem } from "./create-body.js";
import type { DesiredBatch, DesiredSsp } from "./files.js";
import { fileIdOf, sspAddress, type LivePolicy, type SspLive } from "./read.js";
import { valuesChecksum } from "./values.js";

export const REASONS = {
  unaddressed: (id: unknown, problem: string) =>
    `its policy's compliance_id ${JSON.stringify(id ?? null)}, which the review and approve path (spec 4.7) names it by, does not address it (${problem}), so revsync sends no review or approve`,
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
  batchValuesNotShown: (status: string) =>
    `the service shows neither an uploaded file of this batch nor its own values (ssp_values), so nobody can review what it holds and revsync will not move it to ${status}`,
  batchSplit: (rows: number, file: string) =>
    `the service holds two sets of values for this batch: its uploaded file and its own values (ssp_values, what pricing uses) differ in ${plural(rows, "row")}, and git's ${file} cannot equal both; the interface cannot change either: upload the batch again in the service with one set of values`,
  batchSplitBlocked: (status: string, rows: number, file: string) =>
    `the service holds two sets of values for this batch: its uploaded file and its own values (ssp_values, what pricing uses) differ in ${plural(rows, "row")}, so nobody can say which ones a move to ${status} would approve, and revsync will not move it (never approve values nobody reviewed); upload the batch again in the service with the values of ${file}, then plan again`,
  batchDates:
    "the service's dates of this batch differ from git's, and the interface has no call to change the dates of a batch that exists: change them in the service (or upload the batch again there with git's dates), or make git hold the service's (revsync export writes them); until then git and the service disagree about the days the batch prices",
  batchDatesBlocked: (status: string) =>
    `the service's dates of this batch differ from git's, so revsync will not move it to ${status} (it would approve the batch for days nobody reviewed), and the interface has no call to change them: change them in the service (or upload the batch again there with git's dates), or make git hold the service's (revsync export writes them), then plan again`,
  calculatorCreate: "the create operation (spec 4.6) takes upload or formula policies; a calculator policy cannot be created through the interface",
  newBatchNoValues: "a batch of a new policy can only be created with it when it names a values file (and the policy's method is upload)",
  hierarchyHeld: (n: number, holders: string) =>
    `hierarchy_no ${n} is held by the active live ${holders}: two policies in one place of the hierarchy make it undefined which one prices an order line, so revsync will not create this one; give it a hierarchy_no no active policy holds`,
  rename: (n: number, old: string, name: string) =>
    `hierarchy_no ${n} is held by the active live policy ${JSON.stringify(old)}, which is not in git and has the same conditions: this looks like a rename. The interface cannot rename, update or delete an SSP policy: deactivate or delete ${JSON.stringify(old)} in the service first (then plan again: it creates ${JSON.stringify(name)}), or keep the old name in git`,
  hierarchyShared: (n: number, others: string) =>
    `hierarchy_no ${n} is also given to ${others} in git, which this plan creates too: two policies in one place of the hierarchy make it undefined which one prices an order line, so revsync creates neither; give each its own hierarchy_no`,
  createBlocked: (policy: string) => `the create of ${policy} is blocked, so nothing is done for its batches`,
} as const;

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
  const addr = sspAddress.batch(ctx.policy, b.name);
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
    shownEntry("unsupported", addr, reason, {
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
  const fileId = fileIdOf(lb);
  const get =
    fileId && pasteable(fileId) && pasteable(path)
      ? `revsync ssp download ${shellQuote(fileId)} --output ${shellQuote(path)} gets them`
      : exportHint(d.name, "writes them (with the policy's file) into DIR");
  return `${get}; review them, then add \`values: ${ref}\` to this batch in ${d.source.file}`;
}

/** The active live policies holding each hierarchy_no (a policy whose `active` is not false counts). */
function hierarchyHolders(live: SspLive): Map<number, LivePolicy[]> {
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
function hierarchyClash(name: string, item: SspCreateItem, desired: readonly DesiredSsp[], live: SspLive): string | undefined {
  const holders = (hierarchyHolders(live).get(item.hierarchy_no) ?? []).filter((lp) => lp.envelope.compliance_name !== name);
  if (!holders.length) {
    // validate only warns of two active policies in one place (the service may hold such pairs); two
    // that this plan would create there are blocked both, as neither comes first.
    const created = desired.filter((d) => d.name !== name && !live.ssp.has(d.name) && d.spec.hierarchy_no === item.hierarchy_no && d.spec.active !== false);
    return created.length && item.active !== false
      ? REASONS.hierarchyShared(
          item.hierarchy_no,
          `${created.length === 1 ? "policy" : "policies"} ${created.map((d) => JSON.stringify(d.name)).join(" and ")}`,
        )
      : undefined;
  }
  const inGit = new Set(desired.map((d) => d.name));
  const want = canonicalConditions(item.when);
  const renamed = holders.find(
    (lp) => !inGit.has(lp.envelope.compliance_name ?? "") && sameJson(canonicalConditions(Array.isArray(lp.item.when) ? lp.item.when : []), want),
  );
  if (renamed) return REASONS.rename(item.hierarchy_no, renamed.envelope.compliance_name ?? "", name);
  const named = holders.map((lp) => {
    const n = lp.envelope.compliance_name ?? "";
    return `${JSON.stringify(n)}${inGit.has(n) ? "" : " (not in git)"}`;
  });
  return REASONS.hierarchyHeld(item.hierarchy_no, `${holders.length === 1 ? "policy" : "policies"} ${named.join(" and ")}`);
}

/** What plan needs to know of a policy git holds, wherever its entries are made. */
interface PolicyContext {
  d: DesiredSsp;
  source: string;
  targets: string[];
}

/** The batches of a policy whose create is blocked: nothing is done for them either. */
function blockedCreate(p: PolicyContext, item: SspCreateItem, diff: Change["diff"], clash: string): Change[] {
  const addr = sspAddress.policy(p.d.name);
  const out = [shownEntry("blocked", addr, clash, { after: item, diff, source: p.source })];
  for (const b of p.d.batches) {
    const baddr = sspAddress.batch(p.d.name, b.name);
    if (targeted(baddr, p.targets)) out.push(shownEntry("blocked", baddr, REASONS.createBlocked(addr), { after: { status: b.status }, source: p.source }));
  }
  return out;
}

/** The batches a create uploads (each with git's values, bound by their checksum: apply sends the create
 *  only with these values, and moves the batch only while the service holds them), moved on from file
 *  uploaded; a batch git lists without values cannot go up with it. */
function createdBatches(p: PolicyContext, uploaded: ReadonlySet<string>): Change[] {
  return p.d.batches.flatMap((b) => {
    const baddr = sspAddress.batch(p.d.name, b.name);
    if (!targeted(baddr, p.targets)) return [];
    if (!b.values || !uploaded.has(b.name))
      return [shownEntry("unsupported", baddr, REASONS.newBatchNoValues, { after: { status: b.status }, source: p.source })];
    const ctx: BatchContext = {
      policy: p.d.name,
      version: { id: null, on: null, compliance_id: null },
      file_id: null,
      values_checksum: valuesChecksum(b.values.rows),
      values: valuesSummary(b.valuesShown ?? b.values.file, b.values.rows),
    };
    return batchSteps(b, "file uploaded", ctx, p.source);
  });
}

/** A policy git holds and the service does not: its create, with the batches that go up with it. */
function createChanges(p: PolicyContext, desired: readonly DesiredSsp[], live: SspLive, findings: PlanFindings): Change[] {
  const { d, source } = p;
  const addr = sspAddress.policy(d.name);
  if (!targeted(addr, p.targets)) return [];
  if (d.spec.method === "calculator") return [shownEntry("unsupported", addr, REASONS.calculatorCreate, { after: d.spec, source })];
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
  if (clash) return blockedCreate(p, item, diff, clash);
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
  const create: Change = {
    address: addr,
    action: "create",
    before: null,
    after: sent.length ? { ...item, batches: sent } : item,
    diff: sent.length ? [...diff, { path: "batches", kind: "added" as const, after: sent }] : diff,
    version_id: null,
    last_modified_on: null,
    source,
    payload: { kind: "create", body, hierarchy_no: item.hierarchy_no },
  };
  return [create, ...createdBatches(p, new Set(uploads.map((u) => u.batch_name)))];
}

/** A policy the service holds: what differs in its fields (the interface cannot update it). */
function policyFields(p: PolicyContext, lp: LivePolicy, versioned: Versioned, findings: PlanFindings): Change[] {
  const addr = sspAddress.policy(p.d.name);
  if (!targeted(addr, p.targets)) return [];
  const diff = sspFieldDiff(p.d, lp, findings.unknown);
  if (!diff.length) return [];
  return [
    shownEntry("unsupported", addr, REASONS.sspUpdate, {
      before: Object.fromEntries(diff.map((x) => [x.path, x.before])),
      after: Object.fromEntries(diff.map((x) => [x.path, x.after])),
      diff,
      ...versioned,
      ...envelopeWho(lp.envelope),
    }),
  ];
}

type Versioned = { version_id: string | null; last_modified_on: number | null; source: string };

/** One batch of a policy the service holds: its steps forward, or why it cannot move. Every value git
 *  sets is compared: the batch's dates (which the interface cannot change: a difference is shown with
 *  what to do, and a batch never moves over it) and its values (values nobody reviewed are never reviewed
 *  or approved: a batch moves only when git holds its values and they equal the service's). */
function batchChanges(p: PolicyContext, b: DesiredBatch, lp: LivePolicy, live: SspLive, versioned: Versioned, findings: PlanFindings): Change[] {
  const baddr = sspAddress.batch(p.d.name, b.name);
  const lb = liveBatch(lp, b.name);
  if (!lb) return [shownEntry("unsupported", baddr, REASONS.batchMissing, { after: { status: b.status }, ...versioned })];
  const from = lb.status ?? "";
  const version = { id: versioned.version_id, on: versioned.last_modified_on, compliance_id: lp.envelope.compliance_id ?? null };
  const steps = batchSteps(b, from, { policy: p.d.name, version, file_id: fileIdOf(lb) ?? null, values_checksum: null }, p.source);
  const moving = steps.some((s) => s.action === "review" || s.action === "approve");
  const status = { before: { status: from }, after: { status: b.status } };
  const astray = moving ? segmentProblem(lp.envelope.compliance_id ?? "") : undefined;
  if (astray)
    return [
      shownEntry("blocked", baddr, REASONS.unaddressed(lp.envelope.compliance_id, astray), {
        ...status,
        diff: [{ path: "status", kind: "changed", before: from, after: b.status }],
        ...versioned,
      }),
    ];
  const out: Change[] = [];
  const dates = batchDatesDiff(b, lb, baddr, findings.unknown);
  if (dates.length) {
    const onDates = {
      before: { ...status.before, ...Object.fromEntries(dates.map((x) => [x.path, x.before])) },
      after: { ...status.after, ...Object.fromEntries(dates.map((x) => [x.path, x.after])) },
      diff: dates,
      ...versioned,
    };
    if (moving) return [shownEntry("blocked", baddr, REASONS.batchDatesBlocked(b.status), onDates)];
    out.push(shownEntry("unsupported", baddr, REASONS.batchDates, onDates));
  }
  if (!b.values)
    return [...out, ...(moving ? [shownEntry("blocked", baddr, REASONS.batchNoValues(b.status, valuesHow(p.d, b, lb)), { ...status, ...versioned })] : steps)];
  const held = live.values.get(`${p.d.name}/${b.name}`);
  if (!held) return [...out, ...(moving ? [shownEntry("blocked", baddr, REASONS.batchValuesUnread(b.status), { ...status, ...versioned })] : steps)];
  const shownFile = b.valuesShown ?? b.values.file;
  const vd = shownValuesDiff(b.values, held, baddr, "plan", findings.unknown);
  if (vd.shown === "none")
    return [...out, ...(moving ? [shownEntry("blocked", baddr, REASONS.batchValuesNotShown(b.status), { ...status, ...versioned })] : steps)];
  if (vd.total === 0 && !vd.split) {
    // What the reviewer approves, and what apply checks right before the batch's first write: the same
    // file, the same values.
    const checksum = moving ? (vd.checksum ?? null) : null;
    for (const s of steps) {
      if (s.payload?.kind !== "batch") continue;
      s.payload.values_checksum = checksum;
      s.values = valuesSummary(shownFile, b.values.rows);
    }
    return [...out, ...steps];
  }
  const rows = { diff: vd.diff, diff_rows: { shown: vd.rowsShown, total: vd.total } };
  if (vd.split) {
    // Two sets of values for one batch: which one a review or approve would move forward is not known.
    const why = moving ? REASONS.batchSplitBlocked(b.status, vd.split, shownFile) : REASONS.batchSplit(vd.split, shownFile);
    return [...out, ...(moving ? [] : steps), shownEntry(moving ? "blocked" : "unsupported", baddr, why, { ...status, ...rows, ...versioned })];
  }
  if (moving) return [...out, shownEntry("blocked", baddr, REASONS.batchValuesBlocked(b.status, vd.total, shownFile), { ...status, ...rows, ...versioned })];
  return [...out, ...steps, shownEntry("unsupported", baddr, REASONS.batchValues, { ...status, ...rows, ...versioned })];
}

/** The plan's entries of one policy of git. */
function policyChanges(d: DesiredSsp, desired: readonly DesiredSsp[], live: SspLive, findings: PlanFindings): Change[] {
  const p: PolicyContext = { d, source: `${d.source.file}:${d.source.line}`, targets: findings.targets };
  const lp = live.ssp.get(d.name);
  if (!lp) return createChanges(p, desired, live, findings);
  const versioned = { version_id: lp.envelope.version_id ?? null, last_modified_on: numberOrNull(lp.envelope.last_modified_on), source: p.source };
  const batches = d.batches.filter((b) => targeted(sspAddress.batch(d.name, b.name), p.targets));
  return [...policyFields(p, lp, versioned, findings), ...batches.flatMap((b) => batchChanges(p, b, lp, live, versioned, findings))];
}

/** The plan's entries of git's SSP policies. */
export const sspPlan = (desired: readonly DesiredSsp[], live: SspLive, findings: PlanFindings): Change[] =>
  desired.flatMap((d) => policyChanges(d, desired, live, findings));
