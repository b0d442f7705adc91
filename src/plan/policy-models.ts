/** The policies and the tenant's reallocation as the policy tests see them (revsync test, a plan's
 *  impact), from every kind that gives them: as the service holds them, as git asks, git's alone offline;
 *  and the impact's notes. */
import { desiredOf, liveOf, type DesiredState, type LiveState, type Registry, type TestModels } from "../kinds/kind.js";
import { KINDS } from "../kinds/registry.js";
import type { PolicyModel } from "../policy-test/evaluate.js";
import type { Unknown, UnknownField } from "../shared/unknown.js";

const policiesOf = (parts: TestModels[]): PolicyModel[] => parts.flatMap((p) => p.policies ?? []);
/** The tenant reallocates (carves_allocation) unless a kind says it does not. */
const carvesOf = (parts: TestModels[]): boolean => parts.every((p) => p.carves ?? true);

const fromLive = (live: LiveState, kinds: Registry): TestModels[] => kinds.flatMap((k) => (k.tests ? [k.tests.live(liveOf(k, live))] : []));
const fromGit = (desired: DesiredState, live: LiveState | undefined, kinds: Registry): TestModels[] =>
  kinds.flatMap((k) => (k.tests ? [k.tests.git(desiredOf(k, desired), live && liveOf(k, live))] : []));

/** The service's policies as it holds them (values: what the read downloaded). */
export const modelsFromLive = (live: LiveState, kinds: Registry = KINDS): PolicyModel[] => policiesOf(fromLive(live, kinds));

/** Whether the service reallocates (carves_allocation). */
export const carvesLive = (live: LiveState, kinds: Registry = KINDS): boolean => carvesOf(fromLive(live, kinds));

/** The policies as git asks for them: each of git's over its live self (a field git leaves out keeps its
 *  live value), and the live ones git does not manage as they are. */
export const modelsFromGit = (desired: DesiredState, live: LiveState, kinds: Registry = KINDS): PolicyModel[] => policiesOf(fromGit(desired, live, kinds));

/** Whether the tenant reallocates as git asks (over the service; offline, git's alone). */
export const carvesGit = (desired: DesiredState, live?: LiveState, kinds: Registry = KINDS): boolean => carvesOf(fromGit(desired, live, kinds));

/** Offline (revsync test without --live): git's policies alone; what git alone cannot place (its
 *  conditions or hierarchy_no keep their live values) is left out, and named, rather than guessed. */
export function modelsFromGitOnly(desired: DesiredState, kinds: Registry = KINDS): { models: PolicyModel[]; skipped: string[] } {
  const parts = fromGit(desired, undefined, kinds);
  return { models: policiesOf(parts), skipped: parts.flatMap((p) => p.skipped ?? []) };
}

/** The service's state with git's value in each field of git's entries that the service does not show
 *  (null or left out): the one rule for what the service does not say (src/shared/unknown.ts) applied to
 *  the impact. Such a field is not compared, so the plan treats it as unchanged; the impact's two sides
 *  (the service now, and as git asks) then both hold git's value, and differ only by what the plan
 *  changes. `fromGit` says which fields were taken from git, by address, for the impact's notes. */
export function liveWithGitsUnknowns(desired: DesiredState, live: LiveState, kinds: Registry = KINDS): { live: LiveState; fromGit: Unknown } {
  const taken: Unknown = new Map();
  const known = new Map(live);
  for (const k of kinds) if (k.tests?.known) known.set(k.name, k.tests.known(desiredOf(k, desired), liveOf(k, live), taken));
  return { live: known, fromGit: taken };
}

/** The notes of a plan's impact: for each policy a listed case or contract line meets (either side)
 *  whose fields the service does not show, that the impact took git's value for them on both sides. */
export function impactNotes(
  cases: readonly { before: { policy: string | null }; after: { policy: string | null } }[],
  contracts: readonly { lines: readonly { before: { policy: string | null }; after: { policy: string | null } }[] }[],
  fromGit: Unknown,
  kinds: Registry = KINDS,
): string[] {
  const met = new Set<string>();
  for (const s of [...cases, ...contracts.flatMap((c) => c.lines)])
    for (const p of [s.before.policy, s.after.policy]) if (p !== null) for (const k of kinds) if (k.tests) met.add(k.address(p));
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
