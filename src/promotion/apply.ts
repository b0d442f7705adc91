/** What apply holds a promotion to before it writes: a saved plan made for the source revsync.yaml names
 *  now (a plan made without promote_from, or from another source, is another review), the policy tests run
 *  live against the source once more (time has passed since the plan), and the words of an apply that
 *  leaves writes blocked for promotion (it exits 1). Each write's own check is gate.ts. */
import { UserError } from "../errors.js";
import type { Registry } from "../kinds/kind.js";
import { readLive } from "../live/read.js";
import type { Change } from "../shared/entries.js";
import type { PlanPromotion, PromotionTests } from "../shared/promotion.js";
import { tenantIdentity } from "../tenant.js";
import { plural } from "../words.js";
import { blockedForPromotion } from "./check.js";
import { hasTests, type PromotionSource } from "./source.js";
import { testsInSource, testsWords } from "./tests.js";

/** A saved plan against the environment's promote_from now: refused (nothing sent) when they differ. */
export function checkSavedPromotion(plan: { environment: string; promotion?: PlanPromotion }, promoteFrom: string | undefined, file: string): void {
  const was = plan.promotion?.from;
  if (was === promoteFrom) return;
  const now = promoteFrom === undefined ? "has no promote_from" : `receives its changes from ${JSON.stringify(promoteFrom)} (promote_from)`;
  const then = was === undefined ? "was made without promotion" : `was promoted from ${JSON.stringify(was)}`;
  throw new UserError(
    `the plan ${file} ${then}, and environment ${JSON.stringify(plan.environment)} ${now} in revsync.yaml: what was reviewed is not what applies now, so nothing was sent`,
    `plan again: revsync plan --env ${plan.environment} --out FILE, review it, and apply that file`,
  );
}

/** A saved plan's source tenant against the one revsync.yaml names for it now: the reviewer read what that
 *  tenant held, so a source pointed at another tenant since is another review (nothing sent). */
export function checkSavedSource(plan: { environment: string; promotion?: PlanPromotion }, src: PromotionSource | undefined, file: string): void {
  const was = plan.promotion;
  if (!was || !src) return;
  const then = tenantIdentity(was.base_url, was.realm);
  const now = tenantIdentity(src.baseUrl, src.realm);
  if (then.key === now.key) return;
  throw new UserError(
    `the plan ${file} was promoted from ${JSON.stringify(was.from)} at ${then.url}, realm ${then.realm}, and ${JSON.stringify(src.name)} is now ${now.url}, realm ${now.realm} in revsync.yaml: what was reviewed is not what applies now, so nothing was sent`,
    `plan again: revsync plan --env ${plan.environment} --out FILE, review it, and apply that file`,
  );
}

/** The source's policy tests once more, right before the writes (none: the repo has none). */
export async function testsBeforeWriting(src: PromotionSource, kinds: Registry): Promise<PromotionTests | undefined> {
  if (!src.tests || !hasTests(src)) return undefined;
  const live = await readLive(src.core, src.desired, { concurrency: src.concurrency, targets: [], approvedValues: true }, kinds);
  return testsInSource(src.tests, live, kinds);
}

/** The refusal of an apply whose source's tests fail now: nothing is sent. */
export function testsRefusal(from: string, t: PromotionTests): UserError {
  return new UserError(
    `${testsWords(from, t)}, so nothing was sent`,
    `fix the policies or the tests, apply them to ${from}, then plan again; revsync test --live --env ${from} runs them`,
  );
}

/** The error an apply ends with while writes of its plan are blocked for promotion (exit 1), or none. */
export function promotionLeftBlocked(plan: { changes: readonly Change[]; promotion?: PlanPromotion }): UserError | undefined {
  const blocked = blockedForPromotion(plan);
  if (!blocked.length || !plan.promotion) return undefined;
  const from = plan.promotion.from;
  return new UserError(
    `${plural(blocked.length, "write")} of this plan ${blocked.length === 1 ? "is" : "are"} blocked for promotion from ${from}, and nothing was sent for ${blocked.length === 1 ? "it" : "them"}:\n  ${blocked.join("\n  ")}`,
    `apply to ${from} first and run its tests there (revsync apply --env ${from}; revsync test --live --env ${from}), then plan again`,
  );
}
