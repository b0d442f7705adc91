/** The plan: what apply would do to make the service hold what git says, and every difference it
 *  cannot act on, each with its reason. Pure. Each kind of the registry makes its entries (src/kinds/);
 *  drift is src/plan/drift.ts. */
import { UserError } from "../errors.js";
import { desiredOf, liveOf, readKinds, unreadAt, type DesiredState, type LiveState, type PlanFindings, type Registry, type Unread } from "../kinds/kind.js";
import { shownEntry } from "../kinds/entries.js";
import { KINDS, kindOf } from "../kinds/registry.js";
import { byCodePoint } from "../shared/address.js";
import { unknownNotes } from "../shared/unknown.js";
import { whoWords } from "../shared/who.js";
import { plainData } from "../number.js";
import { lookAlikes } from "./look-alike.js";
import { forgetHeldTwice, heldTwiceOf, keptHeldTwice, planHeldTwice } from "./held-twice.js";
import { ACTIONS, planChecksum, summarize, type Change, type KeptLive, type Plan } from "./model.js";

const ORDER: Record<string, number> = { update: 0, create: 1, review: 2, approve: 3, blocked: 4, unsupported: 5, not_in_git: 6 };

export interface PlanMeta {
  environment: string;
  baseUrl: string;
  authUrl: string;
  realm: string;
  user: string | null;
  targets: string[];
  now?: Date;
}

/** A plan not yet sealed: its checksum comes last, once (src/plan/make.ts adds the impact and four eyes). */
export type DraftPlan = Omit<Plan, "checksum">;

/** Each kind's entries; then what the service holds and git does not (not in git). A plan that cannot be
 *  made (a create that lacks a field) stops here: nothing may be sent. */
function entries(desired: DesiredState, live: LiveState, targets: string[], all: Registry): { changes: Change[]; findings: PlanFindings; kept: KeptLive[] } {
  const findings: PlanFindings = { targets, problems: [], unknown: new Map() };
  // A kind whose reads failed whole is planned not at all, and what a read failed to feed is left out:
  // the plan says it was not read (unread), never what it cannot know.
  const kinds = readKinds(all, live);
  const changes = kinds.flatMap((k) => k.plan(desiredOf(k, desired), liveOf(k, live), findings)).filter((c) => !unreadAt(live, c.address));
  if (findings.problems.length) {
    throw new UserError(
      `the plan cannot be made, so nothing was sent:\n  ${findings.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`).join("\n  ")}`,
      "add the fields to the policy file (revsync validate checks them offline)",
    );
  }
  for (const k of kinds) {
    for (const u of k.unmanaged(desiredOf(k, desired), liveOf(k, live), targets)) {
      if (unreadAt(live, u.address)) continue;
      const why = `${u.reason}${whoWords(u, "last modified")}`;
      changes.push(
        shownEntry("not_in_git", u.address, why, {
          before: u.before,
          version_id: u.version_id,
          last_modified_on: u.last_modified_on,
          modified_by: u.modified_by,
          modified_on: u.modified_on,
        }),
      );
    }
  }
  // A name the service holds twice addresses nothing: an entry of its own, and nothing written by it.
  const held = heldTwiceOf(live, targets, kinds);
  const inGit = new Set(kinds.flatMap((k) => k.addressesIn(desiredOf(k, desired))));
  forgetHeldTwice(findings.unknown, held);
  return { changes: planHeldTwice(changes, held, inGit), findings, kept: keptHeldTwice(keptOf(desired, live, targets, kinds), held) };
}

/** What the service holds that git's files leave out, of every kind, in address order. */
export function keptOf(desired: DesiredState, live: LiveState, targets: string[], kinds: Registry): KeptLive[] {
  const kept = readKinds(kinds, live)
    .flatMap((k) => k.kept?.(desiredOf(k, desired), liveOf(k, live), targets) ?? [])
    .filter((k) => !unreadAt(live, k.address));
  return plainData(kept.sort((a, b) => byCodePoint(a.address, b.address)));
}

/** Entries in the plan's order: by action, then as each kind ranks its own, then by address in code point
 *  order (the same plan on every machine, whatever its locale). */
export function inPlanOrder(changes: Change[], kinds: Registry = KINDS): Change[] {
  const rank = (c: Change): number => kindOf(kinds, c.address)?.rank?.(c) ?? 0;
  return changes.sort((a, b) => (ORDER[a.action] ?? 9) - (ORDER[b.action] ?? 9) || rank(a) - rank(b) || byCodePoint(a.address, b.address));
}

/** A draft plan whose entries were judged again (promotion blocks writes): in the plan's order, counted. */
export function withChanges(plan: DraftPlan, changes: Change[], kinds: Registry = KINDS): DraftPlan {
  const ordered = inPlanOrder(plainData(changes), kinds);
  return { ...plan, changes: ordered, summary: summarize(ACTIONS, ordered as unknown as { [k: string]: unknown }[], "action") };
}

/** The plan's entries and notes, in the plan's order, unsealed. */
export function draftPlan(desired: DesiredState, live: LiveState, meta: PlanMeta, kinds: Registry = KINDS): DraftPlan {
  const { changes, findings, kept } = entries(desired, live, meta.targets, kinds);
  const alike = lookAlikes(desired, live, meta.targets, readKinds(kinds, live));
  inPlanOrder(changes, kinds);
  return {
    format_version: "1",
    environment: meta.environment,
    created_at: (meta.now ?? new Date()).toISOString(),
    base_url: meta.baseUrl,
    auth_url: meta.authUrl,
    realm: meta.realm,
    user: meta.user,
    targets: meta.targets,
    // The service's values as plain data (a number it gave that is not comparable, as its text): the
    // plan reads back from its file as it was made.
    changes: plainData(changes),
    summary: summarize(ACTIONS, changes as unknown as { [k: string]: unknown }[], "action"),
    notes: unknownNotes(findings.unknown),
    ...(kept.length ? { kept_live: kept } : {}),
    ...(alike.length ? { look_alike: alike } : {}),
    ...unreadOf(live, meta.targets),
  };
}

/** What was not read, as a plan or drift report says it (within the targets, where there are some). */
export function unreadOf(live: LiveState, targets: readonly string[]): { unread?: Unread[] } {
  const list = (live.unread ?? []).filter(
    (u) => !targets.length || targets.some((t) => t === u.address || t.startsWith(`${u.address}/`) || u.address.startsWith(`${t}/`)),
  );
  return list.length ? { unread: list.map((u) => ({ ...u })) } : {};
}

/** A plan, sealed with its checksum of what the reviewer is shown, all of it (the checksum stands before
 *  the four-eyes view and the impact, where plan files have always had it). */
export function seal(plan: DraftPlan): Plan {
  const { four_eyes, impact, ...entries } = plan;
  return { ...entries, checksum: planChecksum(plan), ...(four_eyes ? { four_eyes } : {}), ...(impact ? { impact } : {}) };
}

export function buildPlan(desired: DesiredState, live: LiveState, meta: PlanMeta, kinds: Registry = KINDS): Plan {
  return seal(draftPlan(desired, live, meta, kinds));
}
