/** --target: what it may name, and the one filter of git's state by it. */
import { UserError } from "../errors.js";
import { desiredOf, liveOf, readKinds, type DesiredState, type LiveState, type Registry } from "../kinds/kind.js";
import { KINDS } from "../kinds/registry.js";
import { nearest } from "../did-you-mean.js";
import { shellQuote } from "../shell-quote.js";
import { targeted } from "../shared/address.js";

/** Every address known in git or in the service. */
export function knownAddresses(desired: DesiredState, live: LiveState, kinds: Registry = KINDS): Set<string> {
  // A kind whose reads failed whole knows only git's addresses.
  return new Set(kinds.flatMap((k) => [...k.addressesIn(desiredOf(k, desired)), ...(live.has(k.name) ? k.addressesLive(liveOf(k, live)) : [])]));
}

/** A target must name an address that exists in git or in the service (exact, case-sensitive); one that
 *  matches nothing is an error naming the closest addresses, never a quiet "no changes". */
export function checkTargets(targets: string[], desired: DesiredState, live: LiveState, kinds: Registry = KINDS): void {
  if (!targets.length) return;
  const known = knownAddresses(desired, live, kinds);
  const bad = targets.filter((t) => !known.has(t));
  if (!bad.length) return;
  const lines = bad.map((t) => {
    const near = nearest(t, known);
    return `${JSON.stringify(t)}${near.length ? `: did you mean ${near.map((n) => `--target ${shellQuote(n)}`).join(" or ")}?` : ""}`;
  });
  throw new UserError(
    `--target matches nothing in git or in the service (addresses are exact and case-sensitive):\n  ${lines.join("\n  ")}`,
    `addresses look like ${kinds.flatMap((k) => k.addressForms).join(", ")}`,
  );
}

/** What git asks, limited to what `--target` selects: the one filter every section of a plan that
 *  models "as git asks" (the policy-test impact, and any other impact) goes through, so that a targeted
 *  plan's impact is the impact of the targeted changes alone. What is outside the targets keeps what the
 *  service holds (it is left out here; the models fill it from the live state); each kind says what of
 *  its entries a target selects. */
export function targetedDesired(desired: DesiredState, live: LiveState, targets: readonly string[], kinds: Registry = KINDS): DesiredState {
  if (!targets.length) return desired;
  const on = (a: string): boolean => targeted(a, [...targets]);
  return new Map(readKinds(kinds, live).map((k) => [k.name, k.targeted(desiredOf(k, desired), liveOf(k, live), on)]));
}
