import type { ApiCore } from "../api/core.js";
import type { DesiredState, Repo, ResolvedEnv } from "../config/repo.js";
import { readLive, type LiveState } from "../live/read.js";
import { buildPlan } from "../plan/build.js";
import { checkTargets } from "../plan/targets.js";
import type { Plan } from "../plan/model.js";
import { varsFor } from "../config/repo.js";
import { loadTests } from "../config/test-files.js";
import { carvesGit, carvesLive, modelsFromGit, modelsFromLive } from "../plan/policy-models.js";
import { allocationImpact, impact, movedByCurrency } from "../policy-test/run.js";
import { ruleReader } from "../policy-test/allocate.js";
import type { PolicyModel } from "../policy-test/evaluate.js";
import { address, touchedBy } from "../shared/address.js";
import { concurrencyOf, desiredState, envOf } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { startProgress } from "./progress.js";

/** Live reads with progress on a terminal (plan, apply, drift, export share it). */
export async function readWithProgress(
  core: ApiCore,
  desired: DesiredState,
  flags: GlobalFlags,
  out: Output,
  extra: { values?: boolean; allDetails?: boolean; managedDetails?: boolean; approvedValues?: boolean; allValues?: boolean },
): Promise<LiveState> {
  const progress = await startProgress(out, "Reading the service…", flags.quiet, core.governor);
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

/** git and the service, into a Plan (plan, and apply without a saved plan). With `impact` (plan), the
 *  policy tests are loaded and the plan says which cases the change re-routes; apply does not print it,
 *  so it reads nothing for it. */
export async function makePlan(repo: Repo, env: ResolvedEnv, core: ApiCore, flags: GlobalFlags, out: Output, opts: { impact: boolean }): Promise<Plan> {
  const desired = desiredState(repo, env, out, flags);
  const tests = opts.impact ? loadTests(repo, varsFor(env.vars, envOf(flags))) : undefined;
  const testProblems = tests?.diagnostics.filter((d) => d.severity === "error") ?? [];
  if (tests && testProblems.length) out.warn(`the policy tests in ${tests.dir} have errors (revsync validate lists them): the plan shows no impact`);
  const cases = testProblems.length ? [] : (tests?.cases ?? []);
  const contracts = testProblems.length ? [] : (tests?.contracts ?? []);
  // Every policy git manages is read in detail: a live batch git does not list is in the plan (not in git).
  const live = await readWithProgress(core, desired, flags, out, {
    values: true,
    managedDetails: true,
    approvedValues: cases.length > 0 || contracts.length > 0,
  });
  checkTargets(flags.target ?? [], desired, live);
  const plan = buildPlan(desired, live, {
    environment: env.name,
    baseUrl: env.baseUrl,
    authUrl: env.authUrl,
    realm: env.realm,
    user: core.auth.username ?? null,
    targets: flags.target ?? [],
  });
  if (cases.length || contracts.length) {
    const before = modelsFromLive(live);
    const after = modelsFromGit(desired, live);
    const allocation = allocationImpact(
      contracts,
      { policies: before, carves: carvesLive(live) },
      allocationSide(desired, live, before, after, flags.target ?? []),
      ruleReader(env.service.allocationRules),
    );
    plan.impact = { cases: impact(cases, before, after), allocation, moved: Object.fromEntries(movedByCurrency(allocation)) };
  }
  return plan;
}

/** The side "after apply" of the allocation impact. With --target, a contract's lines are affected by a
 *  policy (or the tenant configuration's carves_allocation) only if it is targeted: the others stay as
 *  the service holds them, and a policy new in git that is not targeted is not there yet. */
function allocationSide(
  desired: DesiredState,
  live: LiveState,
  before: PolicyModel[],
  after: PolicyModel[],
  targets: string[],
): { policies: PolicyModel[]; carves: boolean } {
  const policies = targets.length ? after.flatMap((m) => (touchedBy(address.ssp(m.name), targets) ? [m] : before.filter((b) => b.name === m.name))) : after;
  return { policies, carves: carvesGit(desired, live, (name) => touchedBy(address.tenant(name), targets)) };
}
