/** Drift of git's SSP policies: everything in which the service differs from them, including what plan
 *  cannot act on. Pure. */
import type { DriftItem } from "../../shared/entries.js";
import { targeted } from "../../shared/address.js";
import type { Unknown } from "../../shared/unknown.js";
import { batchWho, envelopeWho } from "../../shared/who.js";
import { changedItems, missingItem } from "../entries.js";
import { plural } from "../../words.js";
import { batchDatesDiff, liveBatch, shownValuesDiff, sspFieldDiff } from "./compare.js";
import type { DesiredBatch, DesiredSsp } from "./files.js";
import { sspAddress, type LivePolicy, type SspLive } from "./read.js";

function batchDrift(d: DesiredSsp, b: DesiredBatch, lp: LivePolicy, live: SspLive, unknown: Unknown): DriftItem[] {
  const baddr = sspAddress.batch(d.name, b.name);
  const lb = liveBatch(lp, b.name);
  if (!lb) return [missingItem(baddr, "batch in git")];
  const out: DriftItem[] = [];
  // The batch's dates git sets, as plan compares them: git's value before, the service's after.
  const dates = batchDatesDiff(b, lb, baddr, unknown).map((x) => ({ ...x, before: x.after, after: x.before }));
  if (dates.length) {
    out.push({
      address: baddr,
      class: "changed",
      diff: dates,
      message: `${dates.map((x) => x.path).join(" and ")} ${dates.length === 1 ? "differs" : "differ"} from git; the interface cannot change a batch's dates: change them in the service, or make git hold the service's (revsync export writes them)`,
      ...batchWho(lb),
    });
  }
  if (lb.status !== b.status) {
    out.push({
      address: baddr,
      class: "batch_status",
      diff: [{ path: "status", kind: "changed", before: b.status, after: lb.status }],
      message: `status is ${JSON.stringify(lb.status)}, git says ${JSON.stringify(b.status)}`,
      ...batchWho(lb),
    });
  }
  const held = live.values.get(`${d.name}/${b.name}`);
  if (!b.values || !held) return out;
  const vd = shownValuesDiff(b.values, held, baddr, "drift", unknown);
  if (vd.total || vd.split) {
    const split = vd.split
      ? `; the service holds two sets of values for it: its uploaded file and its own values (ssp_values, what pricing uses) differ in ${plural(vd.split, "row")}`
      : "";
    out.push({
      address: baddr,
      class: "batch_values",
      diff: vd.diff,
      diff_rows: { shown: vd.rowsShown, total: vd.total },
      message: `values differ from ${b.valuesShown}: ${vd.changed} changed, ${vd.added} only in git, ${vd.removed} only in the service${split}`,
      ...batchWho(lb),
    });
  }
  return out;
}

function policyDrift(d: DesiredSsp, live: SspLive, targets: string[], unknown: Unknown): DriftItem[] {
  const addr = sspAddress.policy(d.name);
  const lp = live.ssp.get(d.name);
  if (!lp) return targeted(addr, targets) ? [missingItem(addr)] : [];
  const out: DriftItem[] = [];
  if (targeted(addr, targets)) {
    const diff = sspFieldDiff(d, lp, unknown).map((x) => ({ ...x, before: x.after, after: x.before }));
    out.push(...changedItems(addr, diff, envelopeWho(lp.envelope)));
  }
  for (const b of d.batches) if (targeted(sspAddress.batch(d.name, b.name), targets)) out.push(...batchDrift(d, b, lp, live, unknown));
  return out;
}

/** Drift of git's SSP policies and their batches. */
export const sspDrift = (desired: readonly DesiredSsp[], live: SspLive, targets: string[], unknown: Unknown): DriftItem[] =>
  desired.flatMap((d) => policyDrift(d, live, targets, unknown));
