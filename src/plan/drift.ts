/** The drift report: everything in which the service differs from git, including what plan cannot
 *  act on. Pure. Each kind of the registry says what drifted of it (src/kinds/). */
import { desiredOf, liveOf, readKinds, unreadAt, type DesiredState, type LiveState, type Registry, type Unmanaged } from "../kinds/kind.js";
import { KINDS } from "../kinds/registry.js";
import { unknownNotes, type Unknown } from "../shared/unknown.js";
import { plainData } from "../number.js";
import { keptOf, unreadOf } from "./build.js";
import { lookAlikes } from "./look-alike.js";
import { driftHeldTwice, forgetHeldTwice, heldTwiceOf, keptHeldTwice } from "./held-twice.js";
import { DRIFT_CLASSES, PLAN_FORMAT_VERSION, summarize, type DriftItem, type DriftReport } from "./model.js";

/** What the service holds and git does not: `unmanaged`, or `unmanaged_batch` for a part of something git
 *  manages (plan calls both `not in git`). */
const unmanagedDrift = (u: Unmanaged): DriftItem => ({
  address: u.address,
  class: u.class,
  diff: u.drift?.diff ?? [],
  message: u.drift?.message ?? "in the service, not in git",
  modified_by: u.modified_by,
  modified_on: u.modified_on,
});

/** Drift: everything in which live differs from git, including what plan cannot act on. */
export function buildDrift(
  desired: DesiredState,
  live: LiveState,
  meta: { environment: string; targets: string[]; now?: Date },
  kinds: Registry = KINDS,
): DriftReport {
  const unknown: Unknown = new Map();
  // What a failed read fed is left out, and said (unread), as in a plan.
  const read = readKinds(kinds, live);
  const held = heldTwiceOf(live, meta.targets, read);
  const inGit = new Set(kinds.flatMap((k) => k.addressesIn(desiredOf(k, desired))));
  const items: DriftItem[] = driftHeldTwice(
    [
      ...read.flatMap((k) => k.drift(desiredOf(k, desired), liveOf(k, live), { targets: meta.targets, unknown })),
      ...read.flatMap((k) => k.unmanaged(desiredOf(k, desired), liveOf(k, live), meta.targets).map(unmanagedDrift)),
    ].filter((d) => !unreadAt(live, d.address)),
    held,
    inGit,
  );
  forgetHeldTwice(unknown, held);
  const kept = keptHeldTwice(keptOf(desired, live, meta.targets, kinds), held);
  const alike = lookAlikes(desired, live, meta.targets, read);
  return {
    format_version: PLAN_FORMAT_VERSION,
    environment: meta.environment,
    created_at: (meta.now ?? new Date()).toISOString(),
    drift: plainData(items),
    summary: summarize(DRIFT_CLASSES, items as unknown as { [k: string]: unknown }[], "class"),
    notes: unknownNotes(unknown),
    ...(kept.length ? { kept_live: kept } : {}),
    ...(alike.length ? { look_alike: alike } : {}),
    ...unreadOf(live, meta.targets),
  };
}
