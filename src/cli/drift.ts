import { todayUtc } from "../config/drift-ignore.js";
import { environmentNames, overridesSet, selectEnv } from "../config/repo.js";
import { errorObject, UserError } from "../errors.js";
import { buildDrift } from "../plan/drift.js";
import { applyIgnore } from "../plan/ignore.js";
import { checkTargets } from "../plan/targets.js";
import { unreadError } from "../report/unread.js";
import { pickView } from "../report/view.js";
import { driftViews, type DriftEntry } from "../report/views/drift.js";
import { andList } from "../words.js";
import { desiredState, envOf, openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";
import { noteTurnedAway } from "./rate-limit.js";

export interface DriftFlags extends GlobalFlags {
  allEnvs?: boolean;
}

/** An override names one tenant; applied to every environment, each would read that tenant and report
 *  its state as its own. So --all-envs runs only on the URLs of revsync.yaml. */
function refuseOverrides(penv: NodeJS.ProcessEnv): void {
  const set = overridesSet(penv);
  if (!set.length) return;
  const names = andList(set);
  throw new UserError(
    `${names} ${set.length === 1 ? "is" : "are"} set, and --all-envs reads every environment: ${set.length === 1 ? "it" : "they"} would point each of them at the same tenant, so nothing was read`,
    `unset ${names} to check every environment with the URLs of revsync.yaml, or check the one environment ${set.length === 1 ? "it is" : "they are"} for with --env NAME, without --all-envs`,
  );
}

export async function runDrift(flags: DriftFlags, out: Output): Promise<number> {
  const view = await pickView(driftViews, flags.format);
  const repo = openRepo(flags);
  const penv = envOf(flags);
  if (flags.allEnvs) refuseOverrides(penv);
  const names = flags.allEnvs ? environmentNames(repo) : [selectEnv(repo, flags.env, penv)];
  const entries: DriftEntry[] = [];
  let code = 0;
  for (const name of names) {
    try {
      const env = openEnv(repo, flags, name);
      const core = openClient(env, flags, out);
      try {
        const desired = desiredState(repo, env, out, flags);
        const live = await readWithProgress(core, desired, flags, out, { values: true, managedDetails: true, partial: true });
        checkTargets(flags.target ?? [], desired, live);
        // Accepted drift (drift.ignore) is listed apart and never counts; plan is not affected.
        const report = applyIgnore(
          buildDrift(desired, live, { environment: env.name, targets: flags.target ?? [] }),
          repo.config.drift?.ignore ?? [],
          todayUtc(),
        );
        entries.push(report);
        view.environment(report, out);
        noteTurnedAway(core.governor, env, flags, out);
        if (report.drift.length && code === 0) code = 2;
        // A read that failed after its retries failed only what it fed: drift says which, and fails.
        if (report.unread?.length) {
          out.error(`${flags.allEnvs ? `${name}: ` : ""}${unreadError(report.unread)}`);
          code = 1;
        }
      } finally {
        await core.close();
      }
    } catch (e) {
      if (!flags.allEnvs) throw e;
      out.error(`${name}: ${(e as Error).message}`);
      entries.push({ environment: name, ...errorObject(e) });
      code = 1;
    }
  }
  view.end({ entries, allEnvs: !!flags.allEnvs }, out);
  return code;
}
