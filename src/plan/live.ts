import { mapLimit } from "../api/clock.js";
import type { ApiCore } from "../api/core.js";
import { ssp, tenantConfigurations } from "../api/resources.js";
import type { DesiredState } from "../config/repo.js";
import type { SspEnvelope, SspItem, SspValueInput, TenantConfigurationEnvelope } from "../schema/generated/api.js";
import { parseCsv, TEMPLATE_HEADER } from "../ssp/csv.js";
import { address, targeted } from "./model.js";

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
  values: Map<string, SspValueInput[] | { csv: string }>;
}

export interface ReadOptions {
  concurrency: number;
  targets: string[];
  /** Read the details of every live policy (export, and drift's unmanaged batches), not only git's. */
  allDetails?: boolean;
  /** Read batch values for batches with a values file (drift). */
  values?: boolean;
  progress?: (done: number, total: number, what: string) => void;
}

/** Values of a downloaded batch file (spec 4.4): the template's columns. */
export function valuesFromCsv(text: string): SspValueInput[] {
  const rows = parseCsv(text);
  const header = rows[0]?.cells ?? [];
  const idx = (name: string): number => header.indexOf(name);
  const cols = TEMPLATE_HEADER.map(idx);
  return rows.slice(1).map((r) => {
    const c = (i: number): string => r.cells[cols[i] ?? -1] ?? "";
    return {
      product_id: c(0),
      currency_code: c(1),
      value_type: c(2) as "Amount" | "Percent",
      below_mid_point: Number(c(3)),
      mid_point: Number(c(4)),
      above_mid_point: Number(c(5)),
      effective_start_date: c(6),
      effective_end_date: c(7),
    };
  });
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
    if (!targeted(address.ssp(name), opts.targets)) return false;
    if (opts.allDetails) return true;
    const d = wanted.get(name);
    return !!d && d.batches.length > 0;
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
  const values = new Map<string, SspValueInput[] | { csv: string }>();
  if (opts.values) {
    const jobs: { key: string; policy: string; batch: SspItem }[] = [];
    for (const d of desired.ssp) {
      const lp = live.get(d.name);
      if (!lp?.batches || !targeted(address.ssp(d.name), opts.targets)) continue;
      for (const b of d.batches) {
        const lb = lp.batches.find((x) => x.batch_name === b.name || x.name === b.name);
        if (b.valuesPath && lb) jobs.push({ key: `${d.name}/${b.name}`, policy: d.name, batch: lb });
      }
    }
    total += jobs.length;
    await mapLimit(jobs, opts.concurrency, async (j) => {
      if (j.batch.file_id) values.set(j.key, { csv: (await ssp.download(core, j.batch.file_id)).toString("utf8") });
      else {
        const item = await ssp.batch(core, j.policy, j.batch.batch_name ?? j.batch.name);
        values.set(j.key, item?.ssp_values ?? []);
      }
      tick(j.key);
    });
  }
  return { tenantConfigs: tcs, ssp: live, values };
}
