/** Four eyes for SSP batches (docs/decisions.md, "Four eyes"): who prepared the batch an approve moves
 *  forward (its reviewer, its uploader, its policy's creator), as the plan sees it and as apply finds it
 *  right before the send; who approved it, as the service shows it right after; and the words of an
 *  approve the rule holds back, the service refuses, or the service shows made by the wrong user. */
import { APPROVER_FIX } from "../../api/auth.js";
import { NOTHING_SENT_FOR_IT, refusedWords, type WriteOutcome } from "../../api/write.js";
import type { ApiError } from "../../errors.js";
import type { SspEnvelope, SspItem, SspUpdateResult } from "../../schema/generated/api.js";
import type { Change, FourEyesApprove, FourEyesFacts } from "../../shared/entries.js";
import { batchNameOf } from "../../shared/address.js";
import { sameUser } from "../../shared/who.js";
import type { WriteResult } from "../kind.js";
import { batchPayload } from "./payload.js";
import { sspAddress, type SspLive } from "./read.js";

/** Who prepared an approve's batch, as the plan sees it. */
export type Preparers = Omit<FourEyesApprove, "address" | "blocked">;

const named = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);

/** Who prepared the batch of an approve, as the plan sees it: its reviewer is the service's updated_by of
 *  a batch it shows reviewed (nothing else changes a reviewed batch), or this plan's own review (made as
 *  the sign-in); its uploader the batch's created_by, or this plan's create, which uploads it; its
 *  policy's creator the envelope's created_by, or this plan's own create. */
export function planPreparers(c: Change, changes: readonly Change[], live: SspLive): Preparers | undefined {
  const p = batchPayload(c);
  if (c.action !== "approve" || !p) return undefined;
  const inPlan = (action: string, addr: string): boolean => changes.some((x) => x.action === action && x.address === addr);
  const lp = live.ssp.get(p.policy);
  const lb = lp?.batches?.find((b) => batchNameOf(b) === p.batch);
  const reviewedInPlan = inPlan("review", c.address);
  const createdInPlan = inPlan("create", sspAddress.policy(p.policy));
  return {
    reviewed_by: reviewedInPlan ? null : lb?.status === "reviewed" ? named(lb.updated_by) : null,
    reviewed_in_plan: reviewedInPlan,
    uploaded_by: createdInPlan ? null : named(lb?.created_by),
    uploaded_in_plan: createdInPlan,
    policy_created_by: createdInPlan ? null : named(lp?.envelope.created_by),
    created_in_plan: createdInPlan,
  };
}

/** Who prepared the batch an approve moves forward, as apply finds it right before the send: the user the
 *  service names (its reviewer, its uploader, its policy's creator), or this run's sign-in where this run
 *  reviewed or created it and the service names nobody. */
export function runPreparers(
  env: SspEnvelope,
  lb: SspItem,
  run: { user: string; reviewedHere: boolean; createdHere: boolean },
): Pick<FourEyesFacts, "reviewed_by" | "uploaded_by" | "policy_created_by"> {
  const here = (did: boolean, service: string | null): string | null => service ?? (did ? named(run.user) : null);
  return {
    reviewed_by: here(run.reviewedHere, lb.status === "reviewed" ? named(lb.updated_by) : null),
    uploaded_by: here(run.createdHere, named(lb.created_by)),
    policy_created_by: here(run.createdHere, named(env.created_by)),
  };
}

/** What `as` did to the batch, where it prepared it: "reviewed this batch", "uploaded this batch",
 *  "created its policy"; undefined when it prepared nothing of it. `names`: every name the token it goes
 *  as gives its user (preferred_username, sub, email), each compared, as the service may record a user
 *  by any of them; without them, `as` alone. */
function preparedBy(facts: FourEyesFacts, as: string | null, names?: readonly string[]): string | undefined {
  const is = (who: string | null | undefined): boolean => (names?.length ? names : [as]).some((n) => sameUser(n, who));
  if (is(facts.reviewed_by)) return "reviewed this batch";
  if (is(facts.uploaded_by)) return "uploaded this batch";
  if (is(facts.policy_created_by)) return "created its policy";
  return undefined;
}

/** The fix of an approve that would go (or went) as its preparer: an approver identity, or another one. */
const approverFix = (as: string, approverConfigured: boolean): string =>
  approverConfigured ? APPROVER_FIX.replace("to another user", `to a user other than ${as}`) : APPROVER_FIX;

/** Why four eyes forbids an approve that would go as `facts.approved_by`, in words that start "blocked:
 *  four eyes:" and give the fix; undefined when it may go. Who the approve goes as is who the service's
 *  token names (`names`: its preferred_username, sub and email; a variable is no one's word but its
 *  writer's). Who cannot be named cannot be shown to be another person: an approve whose token names
 *  nobody, or whose reviewer is unknown, is blocked too. */
export function fourEyesBreach(facts: FourEyesFacts, approverConfigured: boolean, names?: readonly string[]): string | undefined {
  const as = facts.approved_by;
  const did = names?.length ? preparedBy(facts, as, names) : undefined;
  const why = !as
    ? `the approve would go as a user its token does not name, so nobody can show it is not its preparer`
    : !names?.length
      ? `the token the approve would go as names no user (no preferred_username or sub claim the service issued), so who approves cannot be told: ${as} is what a variable says, not the service, and nobody can show the approve is not its preparer's`
      : !facts.reviewed_by
        ? `the service does not say who reviewed this batch (it names no updated_by), so nobody can show it was not ${as}`
        : did
          ? `${as} ${did} and the approve would go as ${as}`
          : undefined;
  if (!why) return undefined;
  const fix =
    as && names?.length
      ? approverFix(as, approverConfigured)
      : `give the approver identity credentials whose token names its user (REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD: the service's token then names it)`;
  return `blocked: four eyes: ${why}; ${NOTHING_SENT_FOR_IT}; fix: ${fix} and apply again (what this run did stays done)`;
}

/** The service's refusal of an approve sent as the batch's reviewer, its uploader or its policy's
 *  creator, explained: a service that holds four eyes refuses exactly that, as a permission (403) or in
 *  its answer's error array (the interface's way of refusing, whatever the status). Other refusals (a
 *  conflict, a stale version, an unknown batch) are not the rule's and keep their own words. */
export function fourEyesRefusal(facts: FourEyesFacts, approverConfigured: boolean, error: ApiError): string | undefined {
  const as = facts.approved_by;
  const who = preparedBy(facts, as);
  const permission = error.status === 403 || (error.status >= 200 && error.status < 300);
  if (!as || !who || !permission) return undefined;
  const fix = approverFix(as, approverConfigured);
  const said = `${error.status && error.status !== 200 ? `${error.status}: ` : ""}${error.serviceMessage}`;
  return `refused by the four-eyes rule: ${as} ${who} and the approve went as ${as} (the service: ${said}); fix: ${fix} and apply again (the review is done and is not sent again)`;
}

/** After an approve landed: who the service shows approved it (the batch read back, its updated_by once
 *  approved), set as `approved_by` when it names one (`confirmed`), beside `sent_as`, the user its
 *  credentials name. Returns the breach in words, where there is one: the service shows the approve
 *  made by another user than it was sent as (an approver identity's token that is someone else's, a user
 *  variable that names the wrong user), or, under four eyes, by the batch's preparer. */
export function approvedBy(
  facts: FourEyesFacts,
  read: SspItem | undefined,
  rule: { fourEyes: boolean; approverConfigured: boolean; names?: readonly string[] },
): string | undefined {
  const sentAs = facts.approved_by;
  const shown = read?.status === "approved" ? named(read.updated_by) : null;
  Object.assign(facts, { sent_as: sentAs, confirmed: !!shown }, shown ? { approved_by: shown } : {});
  if (!shown) return undefined;
  // The user it was sent as, by every name its token gives (the service may record any of them).
  const sentNames = rule.names?.length ? rule.names : [sentAs];
  const other = (rule.fourEyes || rule.approverConfigured) && !!sentAs && !sentNames.some((n) => sameUser(shown, n));
  const did = rule.fourEyes ? preparedBy(facts, shown) : undefined;
  if (!other && !did) return undefined;
  facts.rule = "breached";
  const asWho = other ? `the service shows it approved by ${shown}, not by ${sentAs}, the user it was sent as (its credentials sign in as ${shown})` : "";
  const prepared = did ? `${shown} ${did} and the service shows it approved by ${shown}` : "";
  return `approved, but four eyes is broken: ${[asWho, prepared].filter(Boolean).join("; ")}; the batch is approved in the service as it stands: have its approval reviewed there, and give REVSYNC_APPROVER_* the approver's own credentials (a token's user is what the service says, not what a variable or the token's unverified claims name)`;
}

/** An approve that landed, without the service's word on who approved it (the batch could not be read
 *  back, or names no updated_by), in words; undefined when it has that word or the approver does not
 *  matter (no four eyes, no approver identity). */
export function approverUnconfirmed(facts: FourEyesFacts, matters: boolean): string | undefined {
  if (!matters || facts.confirmed) return undefined;
  return `; who approved it is not confirmed: the service's answer, read right after the approve, names nobody (it was sent as ${facts.sent_as ?? "a user its token does not name"})`;
}

/** An approve found made by someone else (already): who approved it is who the service shows (the batch's
 *  updated_by once approved), never the user revsync would have sent it as, and nothing was sent as
 *  anyone that landed (no `sent_as`). Under four eyes, an approval by the batch's reviewer, uploader or
 *  policy creator is a breach all the same, found or made, and so is one whose approver or reviewer
 *  nobody can name (four eyes cannot be shown): returns it in words. */
export function foundApproved(
  facts: FourEyesFacts,
  o: Extract<WriteOutcome<SspUpdateResult>, { kind: "already" }>,
  read: SspItem | undefined,
  rule: { fourEyes: boolean; sendsAs: string | null },
): string | undefined {
  const shown = read?.status === "approved" ? named(read.updated_by) : null;
  delete facts.sent_as;
  Object.assign(facts, { approved_by: shown, confirmed: !!shown });
  const did = rule.fourEyes ? preparedBy(facts, shown) : undefined;
  // Who cannot be named cannot be shown to be another person: under four eyes, an approval found made
  // whose approver or reviewer nobody can name is reported as revsync's own approve would be blocked.
  const unnamed = rule.fourEyes && !did ? unnamedWords(shown, facts.reviewed_by) : undefined;
  if (!did && !unnamed) return undefined;
  facts.rule = "breached";
  const sentAs = rule.sendsAs ?? "a user its token does not name";
  const when =
    o.answered !== undefined
      ? `first: revsync's approve, sent as ${sentAs}, was sent and the service ${refusedWords(o.answered)}, and it did not land`
      : o.unprocessed !== undefined
        ? `while revsync's approve, sent as ${sentAs}, was answered ${o.unprocessed} and not processed`
        : "before revsync sent anything for it";
  const broken = unnamed
    ? `already approved, but four eyes could not be shown: ${unnamed}, ${when}`
    : `already approved, but four eyes is broken: ${shown} ${did} and the service shows it approved by ${shown}, ${when}`;
  return `${broken}; the batch is approved in the service as it stands: have its approval reviewed there`;
}

/** Why an approval found made cannot be shown to be by another person than its reviewer: the service
 *  names no approver, or nobody can name its reviewer (the plan did not see the batch reviewed, and an
 *  approved batch no longer names it). Undefined when both are named. */
function unnamedWords(approver: string | null, reviewer: string | null): string | undefined {
  if (!approver) return "the service does not say who approved this batch (it names no updated_by), so nobody can show it was not its reviewer";
  if (!reviewer)
    return `the service shows it approved by ${approver}, and nobody can name who reviewed it (the plan did not see it reviewed, and an approved batch no longer names its reviewer), so nobody can show it was not ${approver}`;
  return undefined;
}

/** What an approve's report says beside its outcome: the four-eyes rule's refusal, its breach (the
 *  service shows it made by another user than it was sent as, or by its preparer, whether revsync sent it
 *  or found it made), or who it went as, once there are two identities or the rule to keep. */
export function approveWords(
  facts: FourEyesFacts,
  o: WriteOutcome<SspUpdateResult>,
  read: SspItem | undefined,
  rule: { fourEyes: boolean; approverConfigured: boolean; sendsAs: string | null; names?: readonly string[] },
): Pick<WriteResult, "failed" | "breached" | "also"> {
  const refused = o.kind === "refused" ? fourEyesRefusal(facts, rule.approverConfigured, o.error) : undefined;
  if (refused) facts.rule = "refused";
  const landed = o.kind === "done" || o.kind === "confirmed";
  const breached = landed ? approvedBy(facts, read, rule) : o.kind === "already" ? foundApproved(facts, o, read, rule) : undefined;
  const matters = rule.fourEyes || rule.approverConfigured;
  const also =
    matters && landed
      ? ` as ${facts.approved_by ?? "a user the token does not name"} (reviewed by ${facts.reviewed_by ?? "a user the service does not name"})${approverUnconfirmed(facts, matters) ?? ""}`
      : "";
  return { ...(refused ? { failed: refused } : {}), ...(breached ? { breached } : {}), ...(also ? { also } : {}) };
}
