import type { ApiCore } from "../api/core.js";
import type { DesiredState, Repo, ResolvedEnv } from "../config/repo.js";
import { readLive, type LiveState } from "../live/read.js";
import { buildPlan } from "../plan/build.js";
import { checkTargets, targetedDesired } from "../plan/targets.js";
import { planChecksum, type Plan } from "../plan/model.js";
import { varsFor } from "../config/repo.js";
import { loadTests } from "../config/test-files.js";
import { carvesGit, carvesLive, liveWithGitsUnknowns, modelsFromGit, modelsFromLive } from "../plan/policy-models.js";
import { allocationImpact, impact, movedByCurrency } from "../policy-test/run.js";
import { impactNotes } from "../plan/policy-models.js";
import { fourEyesOfPlan } from "../plan/four-eyes.js";
import { approverNamed } from "../api/auth.js";
import { hasChanges } from "../report/plan.js";
import { ruleReader } from "../policy-test/allocate.js";
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
  const tests = opts.impact ? loadTests(repo, varsFor(env, envOf(flags))) : undefined;
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
  if (env.fourEyes) {
    // Who prepared each approve's batch, and who the approves would go as: the plan says it above them.
    // apply holds the approver's sign-in; plan only its name (a plan job need not hold its secret).
    const named = core.approverAuth ? { configured: true, user: core.approverAuth.username ?? null } : approverNamed(envOf(flags));
    plan.four_eyes = fourEyesOfPlan(plan, live, { signIn: core.auth.username ?? null, approver: named.user, approverConfigured: named.configured });
    plan.checksum = planChecksum(plan);
  }
  if (cases.length || contracts.length) {
    // "No changes" means exactly that: nothing to apply moves a case or a contract.
    if (!hasChanges(plan)) {
      plan.impact = { cases: [], allocation: [], moved: {} };
      plan.checksum = planChecksum(plan);
      return plan;
    }
    // The two sides differ only by what the plan changes: a field of git's policy that the service does
    // not show is not compared (src/shared/unknown.ts), so it is taken as unchanged, git's value on both
    // sides, and the impact says so.
    const { live: known, fromGit } = liveWithGitsUnknowns(desired, live);
    // A targeted plan's impact is its targeted changes' impact (targetedDesired: the one filter), for the
    // cases and the contracts alike: a policy or tenant configuration outside the targets stays as the
    // service holds it.
    const scoped = targetedDesired(desired, known, flags.target ?? []);
    const before = modelsFromLive(known);
    const after = modelsFromGit(scoped, known);
    const allocation = allocationImpact(
      contracts,
      { policies: before, carves: carvesLive(known) },
      { policies: after, carves: carvesGit(scoped, known) },
      ruleReader(env.service.allocationRules),
    );
    const caseImpact = impact(cases, before, after);
    const notes = impactNotes(caseImpact, allocation, fromGit);
    plan.impact = { cases: caseImpact, allocation, moved: Object.fromEntries(movedByCurrency(allocation)), ...(notes.length ? { notes } : {}) };
    // The checksum covers everything the reviewer is shown, the impact too.
    plan.checksum = planChecksum(plan);
  }
  return plan;
}
