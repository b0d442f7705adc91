import { describe, expect, it } from "vitest";
import { pullRequestApproval, type ForgeGet } from "./pull-request.js";
import type { CiContext } from "./record.js";

const HEAD = "a".repeat(40);
const ci: CiContext = { provider: "github", run_url: null, actor: null, pull_request: 5, commit: HEAD, ref: null, workflow: null, event: "push" };
const env = { GITHUB_API_URL: "https://api.example.test", GITHUB_REPOSITORY: "o/r", GITHUB_TOKEN: "t" };

/** A GitHub stand-in from a path -> answer table; a path it lacks is a 404. */
const github =
  (answers: Record<string, { body: unknown; link?: string }>): ForgeGet =>
  async (url) => {
    const a = answers[url.replace("https://api.example.test", "")];
    return a ? { status: 200, ...a } : { status: 404, body: {} };
  };
const pull = { body: { user: { login: "Carol" }, head: { sha: HEAD }, merge_commit_sha: "m".repeat(40) } };
const review = (login: string, state: string, commit = HEAD) => ({ user: { login }, state, submitted_at: "2026-03-01T00:00:00Z", commit_id: commit });

describe("the pull request's approval (GitHub)", () => {
  it("a user's latest deciding review decides: an approval followed by changes requested does not stand, a comment after it does not undo it", async () => {
    const got = await pullRequestApproval(
      ci,
      env,
      HEAD,
      github({
        "/repos/o/r/pulls/5": pull,
        "/repos/o/r/pulls/5/reviews?per_page=100": {
          body: [review("dave", "APPROVED"), review("dave", "CHANGES_REQUESTED"), review("erin", "APPROVED"), review("erin", "COMMENTED")],
        },
      }),
    );
    expect(got).toMatchObject({ holds: true, independent: ["erin"], author: "Carol" });
    expect(got.approvals.map((a) => a.user)).toEqual(["dave", "erin"]);
  });

  it("the author is the author whatever the case of the login; reviews are read page by page, on the API's host only", async () => {
    const only = await pullRequestApproval(
      ci,
      env,
      HEAD,
      github({
        "/repos/o/r/pulls/5": pull,
        "/repos/o/r/pulls/5/reviews?per_page=100": { body: [review("carol", "APPROVED")], link: '<https://api.example.test/page2>; rel="next"' },
        "/page2": { body: [review("dave", "APPROVED")], link: '<https://elsewhere.test/page3>; rel="next"' },
      }),
    );
    // The second page's approval is read; the third page, on another host, is not followed.
    expect(only).toMatchObject({ holds: true, independent: ["dave"], problem: null });
    const authorOnly = await pullRequestApproval(
      ci,
      env,
      HEAD,
      github({ "/repos/o/r/pulls/5": pull, "/repos/o/r/pulls/5/reviews?per_page=100": { body: [review("carol", "APPROVED")] } }),
    );
    expect(authorOnly).toMatchObject({ holds: false, problem: "pull request #5 is approved only by its author, Carol: it needs an approval by someone else" });
  });

  it("without a token, a repository or a pull request number, or with an API refusing, the rule does not hold and says why", async () => {
    const none: ForgeGet = async () => ({ status: 200, body: [] });
    expect((await pullRequestApproval(ci, { ...env, GITHUB_TOKEN: "" }, HEAD, none)).problem).toMatch(/^GITHUB_TOKEN is not set/);
    expect((await pullRequestApproval({ ...ci, pull_request: null }, env, HEAD, none)).problem).toMatch(/names no pull request/);
    const refused: ForgeGet = async () => ({ status: 403, body: {} });
    expect(await pullRequestApproval(ci, env, HEAD, refused)).toMatchObject({
      holds: false,
      problem: "pull request #5 could not be read: the API answered 403 (is the token valid, and may it read the repository's pull requests?)",
    });
    const down: ForgeGet = async () => {
      throw new Error("connection refused");
    };
    expect((await pullRequestApproval(ci, env, HEAD, down)).problem).toBe("pull request #5 could not be read (connection refused)");
  });
});
