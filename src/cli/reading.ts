import type { ApiCore } from "../api/core.js";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { varsFor } from "../config/repo.js";
import { loadTests } from "../config/test-files.js";
import type { DesiredState } from "../kinds/kind.js";
import { readLive, type LiveState, type ReadOptions } from "../live/read.js";
import { makePlan as composePlan } from "../plan/make.js";
import type { Plan } from "../plan/model.js";
import type { Judging } from "../guardrails/judge.js";
import type { GuardrailSetup } from "../guardrails/setup.js";
import type { PromotionSource } from "../promotion/source.js";
import { approverNamedFor, concurrencyOf, desiredState, envOf } from "./context.js";
import { ciOf } from "./four-eyes.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { startProgress } from "./progress.js";
import { waitingNote } from "./rate-limit.js";

/** The progress line of the reads, on a terminal, for as long as `work` reads (plan, apply, drift, export
 *  and test share it). */
async function withProgress<T>(
  core: ApiCore,
  flags: GlobalFlags,
  out: Output,
  work: (progress: (done: number, total: number, what: string) => void) => Promise<T>,
): Promise<T> {
  const to = flags.progressTo;
  if (to) return work((done, total) => to(`${done}/${total}${waitingNote(core.governor)}`));
  const progress = await startProgress(out, "Reading the service…", flags.quiet, core.governor);
  try {
    return await work((done, total, what) => progress.update(`Reading the service: ${done}/${total} (${what})`));
  } finally {
    progress.stop();
  }
}

/** Live reads with progress on a terminal (drift, export and test). */
export function readWithProgress(
  core: ApiCore,
  desired: DesiredState,
  flags: GlobalFlags,
  out: Output,
  extra: Omit<ReadOptions, "concurrency" | "targets">,
): Promise<LiveState> {
  return withProgress(core, flags, out, (progress) =>
    readLive(core, desired, { concurrency: concurrencyOf(flags), targets: flags.target ?? [], ...extra, progress }, kindsOf(out.io)),
  );
}

/** git and the service, into a Plan (plan, and apply without a saved plan: src/plan/make.ts makes it).
 *  With `impact` (plan), the policy tests are loaded and the plan says what the change does to them;
 *  apply does not print it, so it reads nothing for it. `applies`: the run that makes the plan applies it
 *  (its approves go as its own approver identity, or its sign-in). */
export async function makePlan(
  repo: Repo,
  env: ResolvedEnv,
  core: ApiCore,
  flags: GlobalFlags,
  out: Output,
  opts: { impact: boolean; applies?: boolean; guardrails?: { setup: GuardrailSetup; judging: Judging }; promotion?: PromotionSource },
): Promise<Plan> {
  // With promote_from, git's state as this environment reads it was read as the source was opened, in
  // this run: the plan is made from those same documents (the promotion check compares with them).
  const desired = opts.promotion?.here ?? desiredState(repo, env, out, flags);
  // A rule that reads the contracts' allocation shift needs the tests, whether or not the impact is shown.
  const tests = opts.impact || opts.guardrails?.setup.needsTests ? loadTests(repo, varsFor(env, envOf(flags))) : undefined;
  const broken = tests?.diagnostics.some((d) => d.severity === "error") ?? false;
  if (tests && broken) out.warn(`the policy tests in ${tests.dir} have errors (revsync validate lists them): the plan shows no impact`);
  // apply holds the approver's sign-in; plan only its name (a plan job need not hold its secret). A CI
  // job that names none cannot say who the apply job's approves go as: the plan says so, never that
  // apply would block them.
  const named = core.approverAuth ? { configured: true, user: core.approverAuth.username ?? null } : approverNamedFor(env, flags);
  const approverKnown = named.configured || !!opts.applies || !ciOf(flags);
  const meta = {
    environment: env.name,
    baseUrl: env.baseUrl,
    authUrl: env.authUrl,
    realm: env.realm,
    user: core.auth.username ?? null,
    targets: flags.target ?? [],
  };
  return withProgress(core, flags, out, (progress) =>
    composePlan(core, {
      desired,
      meta,
      concurrency: concurrencyOf(flags),
      progress,
      kinds: kindsOf(out.io),
      ...(tests && !broken ? { tests: { cases: tests.cases, contracts: tests.contracts, rules: env.service.allocationRules } } : {}),
      ...(env.fourEyes ? { fourEyes: { approver: named.user, approverConfigured: named.configured, approverKnown } } : {}),
      ...(opts.guardrails ? { guardrails: opts.guardrails } : {}),
      ...(opts.promotion ? { promotion: opts.promotion } : {}),
    }),
  );
}
