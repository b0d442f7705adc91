import { describe, expect, it } from "vitest";
import { fourEyesFindings } from "./four-eyes.js";
import type { EvidenceRecord, PullRequestApproval } from "./record.js";

const HEAD = "1".repeat(40);
/** A four-eyes record of a run in CI that landed one tenant configuration update, with `pr` as its pull
 *  request's approval. */
const record = (pr: Partial<PullRequestApproval>): EvidenceRecord =>
  ({
    four_eyes: true,
    ci: { provider: "github", run_url: null, actor: null, pull_request: 12, commit: HEAD, ref: null, workflow: null, event: "push" },
    changes: [{ address: "tenant-configuration/Default", action: "update", outcome: "done", requests: [] }],
    pull_request_approval: {
      provider: "github",
      number: 12,
      author: "carol",
      head_commit: HEAD,
      head_commit_by: ["carol"],
      merge_commits: [],
      applied_commit: HEAD,
      approvals: [{ user: "dave", at: null, commit: HEAD }],
      independent: ["dave"],
      holds: true,
      problem: null,
      ...pr,
    },
  }) as unknown as EvidenceRecord;

describe("what verify holds a four-eyes record's pull request approval to", () => {
  it("an approver the record itself shows is a bot, ruled out, or who made the head commit does not count, even where the record says it holds", () => {
    expect(fourEyesFindings(record({})).problems).toEqual([]);
    const flagged = [
      record({ independent: ["github-actions[bot]"], approvals: [{ user: "github-actions[bot]", at: null, commit: HEAD }] }),
      record({ approvals: [{ user: "dave", at: null, commit: HEAD, excluded: "no write access to the repository" }] }),
      record({ head_commit_by: ["carol", "Dave"] }),
    ];
    for (const r of flagged)
      expect(fourEyesFindings(r).problems).toEqual([
        expect.stringMatching(
          /^four eyes: the pull request's approval names no approver who counts: \S+ is a bot, ruled out by the record's own approvals, or who made its head commit$/,
        ),
      ]);
  });
});

describe("what verify holds an approve found made by someone else to", () => {
  const found = (approvedBy: string, fourEyes = true): EvidenceRecord => {
    const r = record({});
    const change = {
      address: "ssp/Hardware SSP/batch/FY26-H1",
      action: "approve",
      outcome: "already",
      why: "already approved",
      requests: [],
      four_eyes: { reviewed_by: "alice", uploaded_by: "carol", policy_created_by: "erin", approved_by: approvedBy, confirmed: true },
    };
    return { ...r, four_eyes: fourEyes, changes: [...r.changes, change] } as unknown as EvidenceRecord;
  };
  it("in a four_eyes record, an approval found made by the batch's reviewer, uploader or policy creator is flagged; by another user, or outside four eyes, it is not", () => {
    expect(fourEyesFindings(found("alice")).problems).toEqual([
      "four eyes: ssp/Hardware SSP/batch/FY26-H1 was reviewed and approved by the same user, alice (found approved)",
    ]);
    expect(fourEyesFindings(found("carol")).problems).toEqual([
      "four eyes: ssp/Hardware SSP/batch/FY26-H1 was approved by carol, who uploaded it (found approved)",
    ]);
    expect(fourEyesFindings(found("erin")).problems).toEqual([
      "four eyes: ssp/Hardware SSP/batch/FY26-H1 was approved by erin, who created its policy (found approved)",
    ]);
    expect(fourEyesFindings(found("bob")).problems).toEqual([]);
    expect(fourEyesFindings(found("alice", false)).problems).toEqual([]);
  });
});
