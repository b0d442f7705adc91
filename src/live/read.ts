import { mapLimit } from "../map-limit.js";
import type { ApiCore } from "../api/core.js";
import { ssp, tenantConfigurations } from "../api/resources.js";
import type { DesiredState } from "../config/repo.js";
import type { SspEnvelope, SspItem, TenantConfigurationEnvelope } from "../schema/generated/api.js";
import type { LiveValue } from "../ssp/csv.js";
import { address, batchNameOf, touchedBy } from "../shared/address.js";

export interface LivePolicy {
  envelope: SspEnvelope;
  item: SspItem;
  /** Present when the details were read (policy_name filter). */
  batches?: SspItem[];
}

export interface LiveState {
  tenantConfigs: TenantConfigurationEnvelope[];
  ssp: Map<string, LivePolicy>;
  /** Values of batches whose git side names a values file, keyed "policy/batch": the downloaded CSV
   *  as is (parsed only when it differs from git's file), or the values read from the batch. */
  values: Map<string, LiveValue[] | { csv: string }>;
}

export interface ReadOptions {
  concurrency: number;
  targets: string[];
  /** Read the details of every live policy (export), not only git's. */
  allDetails?: boolean;
  /** Read the details of every live policy that git manages, even one for which git lists no batch
   *  (drift: a live batch git does not list is unmanaged_batch). */
  managedDetails?: boolean;
  /** Read batch values for batches with a values file (plan, drift). */
  values?: boolean;
  /** Read the values of every approved batch, and so the details of every policy (policy tests). */
  approvedValues?: boolean;
  /** Read the values of every batch of every policy read in detail (export keeps them in git). */
  allValues?: boolean;
  progress?: (done: number, total: number, what: string) => void;
}

/** Reads what plan, drift and export compare against: the tenant configurations, the SSP list, the
 *  details of the policies that need them, and batch values. Independent reads run concurrently. */
export async function readLive(core: ApiCore, desired: DesiredState, opts: ReadOptions): Promise<LiveState> {
  let done = 0;
  let total = 2;
  const tick = (what: string): void => {
    done++;
    opts.progress?.(done, total, what);
  };
  const [tcs, list] = await Promise.all([
    tenantConfigurations.list(core).finally(() => tick("tenant configurations")),
    ssp.list(core).finally(() => tick("SSP policies")),
  ]);
  const live = new Map<string, LivePolicy>();
  for (const env of list) {
    const item = env.compliance_spec?.[0];
    if (env.compliance_name && item) live.set(env.compliance_name, { envelope: env, item });
  }
  const wanted = new Map(desired.ssp.map((d) => [d.name, d]));
  const detailNames = [...live.keys()].filter((name) => {
    // Policy tests: an order line may meet any policy, targeted or not (what is not targeted stays as
    // the service holds it, and still gives its SSP).
    if (opts.approvedValues) return true;
    if (!touchedBy(address.ssp(name), opts.targets)) return false;
    if (opts.allDetails) return true;
    const d = wanted.get(name);
    return !!d && (d.batches.length > 0 || !!opts.managedDetails);
  });
  total += detailNames.length;
  await mapLimit(detailNames, opts.concurrency, async (name) => {
    const env = await ssp.get(core, name);
    const item = env?.compliance_spec?.[0];
    const entry = live.get(name);
    if (entry && env && item) {
      entry.envelope = env;
      entry.item = item;
      entry.batches = item.batches ?? [];
    }
    tick(name);
  });
  const values = new Map<string, LiveValue[] | { csv: string }>();
  const jobs: { key: string; policy: string; batch: SspItem }[] = [];
  const queued = new Set<string>();
  const queue = (j: { key: string; policy: string; batch: SspItem }): void => {
    if (queued.has(j.key)) return;
    queued.add(j.key);
    jobs.push(j);
  };
  if (opts.approvedValues) {
    // Policy tests and impact: the values of every approved batch of every policy (read in detail above).
    for (const [name, lp] of live) {
      for (const b of lp.batches ?? []) if (b.status === "approved") queue({ key: `${name}/${batchNameOf(b)}`, policy: name, batch: b });
    }
  }
  if (opts.allValues) {
    for (const [name, lp] of live) {
      if (!touchedBy(address.ssp(name), opts.targets)) continue;
      for (const b of lp.batches ?? []) queue({ key: `${name}/${batchNameOf(b)}`, policy: name, batch: b });
    }
  }
  if (opts.values) {
    for (const d of desired.ssp) {
      const lp = live.get(d.name);
      if (!lp?.batches || !touchedBy(address.ssp(d.name), opts.targets)) continue;
      for (const b of d.batches) {
        const lb = lp.batches.find((x) => batchNameOf(x) === b.name);
        if (b.values && lb) queue({ key: `${d.name}/${b.name}`, policy: d.name, batch: lb });
      }
    }
  }
  if (jobs.length) {
    total += jobs.length;
    await mapLimit(jobs, opts.concurrency, async (j) => {
      values.set(j.key, await readBatchValues(core, j.policy, j.batch));
      tick(j.key);
    });
  }
  return { tenantConfigs: tcs, ssp: live, values };
}

/** A batch's values as the service holds them: the uploaded file (download by file id) as is, or, for a
 *  batch without a file (a calculator's), the values of the batch read. */
export async function readBatchValues(core: ApiCore, policy: string, batch: SspItem): Promise<LiveValue[] | { csv: string }> {
  if (typeof batch.file_id === "string" && batch.file_id) return { csv: (await ssp.download(core, batch.file_id)).toString("utf8") };
  const item = await ssp.batch(core, policy, batchNameOf(batch));
  return item?.ssp_values ?? [];
}
