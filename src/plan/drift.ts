/** The drift report: everything in which the service differs from git, including what plan cannot
 *  act on. Pure. */
import type { DesiredBatch, DesiredSsp, DesiredState, DesiredTenantConfig } from "../config/repo.js";
import type { LivePolicy, LiveState } from "../live/read.js";
import { address, targeted } from "../shared/address.js";
import { fieldDiff, type FieldDiff } from "../shared/normalize.js";
import { plural } from "../words.js";
import { batchWho, envelopeWho, type Who } from "../shared/who.js";
import { batchDatesDiff, liveBatch, pick, sspFieldDiff, unmanagedOf, valuesDiff, VALUE_ROWS_SHOWN, type Unmanaged } from "./compare.js";
import { unknownNotes, type Unknown } from "../shared/unknown.js";
import { plainData } from "../number.js";
import { DRIFT_CLASSES, PLAN_FORMAT_VERSION, summarize, type DriftItem, type DriftReport } from "./model.js";

/** Who drifted: the thing itself. A policy or tenant configuration names its envelope's last change, a
 *  batch its own (updated_by, updated_at); what the service does not hold names nobody. */
const nobody: Who = { modified_by: null, modified_on: null };

const missing = (addr: string, what = "in git"): DriftItem => ({
  address: addr,
  class: "missing",
  diff: [],
  message: `${what}, not in the service`,
  ...nobody,
});

/** Fields that differ from git, in drift's words: `before` is what git says, `after` what the service holds. */
function changed(addr: string, diff: FieldDiff[], who: Who): DriftItem[] {
  if (!diff.length) return [];
  const message = `${plural(diff.length, "field")} ${diff.length === 1 ? "differs" : "differ"} from git: ${diff.map((x) => x.path).join(", ")}`;
  return [{ address: addr, class: "changed", diff, message, ...who }];
}

function tenantDrift(d: DesiredTenantConfig, live: LiveState): DriftItem[] {
  const addr = address.tenant(d.name);
  const env = live.tenantConfigs.find((e) => e.compliance_name === d.name);
  const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
  if (!env || !item) return [missing(addr)];
  const diff = fieldDiff(d.spec, pick(item, Object.keys(d.spec))).map((x) => ({ ...x, kind: "changed" as const }));
  return changed(addr, diff, envelopeWho(env));
}

function batchDrift(d: DesiredSsp, b: DesiredBatch, lp: LivePolicy, live: LiveState, unknown: Unknown): DriftItem[] {
  const baddr = address.batch(d.name, b.name);
  const lb = liveBatch(lp, b.name);
  if (!lb) return [missing(baddr, "batch in git")];
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
  const vd = valuesDiff(b.values, held, baddr, "drift");
  if (vd.total) {
    out.push({
      address: baddr,
      class: "batch_values",
      diff: vd.diff,
      diff_rows: { shown: Math.min(vd.total, VALUE_ROWS_SHOWN), total: vd.total },
      message: `values differ from ${b.valuesShown}: ${vd.changed} changed, ${vd.added} only in git, ${vd.removed} only in the service`,
      ...batchWho(lb),
    });
  }
  return out;
}

function sspDrift(d: DesiredSsp, live: LiveState, targets: string[], unknown: Unknown): DriftItem[] {
  const addr = address.ssp(d.name);
  const lp = live.ssp.get(d.name);
  if (!lp) return targeted(addr, targets) ? [missing(addr)] : [];
  const out: DriftItem[] = [];
  if (targeted(addr, targets)) {
    const diff = sspFieldDiff(d, lp, unknown).map((x) => ({ ...x, before: x.after, after: x.before }));
    out.push(...changed(addr, diff, envelopeWho(lp.envelope)));
  }
  for (const b of d.batches) if (targeted(address.batch(d.name, b.name), targets)) out.push(...batchDrift(d, b, lp, live, unknown));
  return out;
}

/** What the service holds and git does not: `unmanaged`, or `unmanaged_batch` for a batch of a policy
 *  git manages (plan calls both `not in git`). */
function unmanagedDrift(u: Unmanaged): DriftItem {
  const who = { modified_by: u.modified_by, modified_on: u.modified_on };
  if (u.kind !== "batch") return { address: u.address, class: "unmanaged", diff: [], message: "in the service, not in git", ...who };
  return {
    address: u.address,
    class: "unmanaged_batch",
    diff: [{ path: "status", kind: "removed", before: undefined, after: u.before.status ?? null }],
    message: `batch in the service (status ${JSON.stringify(u.before.status ?? null)}), not listed in git`,
    ...who,
  };
}

/** Drift: everything in which live differs from git, including what plan cannot act on. */
export function buildDrift(desired: DesiredState, live: LiveState, meta: { environment: string; targets: string[]; now?: Date }): DriftReport {
  const t = meta.targets;
  const unknown: Unknown = new Map();
  const items: DriftItem[] = [
    ...desired.tenantConfigs.filter((d) => targeted(address.tenant(d.name), t)).flatMap((d) => tenantDrift(d, live)),
    ...desired.ssp.flatMap((d) => sspDrift(d, live, t, unknown)),
    ...unmanagedOf(desired, live, t).map(unmanagedDrift),
  ];
  return {
    format_version: PLAN_FORMAT_VERSION,
    environment: meta.environment,
    created_at: (meta.now ?? new Date()).toISOString(),
    drift: plainData(items),
    summary: summarize(DRIFT_CLASSES, items as unknown as { [k: string]: unknown }[], "class"),
    notes: unknownNotes(unknown),
  };
}
