/** One environment's drift report made whole, as make.ts makes a plan: the service read for git's state,
 *  the targets checked, the drift built, and accepted drift (revsync.yaml's drift.ignore) listed apart (it
 *  never counts; plan is not affected). drift calls it, for one environment and for each of a fleet. */
import { todayUtc } from "../config/drift-ignore.js";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import type { DesiredState, Registry } from "../kinds/kind.js";
import type { LiveState, ReadOptions } from "../live/read.js";
import { buildDrift } from "./drift.js";
import { applyIgnore } from "./ignore.js";
import type { DriftReport } from "./model.js";
import { checkTargets } from "./targets.js";

/** What a drift report is made of: git's state, how the command reads the service (its progress line),
 *  the targets and the run's kinds. */
export interface DriftAsked {
  desired: DesiredState;
  read: (desired: DesiredState, options: Omit<ReadOptions, "concurrency" | "targets">) => Promise<LiveState>;
  targets: string[];
  kinds: Registry;
}

export async function makeDrift(repo: Repo, env: ResolvedEnv, { desired, read, targets, kinds }: DriftAsked): Promise<DriftReport> {
  const live = await read(desired, { values: true, managedDetails: true, partial: true });
  checkTargets(targets, desired, live, kinds);
  return applyIgnore(buildDrift(desired, live, { environment: env.name, targets }, kinds), repo.config.drift?.ignore ?? [], todayUtc());
}
