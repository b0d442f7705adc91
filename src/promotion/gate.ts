/** apply's check of a promoted write, right before every send of it: the write unit runs it first in its
 *  guard (ApiCore.gated), so that nothing reaches the environment that its source does not hold now. Each
 *  check reads the source for that write alone. */
import { NOTHING_SENT_FOR_IT } from "../api/write.js";
import type { Registry } from "../kinds/kind.js";
import type { Change } from "../shared/entries.js";
import { judgeWrite } from "./check.js";
import { readSource, type PromotionSource } from "./source.js";

/** The check of one write: undefined while the source holds what it sets; else why it is blocked. */
export function promotionGate(src: PromotionSource, kinds: Registry): (c: Change) => Promise<string | undefined> {
  return async (c) => {
    const live = await readSource(src, [c.address], kinds, false);
    const judged = judgeWrite(c, { name: src.name, desired: src.desired, live, here: src.here }, kinds);
    if (judged.promotion?.status === "promoted") return undefined;
    return `blocked: ${c.address} is not promoted from ${src.name} any more (read right before the write): ${judged.reason ?? ""}; ${NOTHING_SENT_FOR_IT}`;
  };
}
