import type { ApiCore } from "../api/core.js";
import type { DesiredState, Repo, ResolvedEnv } from "../config/repo.js";
import { readLive, type LiveState } from "../live/read.js";
import { buildPlan } from "../plan/build.js";
import { checkTargets } from "../plan/targets.js";
import type { Plan } from "../plan/model.js";
import { concurrencyOf, desiredState } from "./context.js";
import type { GlobalFlags } from "./main.js";
import type { Output } from "./output.js";
import { startProgress } from "./progress.js";

/** Live reads with progress on a terminal (plan, apply, drift, export share it). */
export async function readWithProgress(
  core: ApiCore,
  desired: DesiredState,
  flags: GlobalFlags,
  out: Output,
  extra: { values?: boolean; allDetails?: boolean; managedDetails?: boolean },
): Promise<LiveState> {
  const progress = await startProgress(out, "Reading the service…", flags.quiet);
  try {
    return await readLive(core, desired, {
      concurrency: concurrencyOf(flags),
      targets: flags.target ?? [],
      ...extra,
      progress: (done, total, what) => progress.update(`Reading the service: ${done}/${total} (${what})`),
    });
  } finally {
    progress.stop();
  }
}

/** git and the service, into a Plan (plan, and apply without a saved plan). */
export async function makePlan(repo: Repo, env: ResolvedEnv, core: ApiCore, flags: GlobalFlags, out: Output): Promise<Plan> {
  const desired = desiredState(repo, env, out, flags);
  const live = await readWithProgress(core, desired, flags, out, { values: true });
  checkTargets(flags.target ?? [], desired, live);
  return buildPlan(desired, live, {
    environment: env.name,
    baseUrl: env.baseUrl,
    authUrl: env.authUrl,
    realm: env.realm,
    user: core.auth.username ?? null,
    targets: flags.target ?? [],
  });
}
