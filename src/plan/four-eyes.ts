import type { LiveState } from "../live/read.js";
import { batchNameOf } from "../shared/address.js";
import { sameUser } from "../shared/who.js";
import type { FourEyesApprove, Plan, PlanFourEyes } from "./model.js";

/** The variables that give apply its approver identity, in words for a fix. */
export const APPROVER_FIX = "set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user";

/** Who prepared a batch an approve moves forward, as the plan sees it (docs/decisions.md, "Four eyes"):
 *  its reviewer is the service's updated_by of a batch it shows reviewed (nothing else changes a
 *  reviewed batch), or this plan's own review (made as the sign-in); its policy's creator is the
 *  envelope's created_by, or this plan's own create. */
function preparers(plan: Pick<Plan, "changes">, live: LiveState, address: string, policy: string, batch: string): Omit<FourEyesApprove, "address" | "blocked"> {
  const inPlan = (action: string, addr: string): boolean => plan.changes.some((c) => c.action === action && c.address === addr);
  const lp = live.ssp.get(policy);
  const lb = lp?.batches?.find((b) => batchNameOf(b) === batch);
  const reviewedInPlan = inPlan("review", address);
  const createdInPlan = inPlan("create", `ssp/${policy}`);
  return {
    reviewed_by: reviewedInPlan ? null : lb?.status === "reviewed" && typeof lb.updated_by === "string" && lb.updated_by ? lb.updated_by : null,
    reviewed_in_plan: reviewedInPlan,
    policy_created_by: createdInPlan ? null : typeof lp?.envelope.created_by === "string" && lp.envelope.created_by ? lp.envelope.created_by : null,
    created_in_plan: createdInPlan,
  };
}

/** The four-eyes view of a plan (four_eyes: true): who each approve's batch was prepared by, who the
 *  approves would be sent as (the approver identity, else the sign-in), and which approves the rule would
 *  block at apply as things stand. Pure: the caller gives the sign-in and the approver identity's user. */
export function fourEyesOfPlan(
  plan: Pick<Plan, "changes">,
  live: LiveState,
  who: { signIn: string | null; approver: string | null; approverConfigured: boolean },
): PlanFourEyes {
  const sentAs = who.approverConfigured ? who.approver : who.signIn;
  const approves: FourEyesApprove[] = [];
  for (const c of plan.changes) {
    if (c.action !== "approve" || c.payload?.kind !== "batch") continue;
    const p = preparers(plan, live, c.address, c.payload.policy, c.payload.batch);
    const reviewer = p.reviewed_in_plan ? who.signIn : p.reviewed_by;
    const creator = p.created_in_plan ? who.signIn : p.policy_created_by;
    const blocked = !sentAs || !reviewer || sameUser(sentAs, reviewer) || sameUser(sentAs, creator);
    approves.push({ address: c.address, ...p, blocked });
  }
  return { sign_in: who.signIn, approver: who.approverConfigured ? who.approver : null, approver_configured: who.approverConfigured, approves };
}
