import { join } from "node:path";
import { selectEnv } from "../config/repo.js";
import { inEnvironment } from "../errors.js";
import { fleetExit, planOutcome, type EnvOutcome } from "../fleet/outcome.js";
import { pickView } from "../report/view.js";
import { planExit, planFolder, savePlan } from "../session/plan.js";
import { fleetViews } from "../report/views/fleet.js";
import { planViews } from "../report/views/plan.js";
import { writeUserFile } from "../user-files.js";
import { shellQuote } from "../shell-quote.js";
import { plural } from "../words.js";
import { envOf, openClient, openEnv, openRepo } from "./context.js";
import { fleetNames, isFleet, runEnvironments, type FleetFlags } from "./fleet.js";
import type { OverrideFlags } from "./flags.js";
import { approversOf, guardrailsOf } from "./guardrails.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { makePlan } from "./reading.js";
import { noteTurnedAway } from "./rate-limit.js";
import { openPromotion } from "./promotion.js";

export interface PlanFlags extends FleetFlags, OverrideFlags {
  out?: string;
  detailedExitcode?: boolean;
}

export async function runPlan(flags: PlanFlags, out: Output): Promise<number> {
  if (isFleet(flags)) return planFleet(flags, out);
  const view = await pickView(planViews, flags.format);
  const repo = openRepo(flags);
  const name = selectEnv(repo, flags.env, envOf(flags));
  try {
    const env = openEnv(repo, flags, name);
    // Checked before anything is read: a broken rule, or an override nobody listed may give, sends nothing.
    const guardrails = guardrailsOf(repo, env, flags, approversOf(flags, env, undefined), kindsOf(out.io));
    const core = openClient(env, flags, out);
    const promotion = await openPromotion(repo, env, flags, out);
    try {
      const plan = await makePlan(repo, env, core, flags, out, { impact: true, ...(guardrails ? { guardrails } : {}), ...(promotion ? { promotion } : {}) });
      // Markdown that leaves something out names where the whole plan is: the file --out writes, if any.
      view({ plan, file: flags.out }, out);
      noteTurnedAway(core.governor, env, flags, out);
      if (flags.out) savePlan(plan, flags.out, out.io.cwd, out);
      return planExit(plan, !!flags.detailedExitcode, out);
    } finally {
      await Promise.all([core.close(), promotion?.core.close()]);
    }
  } catch (e) {
    throw inEnvironment(e, name);
  }
}

/** plan --all-envs / --envs: each environment's plan, several at once, one summary; with --out DIR each
 *  plan saved as DIR/<environment>.plan.json. Exit 1 if any failed, else (with --detailed-exitcode) 2 if
 *  any has changes apply would make, else 0. */
async function planFleet(flags: PlanFlags, out: Output): Promise<number> {
  const view = await pickView(fleetViews, flags.format);
  const repo = openRepo(flags);
  const names = fleetNames(repo, flags);
  const dir = planFolder(flags.out, names, out.io.cwd);
  const fileOf = (name: string): string => join(flags.out ?? "", `${name}.plan.json`);
  const outcomes = await runEnvironments(repo, names, flags, out, "plan", view, async ({ env, core, flags: own, out: envOut }) => {
    // As plan of one environment: its rules checked before it reads, the plan judged as it is made.
    const guardrails = guardrailsOf(repo, env, own, approversOf(own, env, undefined), kindsOf(envOut.io));
    const promotion = await openPromotion(repo, env, own, envOut);
    const plan = await makePlan(repo, env, core, own, envOut, {
      impact: true,
      ...(guardrails ? { guardrails } : {}),
      ...(promotion ? { promotion } : {}),
    }).finally(() => promotion?.core.close());
    if (dir) writeUserFile(join(dir, `${env.name}.plan.json`), JSON.stringify(plan, null, 2) + "\n");
    return planOutcome(plan);
  });
  const whole = (o: EnvOutcome): string => (dir && o.plan ? fileOf(o.plan.environment) : "this command's JSON output (--format json)");
  view.end({ outcomes, whole }, out);
  const saved = outcomes.flatMap((o) => (o.plan ? [fileOf(o.plan.environment)] : []));
  if (dir && saved.length)
    out.info(
      `Saved ${plural(saved.length, "plan")} in ${flags.out}, one per environment (<environment>.plan.json). Apply one exactly with: revsync apply ${shellQuote(saved[0] ?? "")}`,
    );
  return fleetExit(outcomes, { planChanges: !!flags.detailedExitcode });
}
