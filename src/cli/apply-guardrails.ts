/** apply's guardrails: the plan judged again right before anything is written (time has passed since a
 *  saved plan was made: a window may have opened, an exception lapsed, an approval come), with the
 *  approvers of this run (the approver identity, signed in; in CI the pull request's approvals). A plan
 *  anything holds back is refused whole, before the prompt and the lock: nothing is sent. */
import type { ApiCore } from "../api/core.js";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import type { PullRequestApproval } from "../evidence/record.js";
import { judgePlan } from "../guardrails/judge.js";
import type { GuardrailSetup } from "../guardrails/setup.js";
import type { Plan } from "../plan/model.js";
import type { Evidence } from "./evidence.js";
import { approverConfirmed, approverSignedIn, ciOf, readPullRequestApproval } from "./four-eyes.js";
import type { GlobalFlags, OverrideFlags } from "./flags.js";
import { approversOf, nowOf, overridesOf } from "./guardrails.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";

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
  run: { flags: GlobalFlags & OverrideFlags; repo: Repo; env: ResolvedEnv; core: ApiCore; setup: GuardrailSetup; evidence?: Evidence; out: Output },
): Promise<Judged> {
  const { flags, core, setup } = run;
  const overrides = overridesOf(flags);
  // Approvals count only when a rule asks for them or an override is asked for: then they are read.
  const asks = overrides.length > 0 || setup.rules.some((r) => r.effect === "require_approval");
  const ci = asks ? ciOf(flags) : null;
  const approval = ci ? await readPullRequestApproval(flags, run.repo, ci) : undefined;
  if (asks) {
    await approverSignedIn(core);
    await approverConfirmed(core);
  }
  const judging = { now: nowOf(flags), approvers: approversOf(flags, run.env, core, approval), overrides };
  const { outcomes, guardrails } = judgePlan(plan.changes, setup, judging, kindsOf(run.out.io));
  const changes = plan.changes.map((c, i) => {
    const { guardrails: _was, ...rest } = c;
    const o = outcomes[i];
    return o ? { ...rest, guardrails: o } : rest;
  });
  run.evidence?.recorder.setGuardrails(guardrails, outcomes);
  const shown = { ...plan, changes, guardrails };
  const again = (now: number): UserError | undefined =>
    heldBackError({ ...shown, guardrails: judgePlan(plan.changes, setup, { ...judging, now }, kindsOf(run.out.io)).guardrails });
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
