/** Names of git and of the service that a reader takes for one another (case, spaces, invisible
 *  characters, how Unicode writes a letter, letters that look alike): revsync compares names exactly, so
 *  such a pair is two things to it (a create and a not in git, or a missing and an unmanaged), and plan
 *  and drift warn, naming both. Pure. */
import { desiredOf, liveOf, type DesiredState, type LiveState, type Registry } from "../kinds/kind.js";
import { lookAlikeKeys, visibleName } from "../look-alike.js";
import { byCodePoint, targeted } from "../shared/address.js";

/** A pair of addresses that look alike: git's, and the service's. */
export interface LookAlike {
  git: string;
  service: string;
}

/** Each address git names and the service does not hold, against each the service holds and git does not
 *  name, of the same kind: the pairs that look alike, within the targets. */
export function lookAlikes(desired: DesiredState, live: LiveState, targets: string[], kinds: Registry): LookAlike[] {
  const out: LookAlike[] = [];
  for (const k of kinds) {
    const git = new Set(k.addressesIn(desiredOf(k, desired)));
    const service = new Set(k.addressesLive(liveOf(k, live)));
    const byKey = new Map<string, string[]>();
    for (const s of service) {
      if (git.has(s)) continue;
      for (const key of new Set(lookAlikeKeys(s))) byKey.set(key, [...(byKey.get(key) ?? []), s]);
    }
    for (const g of git) {
      if (service.has(g)) continue;
      const alike = new Set(lookAlikeKeys(g).flatMap((key) => byKey.get(key) ?? []));
      for (const s of alike) if (targeted(g, targets) || targeted(s, targets)) out.push({ git: g, service: s });
    }
  }
  return out.sort((a, b) => byCodePoint(a.git, b.git) || byCodePoint(a.service, b.service));
}

/** One pair in words, for the warnings of plan and drift. */
export function lookAlikeWords(l: LookAlike): string {
  return `${visibleName(l.git)} in git and ${visibleName(l.service)} in the service look alike (they differ only in case, spaces, characters that cannot be seen, how a letter is written or letters that look alike): revsync compares names exactly and takes them for two, so check which one is meant before applying`;
}
