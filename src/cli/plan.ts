import { join, resolve } from "node:path";
import { statSync } from "node:fs";
import { selectEnv } from "../config/repo.js";
import { inEnvironment, UserError } from "../errors.js";
import { fleetExit, planOutcome, type EnvOutcome } from "../fleet/outcome.js";
import { needsAction, type Plan } from "../plan/model.js";
import { hasApplied, hasChanges } from "../report/plan.js";
import { unreadError } from "../report/unread.js";
import { pickView } from "../report/view.js";
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
      if (flags.out) {
        writeUserFile(resolve(out.io.cwd, flags.out), JSON.stringify(plan, null, 2) + "\n");
        out.info(`Saved the plan to ${flags.out}. Apply exactly this plan with: revsync apply ${shellQuote(flags.out)}`);
      }
      return planExit(plan, flags, out);
    } finally {
      await Promise.all([core.close(), promotion?.core.close()]);
    }
  } catch (e) {
    throw inEnvironment(e, name);
  }
}

/** 2 when apply would do something, or a write is blocked until someone acts (a batch to upload again, a
 *  source environment to apply first: someone must); entries that are information alone (not in git,
 *  unsupported) keep a PR check green, with a warning naming them; the plan itself never says "No
 *  changes" then. */
function planExit(plan: Plan, flags: PlanFlags, out: Output): number {
  const actionable = hasApplied(plan);
  if (!actionable && hasChanges(plan)) {
    const s = plan.summary;
    const parts = [
      s.blocked ? `${s.blocked} blocked` : "",
      s.not_in_git ? `${s.not_in_git} not in git` : "",
      s.unsupported ? `${s.unsupported} unsupported` : "",
    ].filter(Boolean);
    const act = s.blocked ? `; a blocked write waits for someone to act, as its reason says${flags.detailedExitcode ? " (exit 2)" : ""}` : "";
    out.warn(`only entries that revsync does not apply remain (${parts.join(", ")}, listed with their reasons): apply would do nothing${act}`);
  }
  // A read that failed after its retries failed only what it fed: the plan says which; the run fails.
  if (plan.unread?.length) {
    out.error(unreadError(plan.unread));
    return 1;
  }
  return flags.detailedExitcode && plan.changes.some(needsAction) ? 2 : 0;
}

/** A saved plan is one environment's (apply applies one plan to the tenant it was made for): with several
 *  environments, --out names a folder, and each environment's plan is saved in it as <name>.plan.json.
 *  Checked before anything is read: a name that cannot be a file's, a folder that is a file. */
function planFolder(flags: PlanFlags, names: string[], cwd: string): string | undefined {
  if (flags.out === undefined) return undefined;
  const dir = resolve(cwd, flags.out);
  const bad = names.find((n) => !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(n));
  if (bad !== undefined)
    throw new UserError(
      `environment ${JSON.stringify(bad)} cannot name a plan file in ${flags.out} (letters, digits, ".", "_" and "-" only), so nothing was read`,
      `save its plan on its own: revsync plan --env ${shellQuote(bad)} --out FILE`,
    );
  let isFile = false;
  try {
    isFile = !statSync(dir).isDirectory();
  } catch {
    // Not there yet: made with the first plan.
  }
  if (isFile) throw new UserError(`--out ${flags.out} is a file: with several environments --out names a folder, which gets one plan file per environment`);
  return dir;
}

/** plan --all-envs / --envs: each environment's plan, several at once, one summary; with --out DIR each
 *  plan saved as DIR/<environment>.plan.json. Exit 1 if any failed, else (with --detailed-exitcode) 2 if
 *  any has changes apply would make, else 0. */
async function planFleet(flags: PlanFlags, out: Output): Promise<number> {
  const view = await pickView(fleetViews, flags.format);
  const repo = openRepo(flags);
  const names = fleetNames(repo, flags);
  const dir = planFolder(flags, names, out.io.cwd);
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
