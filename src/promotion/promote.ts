/** A plan's promotion, whole: one read of the source for the plan's writes (and, with policy tests, for
 *  every approved batch they price with), the tests run against it, each write judged, the facts the
 *  plan shows and a saved plan and an evidence record keep. plan and apply (src/plan/make.ts) call it. */
import type { Registry } from "../kinds/kind.js";
import { isApplied, type Change } from "../shared/entries.js";
import type { PlanPromotion } from "../shared/promotion.js";
import { promoteChanges, promotionFacts } from "./check.js";
import { hasTests, readSource, type PromotionSource } from "./source.js";
import { testsInSource } from "./tests.js";

export async function promotePlan(
  changes: readonly Change[],
  src: PromotionSource,
  kinds: Registry,
  now: () => Date = () => new Date(),
): Promise<{ changes: Change[]; promotion: PlanPromotion }> {
  const writes = changes.filter(isApplied).map((c) => c.address);
  const facts = { ...src, user: null };
  if (!writes.length) return { changes: [...changes], promotion: promotionFacts(changes, facts, null) };
  const live = await readSource(src, writes, kinds);
  const readAt = now().toISOString();
  const tests = src.tests && hasTests(src) ? testsInSource(src.tests, live, kinds) : undefined;
  const judged = promoteChanges(changes, { name: src.name, desired: src.desired, live, here: src.here, ...(tests ? { tests } : {}) }, kinds);
  return { changes: judged, promotion: promotionFacts(judged, { ...facts, user: src.core.auth.username ?? null }, readAt, tests) };
}
