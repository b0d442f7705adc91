/** Who approves, as guardrails count them: the approver identity apply signs in as (or, for a plan, the
 *  one its job names), and in CI the pull request's independent approvals. Which of them a rule's list
 *  names is decided in one function, listedIn, so that the identity may come from elsewhere (a token's
 *  verified claims) without touching the rules. */
import { sameUser } from "../shared/who.js";

export interface Approver {
  user: string;
  via: "approver identity" | "pull request approval";
}

/** The approvers a list of identities names (each user once), compared as four eyes compares users. */
export function listedIn(approvers: readonly Approver[], list: readonly string[]): Approver[] {
  const out: Approver[] = [];
  for (const a of approvers) if (list.some((u) => sameUser(u, a.user)) && !out.some((o) => sameUser(o.user, a.user))) out.push(a);
  return out;
}

/** The approvers, in words: "bob (the approver identity), carol (pull request approval)". */
export const approverWords = (approvers: readonly Approver[]): string =>
  approvers.map((a) => `${a.user} (${a.via === "approver identity" ? "the approver identity" : "a pull request approval"})`).join(", ");
