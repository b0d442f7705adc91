import { kindOf, KINDS } from "../kinds/registry.js";
import type { Registry } from "../kinds/kind.js";
import { sameUser } from "../shared/who.js";
import { LANDED, type EvidenceRecord } from "./record.js";

/** What each kind says of its changes of a record against four eyes (its approves: their preparers and
 *  who approved them), in the record's order of kinds. */
function kindsFindings(changes: EvidenceRecord["changes"], fourEyes: boolean, kinds: Registry): { problems: string[]; notes: string[] } {
  const said = kinds.map(
    (k) =>
      k.recorded?.(
        changes.filter((c) => kindOf(kinds, c.address) === k),
        fourEyes,
      ) ?? { problems: [], notes: [] },
  );
  return { problems: said.flatMap((s) => s.problems), notes: said.flatMap((s) => s.notes) };
}

/** What a record shows against the rule (evidence verify): what each kind says of its changes (in any
 *  record, an approve the service shows made by another user than it was sent as; in a record of a
 *  four_eyes environment, each approve against its preparers), and, in a four_eyes record, a run in CI
 *  that landed a write must hold an independent approval of its pull (merge) request. `problems` fail
 *  the check; `notes` are said (a run outside CI, where no pull request could be checked; an approver
 *  the service's answer did not confirm). Pure. */
export function fourEyesFindings(r: EvidenceRecord, kinds: Registry = KINDS): { problems: string[]; notes: string[] } {
  const changes = Array.isArray(r.changes) ? r.changes : [];
  const { problems, notes } = kindsFindings(changes, r.four_eyes === true, kinds);
  if (r.four_eyes !== true) return { problems: [...new Set(problems)], notes };
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
