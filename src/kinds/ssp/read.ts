/** Reading the service's SSP policies: the list, the details of the policies that need them, and the
 *  values of batches, concurrently. */
import type { ApiCore } from "../../api/core.js";
import { ssp } from "../../api/resources.js";
import { mapLimit } from "../../map-limit.js";
import type { SspEnvelope, SspItem } from "../../schema/generated/api.js";
import { batchNameOf, touchedBy } from "../../shared/address.js";
import type { LiveValue } from "../../ssp/csv.js";
import type { ReadOptions, ReadProgress } from "../kind.js";
import type { DesiredSsp } from "./files.js";

/** Addresses of SSP policies and their batches: ssp/<policy>, ssp/<policy>/batch/<batch>. */
export const sspAddress = {
  policy: (name: string): string => `ssp/${name}`,
  batch: (policy: string, batch: string): string => `ssp/${policy}/batch/${batch}`,
};

export interface LivePolicy {
  envelope: SspEnvelope;
  item: SspItem;
  /** Present when the details were read (policy_name filter). */
  batches?: SspItem[];
}

/** What revsync reads of the service's SSP policies. */
export interface SspLive {
  ssp: Map<string, LivePolicy>;
  /** Values of batches whose git side names a values file, keyed "policy/batch": what the service shows
   *  of them (its uploaded file as is, parsed only when it differs from git's; the batch's own values). */
  values: Map<string, ShownValues>;
  /** The names the service's list holds more than once, with every copy (`ssp` keeps the first; none of
   *  them is git's, and nothing is written by the name: src/plan/held-twice.ts). */
  copies?: Map<string, LivePolicy[]>;
}

/** A batch's values as the service shows them, each where it shows it: the uploaded file (downloaded by
 *  its file id; absent when the batch names no file) and the batch's own values (`ssp_values` of the
 *  batch's detail, what pricing uses; absent when the detail leaves them out). The interface holds both,
 *  so both are compared with git (docs/decisions.md, "Values nobody reviewed are never approved"). */
export interface ShownValues {
  file?: { csv: string };
  values?: LiveValue[];
}

/** The id of a batch's uploaded file, when the service names one, as the text its download's path takes.
 *  The spec types file_id null in answers and does not say the type of a value that is not null: an
 *  integer id is an id as much as a text one (read as text, it is never taken for "no file", which would
 *  leave the file uncompared and a new upload unseen). */
export const fileIdOf = (batch: Pick<SspItem, "file_id"> | undefined): string | undefined => {
  const id: unknown = batch?.file_id;
  if (typeof id === "string") return id || undefined;
  return typeof id === "number" && Number.isFinite(id) ? String(id) : undefined;
};

/** The batch's own values in its detail (`ssp_values`), or undefined when the detail leaves them out. */
export async function ownValues(core: ApiCore, policy: string, batch: string): Promise<LiveValue[] | undefined> {
  const item = await ssp.batch(core, policy, batch);
  return Array.isArray(item?.ssp_values) ? item.ssp_values : undefined;
}

/** What the service shows of a batch's values: its file and its own values, read at once. */
export async function readBatchValues(core: ApiCore, policy: string, batch: SspItem): Promise<ShownValues> {
  const fileId = fileIdOf(batch);
  const [csv, values] = await Promise.all([
    fileId ? ssp.download(core, fileId).then((b) => b.toString("utf8")) : undefined,
    ownValues(core, policy, batchNameOf(batch)),
  ]);
  return { ...(csv !== undefined ? { file: { csv } } : {}), ...(values ? { values } : {}) };
}

/** The policies whose details are read: git's that list batches (or every one git manages, or every one,
 *  as the options ask), within the targets. */
function detailNames(live: Map<string, LivePolicy>, desired: readonly DesiredSsp[], opts: ReadOptions): string[] {
  const wanted = new Map(desired.map((d) => [d.name, d]));
  return [...live.keys()].filter((name) => {
    // Policy tests: an order line may meet any policy, targeted or not (what is not targeted stays as
    // the service holds it, and still gives its SSP).
    if (opts.approvedValues) return true;
    if (!touchedBy(sspAddress.policy(name), opts.targets)) return false;
    if (opts.allDetails) return true;
    const d = wanted.get(name);
    return !!d && (d.batches.length > 0 || !!opts.managedDetails);
  });
}

/** The policy's last approved batch in the service but `except`: the latest effective start, then the
 *  latest change. */
export function lastApproved(lp: LivePolicy, except?: string): SspItem | undefined {
  const approved = (lp.batches ?? []).filter((b) => b.status === "approved" && batchNameOf(b) !== except);
  const start = (b: SspItem): string => (typeof b.effective_start_date === "string" ? b.effective_start_date : "");
  return approved.sort((a, b) => start(b).localeCompare(start(a)) || (Number(b.updated_at) || 0) - (Number(a.updated_at) || 0))[0];
}

/** `own`: the batch's own values alone (a baseline of guardrails' facts: what pricing uses). */
type ValuesJob = { key: string; policy: string; batch: SspItem; own?: boolean };

/** The last approved batch of each policy a batch of git's moves forward in (its values git holds):
 *  what guardrails measure the move against (docs/guardrails.md, "Facts"). */
function baselineJobs(live: Map<string, LivePolicy>, desired: readonly DesiredSsp[], targets: string[]): ValuesJob[] {
  const out: ValuesJob[] = [];
  for (const d of desired) {
    const lp = live.get(d.name);
    if (!lp?.batches || !touchedBy(sspAddress.policy(d.name), targets)) continue;
    const moving = d.batches.filter((b) => {
      const lb = lp.batches?.find((x) => batchNameOf(x) === b.name);
      return b.values && lb && lb.status !== b.status && b.status !== "file uploaded";
    });
    const bases = new Map(
      moving.flatMap((b) => {
        const base = lastApproved(lp, b.name);
        return base ? [[batchNameOf(base), base] as const] : [];
      }),
    );
    for (const [name, batch] of bases) out.push({ key: `${d.name}/${name}`, policy: d.name, batch, own: true });
  }
  return out;
}

/** The batches whose values are read, each once: every approved batch (policy tests), every batch read in
 *  detail (export), the batches git holds a values file of (plan, drift). */
function valuesJobs(live: Map<string, LivePolicy>, desired: readonly DesiredSsp[], opts: ReadOptions, copies?: ReadonlyMap<string, unknown>): ValuesJob[] {
  const jobs = new Map<string, ValuesJob>();
  const queue = (policy: string, batch: SspItem, name = batchNameOf(batch)): void => {
    const key = `${policy}/${name}`;
    if (!jobs.has(key)) jobs.set(key, { key, policy, batch });
  };
  for (const [name, lp] of live) {
    if (copies?.has(name)) continue;
    if (opts.approvedValues) for (const b of lp.batches ?? []) if (b.status === "approved") queue(name, b);
    if (opts.allValues && touchedBy(sspAddress.policy(name), opts.targets)) for (const b of lp.batches ?? []) queue(name, b);
  }
  if (opts.values) {
    for (const d of desired) {
      const lp = live.get(d.name);
      if (!lp?.batches || copies?.has(d.name) || !touchedBy(sspAddress.policy(d.name), opts.targets)) continue;
      for (const b of d.batches) {
        const lb = lp.batches.find((x) => batchNameOf(x) === b.name);
        if (b.values && lb) queue(d.name, lb, b.name);
      }
    }
  }
  if (opts.baselineValues) for (const j of baselineJobs(live, desired, opts.targets)) if (!jobs.has(j.key)) jobs.set(j.key, j);
  return [...jobs.values()];
}

/** Reads the SSP list, then the details of the policies that need them, then the values of batches. */
export async function readSsp(core: ApiCore, desired: readonly DesiredSsp[], opts: ReadOptions, progress: ReadProgress): Promise<SspLive> {
  const list = await ssp.list(core);
  progress.done("SSP policies");
  const live = new Map<string, LivePolicy>();
  const copies = new Map<string, LivePolicy[]>();
  for (const env of list) {
    const item = env.compliance_spec?.[0];
    if (!env.compliance_name || !item) continue;
    const first = live.get(env.compliance_name);
    // Reads never merge copies: the first is kept as the name's, every copy is kept beside it.
    if (first) copies.set(env.compliance_name, [...(copies.get(env.compliance_name) ?? [first]), { envelope: env, item }]);
    else live.set(env.compliance_name, { envelope: env, item });
  }
  // A name held twice is read no further: its details, by that name, would be either copy's.
  const names = detailNames(live, desired, opts).filter((n) => !copies.has(n));
  progress.more(names.length);
  // A policy's detail that cannot be read fails that policy alone (and its batches), where reads may be
  // partial; so does a batch's values.
  await mapLimit(names, opts.concurrency, async (name) => {
    try {
      const env = await ssp.get(core, name);
      const item = env?.compliance_spec?.[0];
      const entry = live.get(name);
      if (entry && env && item) Object.assign(entry, { envelope: env, item, batches: item.batches ?? [] });
    } catch (e) {
      if (!progress.unread(sspAddress.policy(name), e)) throw e;
    }
    progress.done(name);
  });
  const values = new Map<string, ShownValues>();
  const jobs = valuesJobs(live, desired, opts, copies);
  progress.more(jobs.length);
  await mapLimit(jobs, opts.concurrency, async (j) => {
    try {
      if (!j.own) values.set(j.key, await readBatchValues(core, j.policy, j.batch));
      else {
        const own = await ownValues(core, j.policy, batchNameOf(j.batch));
        values.set(j.key, own ? { values: own } : {});
      }
    } catch (e) {
      if (!progress.unread(sspAddress.batch(j.policy, batchNameOf(j.batch)), e)) throw e;
    }
    progress.done(j.key);
  });
  return { ssp: live, values, ...(copies.size ? { copies } : {}) };
}
