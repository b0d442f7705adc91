/** A plan's four-eyes view (four_eyes: true): who the approves would be sent as, and each approve as the
 *  kind whose write it is says (docs/decisions.md, "Four eyes"). */
import { liveOf, owns, type Approvers, type LiveState, type Registry } from "../kinds/kind.js";
import { KINDS } from "../kinds/registry.js";
import { sameUser } from "../shared/who.js";
import type { Plan, PlanFourEyes } from "./model.js";

/** The four-eyes view of a plan: who the approves would be sent as (the approver identity, else the
 *  sign-in), and each approve as its kind sees it (who prepared it, and whether the rule would block it
 *  at apply as things stand). `approverKnown` false (a CI job that names no approver identity: the apply
 *  job's decides, not the sign-in of this one): who the approves go as is not known here, and neither is
 *  whether the rule blocks one. Pure: the caller gives the sign-in and the approver identity's user. */
export function fourEyesOfPlan(plan: Pick<Plan, "changes">, live: LiveState, who: Approvers, kinds: Registry = KINDS): PlanFourEyes {
  const known = who.approverConfigured || who.approverKnown !== false;
  const approves = kinds.flatMap(
    (k) =>
      k.fourEyes?.(
        plan.changes.filter((c) => owns(k, c.address)),
        liveOf(k, live),
        who,
      ) ?? [],
  );
  return {
    sign_in: who.signIn,
    approver: who.approverConfigured ? who.approver : null,
    approver_configured: who.approverConfigured,
    ...(known ? {} : { approver_known: false }),
    approves,
  };
}

/** Who a plan says its approves go as: the approver identity it was made with, else the sign-in; null
 *  where the job that made it did not know (approver_known false). Undefined for a plan without four
 *  eyes. */
export function planApprover(plan: Pick<Plan, "four_eyes">): string | null | undefined {
  const f = plan.four_eyes;
  if (!f) return undefined;
  if (f.approver_configured) return f.approver;
  return f.approver_known === false ? null : f.sign_in;
}

/** What apply says when it approves as another user than the plan was made with (or than a plan that did
 *  not know): the reviewer read the plan with one approver in mind. The rule itself holds whoever
 *  approves: it is checked right before each approve. Undefined when they are the same, or the plan
 *  approves nothing. */
export function approverSincePlan(plan: Pick<Plan, "four_eyes">, approver: string | null): string | undefined {
  const was = planApprover(plan);
  if (was === undefined || !plan.four_eyes?.approves.length || sameUser(was, approver)) return undefined;
  const now = approver ?? "a user its token does not name";
  const said = was === null ? "the plan was made by a job that did not know the approver identity" : `the plan was made with approves going as ${was}`;
  return `four eyes: ${said}, and this apply approves as ${now}; the rule holds for ${now} all the same (no batch is approved by its reviewer, its uploader or its policy's creator, checked right before each approve)`;
}
