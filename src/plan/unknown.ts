/** The one rule for what the service does not say. A field the service answers as null (or leaves out)
 *  where git holds a value is unknown: plan and drift do not compare it, export never overwrites git's
 *  value with the service's silence, and every report says so the same way, one note per field and
 *  policy, so that none of them says "matches" or "no drift" about what it could not see.
 *  docs/decisions.md, "Nulls are unknown, not a change". Pure. */

import { isInexact } from "../number.js";
import { address } from "../shared/address.js";

/** A field git sets that could not be compared: the service shows no value for it (null, or left out),
 *  or answers a number a double cannot hold exactly (`inexact`: the service's text; the one number rule,
 *  src/number.ts), or a date revsync cannot read (`unreadable`: the service's text). */
export interface UnknownField {
  field: string;
  inexact?: string;
  unreadable?: string;
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

/** The notes of a report: one per field and policy, in address order then git's field order. */
export function unknownNotes(unknown: Unknown): string[] {
  return [...unknown].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).flatMap(([addr, fields]) => fields.map((f) => unknownNote(addr, f)));
}

export function unknownNote(addr: string, f: UnknownField | string): string {
  const u = typeof f === "string" ? { field: f } : f;
  if (u.inexact !== undefined) {
    return `${addr}: ${u.field} not comparable: the service answers ${u.inexact}, a number a double cannot hold exactly, so git's value could be neither checked nor changed`;
  }
  if (u.unreadable !== undefined) {
    return `${addr}: ${u.field} not comparable: the service answers ${JSON.stringify(u.unreadable)}, which revsync cannot read as a date, so git's value could be neither checked nor changed`;
  }
  return `${addr}: ${u.field} not compared: the service shows no value (null) for it, so git's value could be neither checked nor changed`;
}

/** The words a report uses in place of "matches" when some fields could not be compared. */
export function unknownCaveat(n: number): string {
  return `except ${n === 1 ? "1 field" : `${n} fields`} the service does not show (see the ${n === 1 ? "note" : "notes"})`;
}

/** The notes of a plan's impact: for each policy a listed case or contract line meets (either side)
 *  whose fields the service does not show, that the impact took git's value for them on both sides. */
export function impactNotes(
  cases: readonly { before: { policy: string | null }; after: { policy: string | null } }[],
  contracts: readonly { lines: readonly { before: { policy: string | null }; after: { policy: string | null } }[] }[],
  fromGit: Unknown,
): string[] {
  const met = new Set<string>();
  for (const s of [...cases, ...contracts.flatMap((c) => c.lines)]) for (const p of [s.before.policy, s.after.policy]) if (p !== null) met.add(address.ssp(p));
  return [...fromGit]
    .filter(([addr]) => met.has(addr))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([addr, fields]) => impactNote(addr, fields));
}

export function impactNote(addr: string, unknown: readonly (UnknownField | string)[]): string {
  const fields = unknown.map((f) => (typeof f === "string" ? f : f.field));
  const one = fields.length === 1;
  const how = unknown.some((f) => typeof f !== "string" && f.inexact !== undefined) ? "null, or a number it cannot hold exactly" : "null";
  return `${addr}: ${fields.join(" and ")} ${one ? "is" : "are"} git's on both sides of this impact: the service does not show ${one ? "it" : "them"} (${how}), so ${one ? "it is" : "they are"} taken as unchanged`;
}
