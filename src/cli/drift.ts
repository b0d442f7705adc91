import { selectEnv, type Repo, type ResolvedEnv } from "../config/repo.js";
import { inEnvironment } from "../errors.js";
import { driftOutcome, fleetExit } from "../fleet/outcome.js";
import type { DriftReport } from "../plan/model.js";
import { makeDrift } from "../plan/make-drift.js";
import { unreadError } from "../report/unread.js";
import { pickView } from "../report/view.js";
import { driftViews } from "../report/views/drift.js";
import { fleetViews } from "../report/views/fleet.js";
import type { ApiCore } from "../api/core.js";
import { desiredState, envOf, openClient, openEnv, openRepo } from "./context.js";
import { fleetNames, isFleet, runEnvironments, type FleetFlags } from "./fleet.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";
import { noteTurnedAway } from "./rate-limit.js";

export type DriftFlags = FleetFlags;

/** One environment's drift (src/plan/make-drift.ts), read with the command's progress line. */
const driftReport = (repo: Repo, env: ResolvedEnv, core: ApiCore, flags: GlobalFlags, out: Output): Promise<DriftReport> =>
  makeDrift(repo, env, {
    desired: desiredState(repo, env, out, flags),
    read: (desired, options) => readWithProgress(core, desired, flags, out, options),
    targets: flags.target ?? [],
    kinds: kindsOf(out.io),
  });

export async function runDrift(flags: DriftFlags, out: Output): Promise<number> {
  if (isFleet(flags)) return driftFleet(flags, out);
  const view = await pickView(driftViews, flags.format);
  const repo = openRepo(flags);
  const name = selectEnv(repo, flags.env, envOf(flags));
  try {
    const env = openEnv(repo, flags, name);
    const core = openClient(env, flags, out);
    try {
      const report = await driftReport(repo, env, core, flags, out);
      view(report, out);
      noteTurnedAway(core.governor, env, flags, out);
      // A read that failed after its retries failed only what it fed: drift says which, and fails.
      if (report.unread?.length) {
        out.error(unreadError(report.unread));
        return 1;
      }
      return report.drift.length ? 2 : 0;
    } finally {
      await core.close();
    }
  } catch (e) {
    throw inEnvironment(e, name);
  }
}

/** drift --all-envs / --envs: every environment's drift, several at once, one summary; exit 1 if any
 *  failed, else 2 if any drifted, else 0. */
async function driftFleet(flags: DriftFlags, out: Output): Promise<number> {
  const view = await pickView(fleetViews, flags.format);
  const repo = openRepo(flags);
  const names = fleetNames(repo, flags);
  const outcomes = await runEnvironments(repo, names, flags, out, "drift", view, async ({ env, core, flags: own, out: envOut }) =>
    driftOutcome(await driftReport(repo, env, core, own, envOut)),
  );
  view.end({ outcomes, whole: () => "this command's JSON output (--format json)" }, out);
  return fleetExit(outcomes, { planChanges: false });
}
