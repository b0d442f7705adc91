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
}

/** A batch's values as the service shows them, each where it shows it: the uploaded file (downloaded by
 *  its file id; absent when the batch names no file) and the batch's own values (`ssp_values` of the
 *  batch's detail, what pricing uses; absent when the detail leaves them out). The interface holds both,
 *  so both are compared with git (docs/decisions.md, "Values nobody reviewed are never approved"). */
export interface ShownValues {
  file?: { csv: string };
  values?: LiveValue[];
}

/** The id of a batch's uploaded file, when the service names one. */
export const fileIdOf = (batch: SspItem): string | undefined => (typeof batch.file_id === "string" && batch.file_id ? batch.file_id : undefined);

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

type ValuesJob = { key: string; policy: string; batch: SspItem };

/** The batches whose values are read, each once: every approved batch (policy tests), every batch read in
 *  detail (export), the batches git holds a values file of (plan, drift). */
function valuesJobs(live: Map<string, LivePolicy>, desired: readonly DesiredSsp[], opts: ReadOptions): ValuesJob[] {
  const jobs = new Map<string, ValuesJob>();
  const queue = (policy: string, batch: SspItem, name = batchNameOf(batch)): void => {
    const key = `${policy}/${name}`;
    if (!jobs.has(key)) jobs.set(key, { key, policy, batch });
  };
  for (const [name, lp] of live) {
    if (opts.approvedValues) for (const b of lp.batches ?? []) if (b.status === "approved") queue(name, b);
    if (opts.allValues && touchedBy(sspAddress.policy(name), opts.targets)) for (const b of lp.batches ?? []) queue(name, b);
  }
  if (opts.values) {
    for (const d of desired) {
      const lp = live.get(d.name);
      if (!lp?.batches || !touchedBy(sspAddress.policy(d.name), opts.targets)) continue;
      for (const b of d.batches) {
        const lb = lp.batches.find((x) => batchNameOf(x) === b.name);
        if (b.values && lb) queue(d.name, lb, b.name);
      }
    }
  }
  return [...jobs.values()];
}

/** Reads the SSP list, then the details of the policies that need them, then the values of batches. */
export async function readSsp(core: ApiCore, desired: readonly DesiredSsp[], opts: ReadOptions, progress: ReadProgress): Promise<SspLive> {
  const list = await ssp.list(core);
  progress.done("SSP policies");
  const live = new Map<string, LivePolicy>();
  for (const env of list) {
    const item = env.compliance_spec?.[0];
    if (env.compliance_name && item) live.set(env.compliance_name, { envelope: env, item });
  }
  const names = detailNames(live, desired, opts);
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
  const jobs = valuesJobs(live, desired, opts);
  progress.more(jobs.length);
  await mapLimit(jobs, opts.concurrency, async (j) => {
    try {
      values.set(j.key, await readBatchValues(core, j.policy, j.batch));
    } catch (e) {
      if (!progress.unread(sspAddress.batch(j.policy, batchNameOf(j.batch)), e)) throw e;
    }
    progress.done(j.key);
  });
  return { ssp: live, values };
}
