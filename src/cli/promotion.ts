/** promote_from's source environment, opened with this run's flags and output (src/session/promotion.ts). */
import type { Repo, ResolvedEnv } from "../config/repo.js";
import type { PromotionSource } from "../promotion/source.js";
import { openPromotion as openSource, type PromotionWiring } from "../session/promotion.js";
import { concurrencyOf, cwdOf, desiredState, envOf, openClient } from "./context.js";
import type { TreeStatus } from "../evidence/context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

/** How a source environment is opened in this run: its settings, git's state and a client of its own. */
export function promotionWiring(repo: Repo, flags: GlobalFlags, out: Output): PromotionWiring {
  return {
    penv: envOf(flags),
    cwd: cwdOf(flags),
    concurrency: () => concurrencyOf(flags),
    desiredState: (source) => desiredState(repo, source, out, flags),
    openClient: (source) => openClient(source, flags, out),
  };
}

/** The environment's source, opened; undefined without promote_from. Its client is the caller's to close. */
export function openPromotion(repo: Repo, env: ResolvedEnv, flags: GlobalFlags, out: Output, tree?: TreeStatus): Promise<PromotionSource | undefined> {
  return openSource(repo, env, promotionWiring(repo, flags, out), tree);
}
