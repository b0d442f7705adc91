/** Judging a plan's writes against their source environment (promote_from): each write is promoted while
 *  the source holds what it sets, as git asks of the source from the same files (each kind compares its
 *  own: src/kinds/<kind>/promotion.ts), and blocked otherwise: not yet there, different there, left out of
 *  it, or the policy tests failing there. A blocked write becomes a `blocked` entry, with its reason and
 *  the write it would be; nothing is sent for it. Pure. */
import { canonicalHash } from "../canonical-json.js";
import { desiredOf, liveOf, type DesiredState, type LiveState, type Registry } from "../kinds/kind.js";
import { kindOf } from "../kinds/registry.js";
import { isApplied, type Change } from "../shared/entries.js";
import type { ChangePromotion, PlanPromotion, PromotedAction, PromotionTests, SourceFinding } from "../shared/promotion.js";
import { testsWords } from "./tests.js";

/** A value in a reason: its JSON, cut short past 80 characters. */
function shown(v: unknown): string {
  const s = typeof v === "string" && /^(values|no |two |a batch)/.test(v) ? v : (JSON.stringify(v) ?? "null");
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

/** Why the source does not hold a write, in words, with what to do; undefined when it holds it. */
export function findingWords(from: string, f: SourceFinding): string | undefined {
  if (f.leftOut)
    return `not in ${from}: git's files leave it out of ${from} (metadata.environments), so it was never tried there and cannot be promoted from there`;
  const behind = f.notYet.join("; ");
  if (f.differs.length) {
    const fields = f.differs.map((d) => `${d.field} (${from} holds ${shown(d.source)}, git ${shown(d.git)})`).join(", ");
    return `differs in ${from}: ${fields}${behind ? `; not yet there: ${behind}` : ""}; someone changed ${from} since, or it was never applied there: bring ${from} back to git (revsync plan --env ${from} shows what differs), then plan again`;
  }
  if (behind) return `not yet in ${from}: ${behind}; apply it to ${from} first (revsync apply --env ${from}), then plan again`;
  return undefined;
}

const NOTHING: SourceFinding = { compared: {}, notYet: [], differs: [], notShown: [] };

/** A write marked promoted (no `why`), or turned into a blocked entry with its reason. */
function marked(c: Change, from: string, f: SourceFinding, why: string | undefined): Change {
  const action = (c.promotion?.action ?? c.action) as PromotedAction;
  const promotion: ChangePromotion = {
    status: why === undefined ? "promoted" : "blocked",
    from,
    action,
    compared: f.compared,
    ...(f.differs.length ? { differs: f.differs } : {}),
    ...(f.notShown.length ? { not_shown: f.notShown } : {}),
  };
  if (why === undefined) return { ...c, promotion };
  const { payload: _sent, ...rest } = c;
  return { ...rest, action: "blocked", reason: why, promotion };
}

/** The source as a write is judged against: git's state as it reads the files, what was read of it, and
 *  git's state as this environment reads them (`here`: both must come from the same documents). */
export interface JudgedAgainst {
  name: string;
  desired: DesiredState;
  live: LiveState;
  here: DesiredState;
}

/** What the source holds of one write, as its kind compares it. */
export function sourceFinding(c: Change, source: JudgedAgainst, kinds: Registry): SourceFinding | undefined {
  const kind = kindOf(kinds, c.address);
  return kind?.promotion?.(c, desiredOf(kind, source.desired), liveOf(kind, source.live), desiredOf(kind, source.here));
}

/** One write, judged: promoted, or blocked and why. */
export function judgeWrite(c: Change, source: JudgedAgainst, kinds: Registry): Change {
  const f = sourceFinding(c, source, kinds);
  if (!f) return marked(c, source.name, NOTHING, `revsync cannot compare ${c.address.split("/")[0]} between environments, so it promotes none of it`);
  return marked(c, source.name, f, findingWords(source.name, f));
}

/** Every write of a plan, judged; the entries apply never acts on stay as they are. With tests that fail
 *  in the source, nothing is promoted. What a blocked create would upload and move goes no further. */
export function promoteChanges(changes: readonly Change[], source: JudgedAgainst & { tests?: PromotionTests }, kinds: Registry): Change[] {
  const failing = source.tests?.failed.length ? testsWords(source.name, source.tests) : undefined;
  const judged = changes.map((c) => {
    if (!isApplied(c)) return c;
    const j = judgeWrite(c, source, kinds);
    return failing && j.promotion?.status === "promoted" ? marked(c, source.name, { ...NOTHING, compared: j.promotion.compared }, failing) : j;
  });
  const creates = judged.filter((c) => c.promotion?.status === "blocked" && c.promotion.action === "create").map((c) => c.address);
  return judged.map((c) => {
    const under = c.promotion?.status === "promoted" ? creates.find((a) => c.address.startsWith(`${a}/`)) : undefined;
    if (!under || !c.promotion) return c;
    return marked(
      c,
      source.name,
      { ...NOTHING, compared: c.promotion.compared },
      `the create of ${under} is blocked for promotion, so nothing is done for its batches`,
    );
  });
}

/** The plan's promotion as a whole: the source, the commit, how many writes are promoted and blocked, the
 *  checksum of what was compared, the tests. `readAt` null: nothing was read (no write to promote). */
/** The checksum of what was compared of every write that has a promotion mark: a plan's and a record's
 *  compared_checksum (evidence verify computes it again from the record's changes). */
export function comparedChecksum(changes: readonly { address: string; promotion?: ChangePromotion }[]): string {
  return canonicalHash(changes.flatMap((c) => (c.promotion ? [{ address: c.address, action: c.promotion.action, compared: c.promotion.compared }] : [])));
}

export function promotionFacts(
  changes: readonly Change[],
  source: { name: string; baseUrl: string; realm: string; user: string | null; commit: string | null; uncommitted: readonly string[] },
  readAt: string | null,
  tests?: PromotionTests,
): PlanPromotion {
  return {
    from: source.name,
    base_url: source.baseUrl,
    realm: source.realm,
    user: source.user,
    commit: source.commit,
    ...(source.uncommitted.length ? { uncommitted: [...source.uncommitted] } : {}),
    read_at: readAt,
    promoted: changes.filter((c) => c.promotion?.status === "promoted").length,
    blocked: changes.filter((c) => c.promotion?.status === "blocked").length,
    compared_checksum: comparedChecksum(changes),
    ...(tests ? { tests } : {}),
  };
}

/** The writes of a plan blocked for promotion, in words (none: every write is promoted, or none is
 *  about promotion): apply writes nothing for them and exits 1. */
export function blockedForPromotion(plan: { changes: readonly Change[] }): string[] {
  return plan.changes.filter((c) => c.promotion?.status === "blocked").map((c) => `${c.address} (${c.promotion?.action}): ${c.reason ?? ""}`);
}
