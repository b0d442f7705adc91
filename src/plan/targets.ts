import type { DesiredState } from "../config/repo.js";
import { UserError } from "../errors.js";
import type { LiveState } from "../live/read.js";
import { nearest } from "../did-you-mean.js";
import { address, batchNameOf, targeted } from "../shared/address.js";

/** Every address known in git or in the service. */
export function knownAddresses(desired: DesiredState, live: LiveState): Set<string> {
  const known = new Set<string>();
  for (const d of desired.tenantConfigs) known.add(address.tenant(d.name));
  for (const e of live.tenantConfigs) known.add(address.tenant(e.compliance_name ?? ""));
  for (const d of desired.ssp) {
    known.add(address.ssp(d.name));
    for (const b of d.batches) known.add(address.batch(d.name, b.name));
  }
  for (const [name, lp] of live.ssp) {
    known.add(address.ssp(name));
    for (const b of lp.batches ?? []) known.add(address.batch(name, batchNameOf(b)));
  }
  return known;
}

/** A target must name an address that exists in git or in the service (exact, case-sensitive); one that
 *  matches nothing is an error naming the closest addresses, never a quiet "no changes". */
export function checkTargets(targets: string[], desired: DesiredState, live: LiveState): void {
  if (!targets.length) return;
  const known = knownAddresses(desired, live);
  const bad = targets.filter((t) => !known.has(t));
  if (!bad.length) return;
  const lines = bad.map((t) => {
    const near = nearest(t, known);
    return `${JSON.stringify(t)}${near.length ? `: did you mean ${near.map((n) => JSON.stringify(n)).join(" or ")}?` : ""}`;
  });
  throw new UserError(
    `--target matches nothing in git or in the service (addresses are exact and case-sensitive):\n  ${lines.join("\n  ")}`,
    "addresses look like tenant-configuration/<name>, ssp/<policy name>, ssp/<policy name>/batch/<batch name>",
  );
}

/** What git asks, limited to what `--target` selects: the one filter every section of a plan that
 *  models "as git asks" (the policy-test impact, and any other impact) goes through, so that a targeted
 *  plan's impact is the impact of the targeted changes alone. A policy outside the targets keeps what
 *  the service holds (it is left out here; the models fill it from the live state); a policy selected
 *  only through some of its batches keeps its live fields and takes git's word for those batches; a
 *  policy the service does not hold is kept only when its own address is selected (its create is). */
export function targetedDesired(desired: DesiredState, live: LiveState, targets: readonly string[]): DesiredState {
  if (!targets.length) return desired;
  const on = (a: string): boolean => targeted(a, [...targets]);
  const ssp = desired.ssp.flatMap((d) => {
    if (on(address.ssp(d.name))) return [d];
    const batches = d.batches.filter((b) => on(address.batch(d.name, b.name)));
    if (!batches.length || !live.ssp.has(d.name)) return [];
    return [{ ...d, spec: {} as typeof d.spec, batches }];
  });
  return { ...desired, tenantConfigs: desired.tenantConfigs.filter((d) => on(address.tenant(d.name))), ssp };
}
