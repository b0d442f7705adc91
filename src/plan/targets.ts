import type { DesiredState } from "../config/repo.js";
import { UserError } from "../errors.js";
import type { LiveState } from "../live/read.js";
import { address, batchNameOf } from "./model.js";

/** Whether reads must cover `addr` for these targets: a target at it, below it, or above it (a batch
 *  target needs its policy's detail read). */
export function touchedBy(addr: string, targets: string[]): boolean {
  return targets.length === 0 || targets.some((t) => t === addr || t.startsWith(`${addr}/`) || addr.startsWith(`${t}/`));
}

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

/** Edit distance, for "did you mean". */
export function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] ?? 0;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] ?? 0;
      prev[j] = Math.min(up + 1, (prev[j - 1] ?? 0) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] ?? 0;
}

/** The closest of `names` to `wanted`, nearest first: case-insensitive equality first, then edits. */
export function closest(wanted: string, names: Iterable<string>, max = 3): string[] {
  const scored = [...names].map((n) => ({ n, d: n.toLowerCase() === wanted.toLowerCase() ? 0 : distance(wanted.toLowerCase(), n.toLowerCase()) }));
  const limit = Math.max(2, Math.floor(wanted.length / 3));
  return scored
    .filter((s) => s.d <= limit)
    .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))
    .slice(0, max)
    .map((s) => s.n);
}

/** A target must name an address that exists in git or in the service (exact, case-sensitive); one that
 *  matches nothing is an error naming the closest addresses, never a quiet "no changes". */
export function checkTargets(targets: string[], desired: DesiredState, live: LiveState): void {
  if (!targets.length) return;
  const known = knownAddresses(desired, live);
  const bad = targets.filter((t) => !known.has(t));
  if (!bad.length) return;
  const lines = bad.map((t) => {
    const near = closest(t, known);
    return `${JSON.stringify(t)}${near.length ? `: did you mean ${near.map((n) => JSON.stringify(n)).join(" or ")}?` : ""}`;
  });
  throw new UserError(
    `--target matches nothing in git or in the service (addresses are exact and case-sensitive):\n  ${lines.join("\n  ")}`,
    "addresses look like tenant-configuration/<name>, ssp/<policy name>, ssp/<policy name>/batch/<batch name>",
  );
}
