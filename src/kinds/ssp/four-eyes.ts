/** Four eyes for SSP batches (docs/decisions.md, "Four eyes"): who prepared the batch an approve moves
 *  forward, as the plan sees it and as apply finds it right before the send, and the words of an approve
 *  the rule holds back or the service refuses. */
import { APPROVER_FIX } from "../../api/auth.js";
import type { ApiError } from "../../errors.js";
import type { SspEnvelope, SspItem } from "../../schema/generated/api.js";
import type { Change, FourEyesFacts } from "../../shared/entries.js";
import { batchNameOf } from "../../shared/address.js";
import { sameUser } from "../../shared/who.js";
import type { Preparers } from "../kind.js";
import { batchPayload } from "./payload.js";
import { sspAddress, type SspLive } from "./read.js";

const named = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);

/** Who prepared the batch of an approve, as the plan sees it: its reviewer is the service's updated_by of
 *  a batch it shows reviewed (nothing else changes a reviewed batch), or this plan's own review (made as
 *  the sign-in); its policy's creator is the envelope's created_by, or this plan's own create. */
export function planPreparers(c: Change, changes: readonly Change[], live: SspLive): Preparers | undefined {
  const p = batchPayload(c);
  if (c.action !== "approve" || !p) return undefined;
  const inPlan = (action: string, addr: string): boolean => changes.some((x) => x.action === action && x.address === addr);
  const lp = live.ssp.get(p.policy);
  const lb = lp?.batches?.find((b) => batchNameOf(b) === p.batch);
  const reviewedInPlan = inPlan("review", c.address);
  const createdInPlan = inPlan("create", sspAddress.policy(p.policy));
  return {
    reviewed_by: reviewedInPlan ? null : lb?.status === "reviewed" && typeof lb.updated_by === "string" && lb.updated_by ? lb.updated_by : null,
    reviewed_in_plan: reviewedInPlan,
    policy_created_by: createdInPlan ? null : typeof lp?.envelope.created_by === "string" && lp.envelope.created_by ? lp.envelope.created_by : null,
    created_in_plan: createdInPlan,
  };
}

/** Who prepared the batch an approve moves forward, as apply finds it right before the send: the
 *  service's reviewer (or this run's sign-in, when this run reviewed it) and the policy's creator (or this
 *  run's sign-in, when this run created it). */
export function runPreparers(
  env: SspEnvelope,
  lb: SspItem,
  run: { user: string; reviewedHere: boolean; createdHere: boolean },
): Omit<FourEyesFacts, "approved_by"> {
  const reviewed = lb.status === "reviewed" ? named(lb.updated_by) : null;
  return {
    reviewed_by: run.reviewedHere ? run.user || reviewed : reviewed,
    policy_created_by: run.createdHere ? run.user || named(env.created_by) : named(env.created_by),
  };
}

/** The fix of an approve that would go (or went) as its preparer: an approver identity, or another one. */
const approverFix = (as: string, approverConfigured: boolean): string =>
  approverConfigured ? APPROVER_FIX.replace("to another user", `to a user other than ${as}`) : APPROVER_FIX;

/** Why four eyes forbids an approve that would go as `facts.approved_by`, in words that start "blocked:
 *  four eyes:" and give the fix; undefined when it may go. Who cannot be named cannot be shown to be
 *  another person: an approve whose reviewer or approver is unknown is blocked too. */
export function fourEyesBreach(facts: FourEyesFacts, approverConfigured: boolean): string | undefined {
  const as = facts.approved_by;
  const why = !as
    ? `the approve would go as a user its token does not name, so nobody can show it is not its preparer`
    : !facts.reviewed_by
      ? `the service does not say who reviewed this batch (it names no updated_by), so nobody can show it was not ${as}`
      : sameUser(as, facts.reviewed_by)
        ? `${facts.reviewed_by} reviewed this batch and the approve would go as ${as}`
        : sameUser(as, facts.policy_created_by)
          ? `${facts.policy_created_by} created its policy and the approve would go as ${as}`
          : undefined;
  if (!why) return undefined;
  const fix = as ? approverFix(as, approverConfigured) : `set REVSYNC_${approverConfigured ? "APPROVER_" : ""}USER to the user the token signs in as`;
  return `blocked: four eyes: ${why}; nothing was sent for it; fix: ${fix} and apply again (what this run did stays done)`;
}

/** The service's refusal of an approve sent as the batch's reviewer or its policy's creator, explained: a
 *  service that holds four eyes refuses exactly that, as a permission (403) or in its answer's error array
 *  (the interface's way of refusing, whatever the status). Other refusals (a conflict, a stale version,
 *  an unknown batch) are not the rule's and keep their own words. */
export function fourEyesRefusal(facts: FourEyesFacts, approverConfigured: boolean, error: ApiError): string | undefined {
  const as = facts.approved_by;
  const who = sameUser(as, facts.reviewed_by) ? "reviewed this batch" : sameUser(as, facts.policy_created_by) ? "created its policy" : undefined;
  const permission = error.status === 403 || (error.status >= 200 && error.status < 300);
  if (!as || !who || !permission) return undefined;
  const fix = approverFix(as, approverConfigured);
  const said = `${error.status && error.status !== 200 ? `${error.status}: ` : ""}${error.serviceMessage}`;
  return `refused by the four-eyes rule: ${as} ${who} and the approve went as ${as} (the service: ${said}); fix: ${fix} and apply again (the review is done and is not sent again)`;
}
