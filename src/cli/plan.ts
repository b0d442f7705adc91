import { resolve } from "node:path";
import { hasApplied, hasChanges } from "../report/plan.js";
import { unreadError } from "../report/unread.js";
import { pickView } from "../report/view.js";
import { planViews } from "../report/views/plan.js";
import { writeUserFile } from "../user-files.js";
import { shellQuote } from "../shell-quote.js";
import { openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { makePlan } from "./reading.js";
import { noteTurnedAway } from "./rate-limit.js";

export interface PlanFlags extends GlobalFlags {
  out?: string;
  detailedExitcode?: boolean;
}

export async function runPlan(flags: PlanFlags, out: Output): Promise<number> {
  const view = await pickView(planViews, flags.format);
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  const core = openClient(env, flags, out);
  try {
    const plan = await makePlan(repo, env, core, flags, out, { impact: true });
    // Markdown that leaves something out names where the whole plan is: the file --out writes, if any.
    view({ plan, file: flags.out }, out);
    noteTurnedAway(core.governor, env, flags, out);
    if (flags.out) {
      writeUserFile(resolve(out.io.cwd, flags.out), JSON.stringify(plan, null, 2) + "\n");
      out.info(`Saved the plan to ${flags.out}. Apply exactly this plan with: revsync apply ${shellQuote(flags.out)}`);
    }
    // 2 only when apply would do something: entries it never applies (blocked, not in git, unsupported)
    // keep a PR check green, with a warning naming them; the plan itself never says "No changes" then.
    const actionable = hasApplied(plan);
    if (!actionable && hasChanges(plan)) {
      const s = plan.summary;
      const parts = [
        s.blocked ? `${s.blocked} blocked` : "",
        s.not_in_git ? `${s.not_in_git} not in git` : "",
        s.unsupported ? `${s.unsupported} unsupported` : "",
      ].filter(Boolean);
      out.warn(`only entries that revsync does not apply remain (${parts.join(", ")}, listed with their reasons): apply would do nothing`);
    }
    // A read that failed after its retries failed only what it fed: the plan says which; the run fails.
    if (plan.unread?.length) {
      out.error(unreadError(plan.unread));
      return 1;
    }
    return flags.detailedExitcode && actionable ? 2 : 0;
  } finally {
    await core.close();
  }
}
