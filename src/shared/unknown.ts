/** The one rule for what the service does not say. A field the service answers as null (or leaves out)
 *  where git holds a value is unknown: plan and drift do not compare it, export never overwrites git's
 *  value with the service's silence, and every report says so the same way, in notes that name each
 *  field and policy, so that none of them says "matches" or "no drift" about what it could not see.
 *  docs/decisions.md, "Nulls are unknown, not a change". Pure: every kind compares by it. */

import { isInexact } from "../number.js";
import { andList } from "../words.js";

/** A field git sets that could not be compared: the service shows no value for it (null, or left out),
 *  or answers a number a double cannot hold exactly (`inexact`: the service's text; the one number rule,
 *  src/number.ts), or a date revsync cannot read (`unreadable`: the service's text). */
export interface UnknownField {
  field: string;
  inexact?: string;
  unreadable?: string;
  /** What git's value was compared with instead, where the service shows it otherwise (an SSP batch's
   *  values: with its uploaded file only, when the batch's detail leaves its own values out). */
  comparedWith?: string;
}

/** The fields git sets that the service does not show (null or absent in its answer), or shows as a
 *  number that is not comparable, in git's order. */
export function notShown(git: Record<string, unknown>, live: Record<string, unknown>): UnknownField[] {
  return Object.keys(git)
    .filter((k) => live[k] === null || live[k] === undefined || isInexact(live[k]))
    .map((k) => {
      const v = live[k];
      return isInexact(v) ? { field: k, inexact: v.text } : { field: k };
    });
}

/** Unknown fields by address ("ssp/Hardware SSP" -> floor_percentage): what a report found. */
export type Unknown = Map<string, UnknownField[]>;

/** Adds what a comparison could not compare at one address. */
export function addUnknown(unknown: Unknown | undefined, addr: string, fields: readonly UnknownField[]): void {
  if (!unknown || !fields.length) return;
  unknown.set(addr, [...(unknown.get(addr) ?? []), ...fields]);
}

/** How many fields a report could not compare. */
export const unknownCount = (unknown: Unknown): number => [...unknown.values()].reduce((n, l) => n + l.length, 0);

/** The notes of a report, in address order then git's field order: one for the fields the service
 *  shows no value for at each set of addresses that lack the same ones, one for each other field. */
export function unknownNotes(unknown: Unknown): string[] {
  const sorted = [...unknown].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // Fields the service shows no value for, said once for every address that lacks the same ones: a
  // tenant that answers floor and ceiling as null for every policy is one note, not two per policy.
  const plain = (fields: readonly UnknownField[]): string[] =>
    fields.filter((f) => f.inexact === undefined && f.comparedWith === undefined && f.unreadable === undefined).map((f) => f.field);
  const groups = new Map<string, string[]>();
  for (const [addr, fields] of sorted) {
    const key = plain(fields).join("\u0000");
    if (key) groups.set(key, [...(groups.get(key) ?? []), addr]);
  }
  return sorted.flatMap(([addr, fields]) => {
    const key = plain(fields).join("\u0000");
    const addrs = groups.get(key);
    const own = fields.filter((f) => !plain([f]).length).map((f) => unknownNote(addr, f));
    return addrs?.[0] === addr ? [nullNote(addrs, plain(fields)), ...own] : own;
  });
}

/** The note of fields the service shows no value for, at one address or several. */
function nullNote(addrs: readonly string[], fields: readonly string[]): string {
  if (addrs.length === 1 && fields.length === 1) return unknownNote(addrs[0] as string, fields[0] as string);
  return `${andList(addrs)}: ${andList(fields)} not compared: the service shows no value (null) for ${fields.length === 1 ? "it" : "them"}${addrs.length > 1 ? ` in ${addrs.length === 2 ? "either" : "any"}` : ""}, so git's values could be neither checked nor changed`;
}

export function unknownNote(addr: string, f: UnknownField | string): string {
  const u = typeof f === "string" ? { field: f } : f;
  if (u.inexact !== undefined) {
    return `${addr}: ${u.field} not comparable: the service answers ${u.inexact}, a number a double cannot hold exactly, so git's value could be neither checked nor changed`;
  }
  if (u.comparedWith !== undefined) {
    return `${addr}: ${u.field} not shown (null, or left out), so git's values were compared with ${u.comparedWith} only`;
  }
  if (u.unreadable !== undefined) {
    return `${addr}: ${u.field} not comparable: the service answers ${JSON.stringify(u.unreadable)}, which revsync cannot read as a date, so git's value could be neither checked nor changed`;
  }
  return `${addr}: ${u.field} not compared: the service shows no value (null) for it, so git's value could be neither checked nor changed`;
}

/** The words a report uses in place of "matches" when some fields could not be compared. */
export function unknownCaveat(notes: number): string {
  // The notes name the fields (one note may name several, of several policies): the words count notes.
  return `except the fields the service does not show (see the ${notes === 1 ? "note" : "notes"})`;
}
