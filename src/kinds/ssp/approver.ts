/** Four eyes of the SSP kind, as the plan and apply keep it before anything is sent: each approve's batch
 *  and who prepared it, as the plan sees it (docs/decisions.md, "Four eyes"); the approver identity held
 *  to being another user than the sign-in, as variables name it and then as the service's tokens do. */
import type { ApiCore } from "../../api/core.js";
import { UserError } from "../../errors.js";
import { isApplied, type Change, type FourEyesApprove, type PlanFourEyes } from "../../shared/entries.js";
import { sameUser } from "../../shared/who.js";
import type { Approvers } from "../kind.js";
import { planPreparers } from "./four-eyes.js";
import type { SspLive } from "./read.js";

/** Each approve of the plan: who prepared its batch, and whether the rule would block it as the plan sees
 *  it (null where the plan does not know who the approves go as). */
export function approvesOfPlan(changes: readonly Change[], live: SspLive, who: Approvers): FourEyesApprove[] {
  const known = who.approverConfigured || who.approverKnown !== false;
  const sentAs = who.approverConfigured ? who.approver : who.signIn;
  return changes.flatMap((c) => {
    const p = planPreparers(c, changes, live);
    if (!p) return [];
    const preparers = [
      p.reviewed_in_plan ? who.signIn : p.reviewed_by,
      p.uploaded_in_plan ? who.signIn : p.uploaded_by,
      p.created_in_plan ? who.signIn : p.policy_created_by,
    ];
    const blocked = !known ? null : !sentAs || !preparers[0] || preparers.some((u) => sameUser(sentAs, u));
    return [{ address: c.address, ...p, blocked }];
  });
}

/** The reviewer the plan saw of an approve's batch (once a batch is approved the service no longer names
 *  it, so an approve found made by someone else is held to the plan's); null where it saw none. */
export const reviewedInPlan = (f: PlanFourEyes | undefined, address: string): string | null =>
  f?.approves.find((a) => a.address === address)?.reviewed_by ?? null;

/** Before anything is sent: the approver identity is another user than revsync's sign-in (an approver
 *  that is the same user would approve what that user prepared), and under four eyes a user whose name
 *  can be told. */
export function checkApprover(changes: readonly Change[], core: ApiCore, opts: { fourEyes: boolean }): void {
  const approver = core.approverAuth;
  if (!approver) return;
  if (sameUser(approver.username, core.auth.username)) {
    throw new UserError(
      `the approver identity is ${approver.username}, the same user as revsync's own sign-in: approves would go as the user who prepared them, so nothing was sent`,
      "set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user than REVSYNC_USERNAME, or unset them",
    );
  }
  if (opts.fourEyes && !approver.username && changes.some((c) => c.action === "approve")) {
    throw new UserError(
      "four eyes: the approver's token names no user, so nobody can show that approves go as someone other than who prepared them; nothing was sent",
      "set REVSYNC_APPROVER_USER to the approver's user id in the service",
    );
  }
}

/** Once both have signed in, before anything is sent: who the approves go as and who prepares, as the
 *  tokens the service issued name them (every name: preferred_username, sub, email), not as variables
 *  say. An approver the service's token names as revsync's own sign-in (say REVSYNC_APPROVER_USERNAME
 *  alice@example.com, which signs in as alice) is refused; under four eyes, so is an approver whose
 *  token names nobody: who approves cannot be told (docs/security.md, "Who the service says you are"). */
export function checkSignedIn(changes: readonly Change[], core: ApiCore, opts: { fourEyes: boolean }): void {
  const approves = changes.some((c) => c.action === "approve" && isApplied(c));
  if (!approves) return;
  const as = core.approverAuth ?? core.auth;
  if (opts.fourEyes && !as.identity) {
    throw new UserError(
      `four eyes: the token the service issued to ${core.approverAuth ? "the approver identity" : "revsync's sign-in, which sends the approves,"} names no user (no preferred_username or sub claim), so who approves cannot be told${as.username ? ` (${as.username} is what a variable says, not the service)` : ""}; nothing was sent`,
      "give the approver identity credentials whose token names its user: REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD",
    );
  }
  const approver = core.approverAuth?.identity;
  const own = core.auth.identity;
  const shared = approver && own ? approver.find((n) => own.some((m) => sameUser(n, m))) : undefined;
  if (core.approverAuth && shared) {
    throw new UserError(
      `the approver identity signs in as ${shared}, the same user as revsync's own sign-in (as the service's tokens name them): approves would go as the user who prepared them, so nothing was sent`,
      "set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user than REVSYNC_USERNAME, or unset them",
    );
  }
}
