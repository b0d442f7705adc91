/** apply's guardrails: the plan judged again right before anything is written (time has passed since a
 *  saved plan was made: a window may have opened, an exception lapsed, an approval come), with the
 *  approvers of this run (the approver identity, signed in; in CI the pull request's approvals). A plan
 *  anything holds back is refused whole, before the prompt and the lock: nothing is sent. */
import type { ApiCore } from "../api/core.js";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import type { CiContext, PullRequestApproval } from "../evidence/record.js";
import type { Approver } from "../guardrails/identity.js";
import { judgePlan, type Override } from "../guardrails/judge.js";
import type { Registry } from "../kinds/kind.js";
import type { GuardrailSetup } from "../guardrails/setup.js";
import type { Plan } from "../plan/model.js";
import type { Evidence } from "./evidence.js";
import { approverConfirmed, approverSignedIn, readPullRequestApproval } from "./four-eyes.js";

interface Judged {
  /** The plan as apply shows it: each change with the outcomes of now, the guardrails of now. */
  shown: Plan;
  /** The pull request's approval, when it was read for the guardrails (four eyes reads it once). */
  approval?: PullRequestApproval;
  /** The same plan, approvers and overrides judged at another moment: the refusal, or undefined. */
  again: (now: number) => UserError | undefined;
}

/** Judges the plan now; refuses it (UserError, nothing sent) while anything holds it back. */
export async function guardrailsBeforeWriting(
  plan: Plan,
  run: {
    repo: Repo;
    env: ResolvedEnv;
    core: ApiCore;
    setup: GuardrailSetup;
    evidence?: Evidence;
    /** The run's moment, the overrides it asks for, the run's environment variables and kinds. */
    now: number;
    overrides: Override[];
    penv: NodeJS.ProcessEnv;
    kinds: Registry;
    /** The CI run this apply is part of (read when asked), or null. */
    ci: () => CiContext | null;
    /** Who approves in this run, once the pull request's approval was read (approversOf). */
    approvers: (approval?: PullRequestApproval) => Approver[];
  },
): Promise<Judged> {
  const { core, setup, overrides } = run;
  // Approvals count only when a rule asks for them or an override is asked for: then they are read.
  const asks = overrides.length > 0 || setup.rules.some((r) => r.effect === "require_approval");
  const ci = asks ? run.ci() : null;
  const approval = ci ? await readPullRequestApproval(run.penv, run.repo, ci) : undefined;
  if (asks) {
    await approverSignedIn(core);
    await approverConfirmed(core);
  }
  const judging = { now: run.now, approvers: run.approvers(approval), overrides };
  const { outcomes, guardrails } = judgePlan(plan.changes, setup, judging, run.kinds);
  const changes = plan.changes.map((c, i) => {
    const { guardrails: _was, ...rest } = c;
    const o = outcomes[i];
    return o ? { ...rest, guardrails: o } : rest;
  });
  run.evidence?.recorder.setGuardrails(guardrails, outcomes);
  const shown = { ...plan, changes, guardrails };
  const again = (now: number): UserError | undefined =>
    heldBackError({ ...shown, guardrails: judgePlan(plan.changes, setup, { ...judging, now }, run.kinds).guardrails });
  return { shown, again, ...(approval ? { approval } : {}) };
}

/** The refusal of a plan the guardrails hold back, in words. */
export function heldBackError(plan: Plan): UserError | undefined {
  const held = plan.guardrails?.held_back ?? [];
  if (!held.length) return undefined;
  return new UserError(
    `the guardrails of revsync.yaml hold this plan back, so nothing was sent:\n  ${held.join("\n  ")}`,
    "wait for the window to end, get the approvals a rule asks for, or (where a rule or window has override_by) apply --override NAME --reason TEXT as one of them",
  );
}
