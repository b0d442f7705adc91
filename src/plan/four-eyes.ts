/** A plan's four-eyes view (four_eyes: true): who prepared each approve's batch, as the kind whose batch
 *  it is says (docs/decisions.md, "Four eyes"), and who the approves would be sent as. */
import { liveOf, type LiveState, type Registry } from "../kinds/kind.js";
import { KINDS, kindOf } from "../kinds/registry.js";
import { sameUser } from "../shared/who.js";
import type { FourEyesApprove, Plan, PlanFourEyes } from "./model.js";

export { APPROVER_FIX } from "../api/auth.js";

/** The four-eyes view of a plan: who each approve's batch was prepared by, who the approves would be sent
 *  as (the approver identity, else the sign-in), and which approves the rule would block at apply as
 *  things stand. `approverKnown` false (a CI job that names no approver identity: the apply job's decides,
 *  not the sign-in of this one): who the approves go as is not known here, and neither is whether the
 *  rule blocks one. Pure: the caller gives the sign-in and the approver identity's user. */
export function fourEyesOfPlan(
  plan: Pick<Plan, "changes">,
  live: LiveState,
  who: { signIn: string | null; approver: string | null; approverConfigured: boolean; approverKnown?: boolean },
  kinds: Registry = KINDS,
): PlanFourEyes {
  const known = who.approverConfigured || who.approverKnown !== false;
  const sentAs = who.approverConfigured ? who.approver : who.signIn;
  const approves: FourEyesApprove[] = [];
  for (const c of plan.changes) {
    if (c.action !== "approve") continue;
    const kind = kindOf(kinds, c.address);
    const p = kind?.preparers?.(c, plan.changes, liveOf(kind, live));
    if (!p) continue;
    const preparers = [
      p.reviewed_in_plan ? who.signIn : p.reviewed_by,
      p.uploaded_in_plan ? who.signIn : p.uploaded_by,
      p.created_in_plan ? who.signIn : p.policy_created_by,
    ];
    const blocked = !known ? null : !sentAs || !preparers[0] || preparers.some((u) => sameUser(sentAs, u));
    approves.push({ address: c.address, ...p, blocked });
  }
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
