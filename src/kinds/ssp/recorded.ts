/** Four eyes of the SSP kind in an evidence record (revsync evidence verify): each approve the record
 *  says landed, held to its batch's preparers and to the user the service shows approved it; a review or
 *  approve that moved something other than what was reviewed. Pure. */
import { LANDED_OUTCOMES } from "../../shared/entries.js";
import { sameUser } from "../../shared/who.js";
import type { RecordedChange } from "../kind.js";

/** An approve a record says landed whose approver the service named otherwise than it was sent as, or
 *  that broke the rule by apply's own word (outcome breached): in any record, four eyes or not, since the
 *  record would otherwise name an approver the service does not. */
function approverProblems(changes: readonly RecordedChange[]): string[] {
  const out: string[] = [];
  for (const c of changes) {
    const f = c.four_eyes;
    // A review or approve that landed on another batch, or other values, than the one reviewed.
    if (c.outcome === "breached" && f?.rule !== "breached") out.push(`${c.address}: what the service shows moved is not what was reviewed (${c.why})`);
    if (c.action !== "approve" || !f) continue;
    if (f.rule === "breached") out.push(`four eyes: ${c.address} was approved in breach of four eyes (${c.why})`);
    else if (f.sent_as && f.approved_by && !sameUser(f.sent_as, f.approved_by))
      out.push(`four eyes: ${c.address} was sent as ${f.sent_as} and the service shows it approved by ${f.approved_by}`);
  }
  return out;
}

/** An approve of a four_eyes record found made by someone else (already): it must name its approver (as
 *  the service showed it) and its reviewer, and that approver must be none of its batch's preparers
 *  either (the rule is the batch's, whoever approved it). */
function foundProblems(c: RecordedChange): string[] {
  const f = c.four_eyes;
  if (c.action !== "approve" || c.outcome !== "already") return [];
  // Who cannot be named cannot be shown to be another person, found approved as much as approved here.
  if (!f?.confirmed || !f.approved_by) return [`four eyes: ${c.address} was found approved, and the record does not name who approved it`];
  if (!f.reviewed_by) return [`four eyes: ${c.address} was found approved, and the record does not say who reviewed it`];
  const as = f.approved_by;
  if (sameUser(as, f.reviewed_by)) return [`four eyes: ${c.address} was reviewed and approved by the same user, ${as} (found approved)`];
  if (sameUser(as, f.uploaded_by)) return [`four eyes: ${c.address} was approved by ${as}, who uploaded it (found approved)`];
  if (sameUser(as, f.policy_created_by)) return [`four eyes: ${c.address} was approved by ${as}, who created its policy (found approved)`];
  return [];
}

/** Each landed approve of a four_eyes record against its preparers: it must name its batch's reviewer,
 *  and the user it went as (the record's approved_by, and the user its own requests say sent it) must be
 *  neither its reviewer, its uploader nor its policy's creator. */
function preparerProblems(changes: readonly RecordedChange[]): { problems: string[]; unconfirmed: string[] } {
  const problems: string[] = [];
  const unconfirmed: string[] = [];
  for (const c of changes) {
    problems.push(...foundProblems(c));
    if (c.action !== "approve" || c.outcome === "already" || !LANDED_OUTCOMES.has(c.outcome)) continue;
    const f = c.four_eyes;
    if (!f) {
      problems.push(`four eyes: ${c.address} was approved, and the record does not say who reviewed and who approved it`);
      continue;
    }
    // The approve's own requests name the users they went as: the write itself (a 2xx PATCH of the approve).
    const sentAs = (c.requests ?? [])
      .filter((q) => q.method === "PATCH" && /\/approve\//.test(q.path) && q.status !== null && q.status < 300)
      .map((q) => q.user);
    for (const as of new Set([f.approved_by, ...sentAs])) {
      if (!as) problems.push(`four eyes: ${c.address} was approved as a user the record does not name`);
      else if (sameUser(as, f.reviewed_by)) problems.push(`four eyes: ${c.address} was reviewed and approved by the same user, ${as}`);
      else if (sameUser(as, f.uploaded_by)) problems.push(`four eyes: ${c.address} was approved by ${as}, who uploaded it`);
      else if (sameUser(as, f.policy_created_by)) problems.push(`four eyes: ${c.address} was approved by ${as}, who created its policy`);
    }
    if (!f.reviewed_by) problems.push(`four eyes: the record does not say who reviewed ${c.address}`);
    if (f.confirmed === false) unconfirmed.push(c.address);
  }
  return { problems, unconfirmed };
}

/** What a record's SSP changes show against four eyes: in any record, the approver problems; in a record
 *  of a four_eyes environment, each approve against its preparers, and a note for each approver the
 *  service's answer did not confirm. */
export function recordedFourEyes(changes: readonly RecordedChange[], fourEyes: boolean): { problems: string[]; notes: string[] } {
  const problems = approverProblems(changes);
  if (!fourEyes) return { problems, notes: [] };
  const preparers = preparerProblems(changes);
  const notes = preparers.unconfirmed.map(
    (a) => `four eyes: who approved ${a} is not confirmed by the service's answer; the record names the user it was sent as`,
  );
  return { problems: [...problems, ...preparers.problems], notes };
}
