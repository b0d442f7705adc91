/** What every kind's guards and checks say, in one wording: a value, a version that moved, a write
 *  blocked, a write someone else's undid. */
import { NOTHING_SENT_FOR_IT } from "../api/write.js";
import { readWhole } from "../number.js";
import { isoOf, sameUser, shortIso, type Who } from "../shared/who.js";

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

/** What a saved plan's change is told when git no longer asks for it at all. */
export const NOT_IN_GIT_NOW = "git no longer asks for it (no policy file of the repo names it now)";

/** "FIELD: the plan writes A, git asks for B", a field of a saved plan's change that is not git's now. */
export const notGits = (field: string, plan: unknown, git: unknown): string => `${field}: the plan writes ${show(plan)}, git asks for ${show(git)}`;

/** A guard's verdict for a write it stops: what changed, and what to do. */
export const blocked = (what: string): { blocked: string } => ({
  blocked: `blocked: ${what}; ${NOTHING_SENT_FOR_IT}. Run revsync plan again and review the new plan`,
});

/** "overwritten after revsync's write by bob at …: what differs", the words of a write someone else's
 *  write undid (WriteOutcome "overwritten"). */
export function overwrittenWords(who: Who, what: string[]): string {
  return `overwritten after revsync's write${who.modified_by ? ` by ${who.modified_by}` : ""}${who.modified_on ? ` at ${shortIso(who.modified_on)}` : ""}: ${what.join(", ")}`;
}

/** How many steps a resource's version_id moved between two reads, where both read as whole numbers;
 *  undefined where the service shows none usable (absent, or a version that is no count). */
export function versionSteps(before: unknown, after: unknown): number | undefined {
  const whole = (v: unknown): number | undefined => {
    if (typeof v !== "string" && typeof v !== "number") return undefined;
    const r = readWhole(String(v));
    return r.ok ? r.value : undefined;
  };
  const a = whole(before);
  const b = whole(after);
  return a === undefined || b === undefined ? undefined : b - a;
}

/** "may have overwritten a change made at the same time by …: read the service and compare", the words of
 *  a write whose resource's version moved by more than the one step the write itself makes: someone
 *  else wrote it between the read right before the write and the read right after it (WriteOutcome
 *  "overwritten"). Who changed it last, as the read after says, is named when that is not revsync's own
 *  user; when it is, the other write came before revsync's, and the service does not say whose it was. */
export function concurrentWords(from: string, to: string, last: Who, user: string): string {
  const when = last.modified_on ? ` at ${shortIso(last.modified_on)}` : "";
  const by = !last.modified_by
    ? "by someone else"
    : !sameUser(last.modified_by, user)
      ? `by ${last.modified_by}${when}`
      : `by someone else, before revsync's write landed (the service names ${last.modified_by}${when}, revsync's own write, as the last change)`;
  return `may have overwritten a change made at the same time ${by}: version_id went from ${from} to ${to} over revsync's one write; read the service and compare`;
}
