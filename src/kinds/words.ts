/** What every kind's guards and checks say, in one wording: a value, a version that moved, a write
 *  blocked, a write someone else's undid. */
import { isoOf, shortIso, type Who } from "../shared/who.js";

/** A value as a guard or check shows it. */
export const show = (v: unknown): string => (v === undefined ? "(unset)" : JSON.stringify(v));

const iso = (epoch: unknown): string | null => {
  const t = isoOf(epoch);
  return t ? shortIso(t) : null;
};

/** How the live envelope's version moved since the plan read it. version_id is compared where both
 *  sides have one and last_modified_on likewise: a service that shows no version_id is judged by
 *  last_modified_on (and by the fields themselves), never stale forever. */
export function versionMoved(
  recorded: { version_id: string | null; last_modified_on: number | null },
  live: { version_id?: string | null; last_modified_on?: number | null },
): string[] {
  const out: string[] = [];
  if (recorded.version_id != null && live.version_id != null && recorded.version_id !== live.version_id)
    out.push(`version_id ${recorded.version_id} -> ${live.version_id}`);
  if (recorded.last_modified_on != null && live.last_modified_on != null && recorded.last_modified_on !== live.last_modified_on)
    out.push(`last_modified_on ${iso(recorded.last_modified_on)} -> ${iso(live.last_modified_on)}`);
  return out;
}

/** A guard's verdict for a write it stops: what changed, and what to do. */
export const blocked = (what: string): { blocked: string } => ({
  blocked: `blocked: ${what}; nothing was sent for it. Run revsync plan again and review the new plan`,
});

/** "overwritten after revsync's write by bob at …: what differs", the words of a write someone else's
 *  write undid (WriteOutcome "overwritten"). */
export function overwrittenWords(who: Who, what: string[]): string {
  return `overwritten after revsync's write${who.modified_by ? ` by ${who.modified_by}` : ""}${who.modified_on ? ` at ${shortIso(who.modified_on)}` : ""}: ${what.join(", ")}`;
}
