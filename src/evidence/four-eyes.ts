import { sameUser } from "../shared/who.js";
import { LANDED, type EvidenceRecord } from "./record.js";

/** An approve a record says landed whose approver the service named otherwise than it was sent as, or
 *  that broke the rule by apply's own word (outcome breached): in any record, four eyes or not, since the
 *  record would otherwise name an approver the service does not. */
function approverProblems(changes: EvidenceRecord["changes"]): string[] {
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
function foundProblems(c: EvidenceRecord["changes"][number]): string[] {
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
function preparerProblems(changes: EvidenceRecord["changes"]): { problems: string[]; unconfirmed: string[] } {
  const problems: string[] = [];
  const unconfirmed: string[] = [];
  for (const c of changes) {
    problems.push(...foundProblems(c));
    if (c.action !== "approve" || c.outcome === "already" || !LANDED.has(c.outcome)) continue;
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

/** What a record shows against the rule (evidence verify): in any record, an approve the service shows
 *  made by another user than it was sent as, or that apply reported as breaching four eyes; in a record
 *  of a four_eyes environment, each approve that this run landed must name its batch's reviewer and the
 *  user it went as must be none of its preparers, and a run in CI that landed a write must hold an
 *  independent approval of its pull (merge) request. `problems` fail the check; `notes` are said (a run
 *  outside CI, where no pull request could be checked; an approver the service's answer did not
 *  confirm). Pure. */
export function fourEyesFindings(r: EvidenceRecord): { problems: string[]; notes: string[] } {
  const notes: string[] = [];
  const changes = Array.isArray(r.changes) ? r.changes : [];
  const problems = approverProblems(changes);
  if (r.four_eyes !== true) return { problems: [...new Set(problems)], notes };
  const preparers = preparerProblems(changes);
  problems.push(...preparers.problems);
  for (const a of preparers.unconfirmed)
    notes.push(`four eyes: who approved ${a} is not confirmed by the service's answer; the record names the user it was sent as`);
  const wrote = changes.some((c) => LANDED.has(c.outcome) && c.outcome !== "already");
  const pr = r.pull_request_approval;
  if (r.ci === null) {
    if (wrote && r.four_eyes_local_apply === true)
      notes.push(
        "LOCAL-APPLY: four eyes: applied outside CI, as four_eyes: { local_apply: true } of revsync.yaml allowed: no pull request's approval was checked, and the tree applied was held to no reviewed commit",
      );
    else if (wrote) notes.push("four eyes: applied outside CI, so no pull request's approval was checked");
  } else if (wrote && !pr) problems.push("four eyes: applied in CI, and the record holds no approval of the pull request");
  else if (wrote && pr && !pr.holds)
    problems.push(`four eyes: the pull request lacks an independent approval (${pr.problem ?? "no approval by someone other than its author"})`);
  else if (wrote && pr && !(pr.independent ?? []).some((u) => !sameUser(u, pr.author)))
    problems.push(`four eyes: the pull request's approval names no approver other than its author, ${pr.author ?? "(unnamed)"}`);
  else if (wrote && pr && !(pr.independent ?? []).some((u) => counts(u, pr)))
    problems.push(
      `four eyes: the pull request's approval names no approver who counts: ${(pr.independent ?? []).join(", ")} ${pr.independent?.length === 1 ? "is" : "are each"} a bot, ruled out by the record's own approvals, or who made its head commit`,
    );
  return { problems: [...new Set(problems)], notes };
}

/** Whether an approver a record names as independent may count, by what the record itself holds: not a
 *  bot (a GitHub app's login ends in [bot]), not ruled out among the record's approvals, not who made the
 *  head commit. */
function counts(user: string, pr: NonNullable<EvidenceRecord["pull_request_approval"]>): boolean {
  if (/\[bot\]$/i.test(user)) return false;
  if ((pr.head_commit_by ?? []).some((u) => sameUser(u, user))) return false;
  return !(pr.approvals ?? []).some((a) => sameUser(a.user, user) && a.excluded);
}
