/** Making a plan, whole: read the service, check the targets, build the entries, add what the reviewer
 *  is shown besides them (who prepares each approve under four eyes, what the change does to the policy
 *  tests), and seal it once. plan, and apply without a saved plan, call it; the CLI only loads the files
 *  and shows the progress. */
import type { ApiCore } from "../api/core.js";
import type { DesiredState, LiveState, Registry } from "../kinds/kind.js";
import { KINDS } from "../kinds/registry.js";
import { readLive } from "../live/read.js";
import { ruleReader, type Contract } from "../policy-test/allocate.js";
import { allocationImpact, impact, movedByCurrency, type TestCase } from "../policy-test/run.js";
import { draftPlan, seal, withChanges, type DraftPlan, type PlanMeta } from "./build.js";
import { fourEyesOfPlan } from "./four-eyes.js";
import type { Plan, PlanImpact } from "./model.js";
import { carvesGit, carvesLive, impactNotes, liveWithGitsUnknowns, modelsFromGit, modelsFromLive } from "./policy-models.js";
import { checkTargets, targetedDesired } from "./targets.js";
import { changeFacts } from "../guardrails/facts.js";
import { judgePlan, type Judging } from "../guardrails/judge.js";
import type { GuardrailSetup } from "../guardrails/setup.js";
import { isApplied } from "./model.js";
import { promotePlan } from "../promotion/promote.js";
import type { PromotionSource } from "../promotion/source.js";

export interface PlanRequest {
  desired: DesiredState;
  meta: PlanMeta;
  concurrency: number;
  /** How many reads of how many have ended. */
  progress?: (done: number, total: number, what: string) => void;
  /** The policy tests whose impact the plan shows (none: no impact), and the tenant's rule texts. */
  tests?: { cases: TestCase[]; contracts: Contract[]; rules: Record<string, string> };
  /** four_eyes: who the approves would go as (the approver identity, where one is configured);
   *  `approverKnown` false where this run cannot say (a CI job that names no approver identity). */
  fourEyes?: { approver: string | null; approverConfigured: boolean; approverKnown?: boolean };
  /** The environment's guardrails, and the moment, approvers and overrides they are judged with. */
  guardrails?: { setup: GuardrailSetup; judging: Judging };
  /** promote_from: the source environment each write is judged against (src/promotion/). */
  promotion?: PromotionSource;
  kinds?: Registry;
}

/** Each applied change's facts, then every rule and window judged: the plan shows both. */
function judged(plan: DraftPlan, req: PlanRequest, live: LiveState, kinds: Registry): void {
  const g = req.guardrails;
  if (!g) return;
  const allocation = plan.impact && !Array.isArray(plan.impact) ? plan.impact.allocation : undefined;
  const sources = {
    environment: req.meta.environment,
    desired: req.desired,
    live,
    kinds,
    ...(req.tests?.contracts.length ? { allocation: allocation ?? [] } : {}),
  };
  for (const c of plan.changes) if (isApplied(c)) c.facts = changeFacts(c, sources);
  const { outcomes, guardrails } = judgePlan(plan.changes, g.setup, g.judging, kinds);
  plan.changes.forEach((c, i) => {
    const o = outcomes[i];
    if (o) c.guardrails = o;
  });
  plan.guardrails = guardrails;
}

/** What the plan does to the policy tests. The two sides differ only by what the plan changes: a field of
 *  git's that the service does not show is not compared (src/shared/unknown.ts), so it is taken as
 *  unchanged, git's value on both sides, and the impact says so. A targeted plan's impact is its targeted
 *  changes' impact (targetedDesired: the one filter), for the cases and the contracts alike: what is
 *  outside the targets stays as the service holds it. "No changes" means exactly that: nothing to apply
 *  moves a case or a contract. */
function planImpact(plan: DraftPlan, desired: DesiredState, live: LiveState, tests: NonNullable<PlanRequest["tests"]>, kinds: Registry): PlanImpact {
  if (!plan.changes.length) return { cases: [], allocation: [], moved: {} };
  const { live: known, fromGit } = liveWithGitsUnknowns(desired, live, kinds);
  const scoped = targetedDesired(desired, known, plan.targets, kinds);
  const before = modelsFromLive(known, kinds);
  const after = modelsFromGit(scoped, known, kinds);
  const allocation = allocationImpact(
    tests.contracts,
    { policies: before, carves: carvesLive(known, kinds) },
    { policies: after, carves: carvesGit(scoped, known, kinds) },
    ruleReader(tests.rules),
  );
  const cases = impact(tests.cases, before, after);
  const notes = impactNotes(cases, allocation, fromGit, kinds);
  return { cases, allocation, moved: Object.fromEntries(movedByCurrency(allocation)), ...(notes.length ? { notes } : {}) };
}

/** git and the service, into a sealed Plan. */
export async function makePlan(core: ApiCore, req: PlanRequest): Promise<Plan> {
  const kinds = req.kinds ?? KINDS;
  const tests = req.tests && (req.tests.cases.length || req.tests.contracts.length) ? req.tests : undefined;
  // Every entry git manages is read in detail: what the service holds below it that git does not list
  // is in the plan (not in git).
  const live = await readLive(
    core,
    req.desired,
    {
      concurrency: req.concurrency,
      targets: req.meta.targets,
      values: true,
      managedDetails: true,
      approvedValues: !!tests,
      partial: true,
      ...(req.guardrails?.setup.needsBaseline ? { baselineValues: true } : {}),
      ...(req.progress ? { progress: req.progress } : {}),
    },
    kinds,
  );
  checkTargets(req.meta.targets, req.desired, live, kinds);
  let plan = draftPlan(req.desired, live, req.meta, kinds);
  // Promotion first: a write the source does not hold is blocked, and no later view counts it as a write.
  if (req.promotion) {
    const { changes, promotion } = await promotePlan(plan.changes, req.promotion, kinds, () => req.meta.now ?? new Date());
    plan = { ...withChanges(plan, changes, kinds), promotion };
  }
  // Who prepared each approve's batch, and who the approves would go as: the plan says it above them.
  if (req.fourEyes) plan.four_eyes = fourEyesOfPlan(plan, live, { signIn: req.meta.user, ...req.fourEyes }, kinds);
  // The policy tests' impact models the whole service: a plan that could not read all of it shows none.
  if (tests && !live.unread?.length) plan.impact = planImpact(plan, req.desired, live, tests, kinds);
  else if (tests && plan.changes.length)
    plan.notes = [...plan.notes, "the plan shows no impact on the policy tests: part of the service could not be read (see what was not read)"];
  judged(plan, req, live, kinds);
  // The checksum covers everything the reviewer is shown, once it is all there.
  return seal(plan);
}
