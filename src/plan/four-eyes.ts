/** A plan's four-eyes view (four_eyes: true): who prepared each approve's batch, as the kind whose batch
 *  it is says (docs/decisions.md, "Four eyes"), and who the approves would be sent as. */
import { liveOf, type LiveState, type Registry } from "../kinds/kind.js";
import { KINDS, kindOf } from "../kinds/registry.js";
import { sameUser } from "../shared/who.js";
import type { FourEyesApprove, Plan, PlanFourEyes } from "./model.js";

export { APPROVER_FIX } from "../api/auth.js";

/** The four-eyes view of a plan: who each approve's batch was prepared by, who the approves would be sent
 *  as (the approver identity, else the sign-in), and which approves the rule would block at apply as
 *  things stand. Pure: the caller gives the sign-in and the approver identity's user. */
export function fourEyesOfPlan(
  plan: Pick<Plan, "changes">,
  live: LiveState,
  who: { signIn: string | null; approver: string | null; approverConfigured: boolean },
  kinds: Registry = KINDS,
): PlanFourEyes {
  const sentAs = who.approverConfigured ? who.approver : who.signIn;
  const approves: FourEyesApprove[] = [];
  for (const c of plan.changes) {
    if (c.action !== "approve") continue;
    const kind = kindOf(kinds, c.address);
    const p = kind?.preparers?.(c, plan.changes, liveOf(kind, live));
    if (!p) continue;
    const reviewer = p.reviewed_in_plan ? who.signIn : p.reviewed_by;
    const creator = p.created_in_plan ? who.signIn : p.policy_created_by;
    const blocked = !sentAs || !reviewer || sameUser(sentAs, reviewer) || sameUser(sentAs, creator);
    approves.push({ address: c.address, ...p, blocked });
  }
  return { sign_in: who.signIn, approver: who.approverConfigured ? who.approver : null, approver_configured: who.approverConfigured, approves };
}
