/** A name the service holds twice addresses nothing (docs/decisions.md, "A name held twice addresses
 *  nothing"): the interface names what a tenant holds (its policies, their batches) by their names, so
 *  where the service holds one name more than once, revsync cannot tell which copy git's file means, nor
 *  which one a write by that name would reach. Plan shows the name as an entry of its own, every copy
 *  listed, and blocks every write at and below it; drift shows it as `duplicate`. Pure; each kind says
 *  which names it holds twice (Kind.heldTwice). */
import { shownEntry } from "../kinds/entries.js";
import { liveOf, type HeldTwice, type LiveState, type Registry } from "../kinds/kind.js";
import { touchedBy } from "../shared/address.js";
import type { Unknown } from "../shared/unknown.js";
import { isApplied, type Change, type DriftItem, type KeptLive } from "./model.js";

/** Every name the service holds more than once, of every kind, that the targets reach. */
export function heldTwiceOf(live: LiveState, targets: string[], kinds: Registry): HeldTwice[] {
  return kinds.flatMap((k) => k.heldTwice?.(liveOf(k, live)) ?? []).filter((h) => touchedBy(h.address, targets));
}

/** Whether an address is the one held twice, or lies below it (a batch of a policy held twice). */
const under = (h: HeldTwice, address: string): boolean => address === h.address || address.startsWith(`${h.address}/`);

/** Drops the notes of what could not be compared at and below a name held twice: neither copy was
 *  compared with git (the name's own entry says so). */
export function forgetHeldTwice(unknown: Unknown, held: readonly HeldTwice[]): void {
  for (const address of [...unknown.keys()]) if (held.some((h) => under(h, address))) unknown.delete(address);
}

/** The words of a name held twice: how many copies, each one, and why nothing is written. */
export function heldTwiceWords(h: HeldTwice, inGit: boolean): string {
  const name = h.address.slice(h.address.lastIndexOf("/") + 1);
  const held = `the service holds ${h.copies.length} ${h.what} named ${JSON.stringify(name)}: ${h.copies.map((c, i) => `(${i + 1}) ${c}`).join("; ")}`;
  return inGit
    ? `${held}. The interface names each by that name, so revsync cannot tell which one git's file means, nor which one a write would reach: it compares neither with git and writes to none (nothing at or below this address); remove or rename the copies in the service until one holds the name, then plan again`
    : `${held}, and git has no file for the name. The interface names each by that name, so none of them can be managed: remove or rename the copies in the service until one holds the name`;
}

/** The plan's entries with each name held twice as an entry of its own: blocked where git names it or
 *  something below it, else not in git; every entry at or below it that would write becomes blocked
 *  (nothing is sent by a name that addresses nothing), and every other entry there is dropped (the one
 *  entry says it). */
export function planHeldTwice(changes: Change[], held: readonly HeldTwice[], inGit: ReadonlySet<string>): Change[] {
  if (!held.length) return changes;
  const out: Change[] = [];
  for (const c of changes) {
    const h = held.find((x) => under(x, c.address));
    if (!h) out.push(c);
    else if (c.address !== h.address && (isApplied(c) || c.action === "blocked"))
      out.push(
        shownEntry("blocked", c.address, `${h.address} is held more than once in the service (its own entry lists each copy): nothing is written below it`, {
          before: c.before,
          after: c.after,
          diff: c.diff,
          ...(c.source ? { source: c.source } : {}),
        }),
      );
  }
  for (const h of held) {
    const named = [...inGit].some((a) => under(h, a));
    out.push(shownEntry(named ? "blocked" : "not_in_git", h.address, heldTwiceWords(h, named)));
  }
  return out;
}

/** Drift with each name held twice as an item of its own (`duplicate`), in place of what was compared at
 *  and below it (one copy's difference from git says nothing: git's file means neither). */
export function driftHeldTwice(items: DriftItem[], held: readonly HeldTwice[], inGit: ReadonlySet<string>): DriftItem[] {
  if (!held.length) return items;
  const out = items.filter((i) => !held.some((h) => under(h, i.address)));
  for (const h of held) {
    const named = [...inGit].some((a) => under(h, a));
    out.push({ address: h.address, class: "duplicate", diff: [], message: heldTwiceWords(h, named), modified_by: null, modified_on: null });
  }
  return out;
}

/** The fields git leaves out, but for a name held twice (whose copy they would be is not known). */
export const keptHeldTwice = (kept: KeptLive[], held: readonly HeldTwice[]): KeptLive[] => kept.filter((k) => !held.some((h) => under(h, k.address)));
