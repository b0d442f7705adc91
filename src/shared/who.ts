/** Who changed a resource last and when, as the service says, in one wording for every command. */

/** An epoch-seconds time as ISO text (as JSON reports carry it); null when absent. */
export function isoOf(epoch: unknown): string | null {
  return typeof epoch === "number" && Number.isFinite(epoch) ? new Date(epoch * 1000).toISOString() : null;
}

/** An ISO time as the text reports show it: whole seconds without ".000". */
export const shortIso = (iso: string): string => iso.replace(".000Z", "Z");

/** Who and when, as data: from an envelope (last_modified_by, last_modified_on) or a batch (updated_by,
 *  updated_at); null where the service does not say. */
export interface Who {
  modified_by: string | null;
  modified_on: string | null;
}

export const envelopeWho = (env: { last_modified_by?: string | null; last_modified_on?: number | null } | undefined): Who => ({
  modified_by: env?.last_modified_by ?? null,
  modified_on: isoOf(env?.last_modified_on),
});

export const batchWho = (b: { updated_by?: string | null; updated_at?: number | null } | undefined): Who => ({
  modified_by: b?.updated_by ?? null,
  modified_on: isoOf(b?.updated_at),
});

/** "last modified by bob at 2026-…Z", with `verb` for the words before; "" when the service names
 *  neither. How drift and plan say who changed a resource last. */
export function modifiedWords(w: Who, verb = "last modified"): string {
  if (!w.modified_by && !w.modified_on) return "";
  return `${verb}${w.modified_by ? ` by ${w.modified_by}` : ""}${w.modified_on ? ` at ${shortIso(w.modified_on)}` : ""}`;
}

/** " (last changed by bob at 2026-…Z)", with `verb` for the words before ("created", "batch last
 *  changed"); "" when the service names neither. */
export function whoWords(w: Who, verb = "last changed"): string {
  const words = modifiedWords(w, verb);
  return words && ` (${words})`;
}

/** Whether two user ids name the same user (four eyes): compared without case and surrounding space, as
 *  an identity provider's user names are; an unknown user (null, empty) is nobody's equal. */
export function sameUser(a: string | null | undefined, b: string | null | undefined): boolean {
  return !!a && !!b && a.trim().toLowerCase() === b.trim().toLowerCase();
}
