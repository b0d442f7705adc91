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
const review = (login: string, state: string, commit = HEAD, more: object = {}) => ({
  user: { login, type: "User" },
  author_association: "MEMBER",
  state,
  submitted_at: "2026-03-01T00:00:00Z",
  commit_id: commit,
  ...more,
});
/** The pull request's commits: the head made by carol (author) and committed through GitHub's web-flow. */
const commits = (author: string | null = "Carol", committer: string | null = "web-flow") => ({
  body: [
    { sha: "b".repeat(40), author: { login: "Carol" }, committer: { login: "Carol" } },
    { sha: HEAD, author: author ? { login: author } : null, committer: committer ? { login: committer } : null },
  ],
});
const COMMITS = "/repos/o/r/pulls/5/commits?per_page=100";
const REVIEWS = "/repos/o/r/pulls/5/reviews?per_page=100";

/** The approval of pull request #5 whose commits are the usual ones and whose reviews are `reviews`. */
const approvalOf = (reviews: unknown[]) =>
  pullRequestApproval(ci, env, HEAD, github({ "/repos/o/r/pulls/5": pull, [COMMITS]: commits(), [REVIEWS]: { body: reviews } }));

describe("the pull request's approval (GitHub)", () => {
  it("a user's latest deciding review decides: an approval followed by changes requested does not stand, a comment after it does not undo it", async () => {
    const got = await pullRequestApproval(
      ci,
      env,
      HEAD,
      github({
        "/repos/o/r/pulls/5": pull,
        [COMMITS]: commits(),
        "/repos/o/r/pulls/5/reviews?per_page=100": {
          body: [review("dave", "APPROVED"), review("dave", "CHANGES_REQUESTED"), review("erin", "APPROVED"), review("erin", "COMMENTED")],
        },
      }),
    );
    expect(got).toMatchObject({ holds: true, independent: ["erin"], author: "Carol" });
    expect(got.approvals.map((a) => a.user)).toEqual(["dave", "erin"]);
  });

  it("an approval followed by the same reviewer's changes requested is said withdrawn, not missing", async () => {
    const got = await approvalOf([review("dave", "APPROVED"), review("dave", "CHANGES_REQUESTED")]);
    expect(got.holds).toBe(false);
    expect(got.problem).toBe(
      "pull request #5's approval was withdrawn: dave approved, then requested changes; it needs an approval standing now by someone other than its author, Carol",
    );
    // Approved again after the changes: it stands.
    const again = await approvalOf([review("dave", "APPROVED"), review("dave", "CHANGES_REQUESTED"), review("dave", "APPROVED")]);
    expect(again).toMatchObject({ holds: true, independent: ["dave"] });
  });

  it("the author is the author whatever the case of the login; reviews are read page by page, on the API's host only, and a page elsewhere fails the check", async () => {
    const only = await pullRequestApproval(
      ci,
      env,
      HEAD,
      github({
        "/repos/o/r/pulls/5": pull,
        [COMMITS]: commits(),
        "/repos/o/r/pulls/5/reviews?per_page=100": { body: [review("carol", "APPROVED")], link: '<https://api.example.test/page2>; rel="next"' },
        "/page2": { body: [review("dave", "APPROVED")], link: '<https://elsewhere.test/page3>; rel="next"' },
      }),
    );
    // The second page's approval is read; the third page, on another host, is not followed, and what it
    // holds is unknown: the check fails closed.
    expect(only).toMatchObject({
      holds: false,
      problem:
        "the reviews of pull request #5: the API's next page is on another origin (https://elsewhere.test) than the API's own (https://api.example.test), which revsync does not follow, so what the rest holds is unknown",
    });
    const authorOnly = await approvalOf([review("carol", "APPROVED")]);
    expect(authorOnly).toMatchObject({ holds: false, problem: "pull request #5 is approved only by its author, Carol: it needs an approval by someone else" });
  });

  it("a bot, a reviewer without write access and whoever made the head commit do not count; the record says why each does not", async () => {
    const judge = (reviews: unknown[], made = commits()) =>
      pullRequestApproval(ci, env, HEAD, github({ "/repos/o/r/pulls/5": pull, [COMMITS]: made, [REVIEWS]: { body: reviews } }));
    const bots = await judge([
      review("github-actions[bot]", "APPROVED", HEAD, { user: { login: "github-actions[bot]", type: "Bot" } }),
      review("renovate", "APPROVED", HEAD, { user: { login: "renovate", type: "Bot" } }),
      review("mallory", "APPROVED", HEAD, { author_association: "CONTRIBUTOR" }),
      review("trent", "APPROVED", HEAD, { author_association: undefined }),
    ]);
    expect(bots).toMatchObject({ holds: false, independent: [] });
    expect(bots.problem).toBe(
      "pull request #5 has no approval that counts (github-actions[bot]: a bot; renovate: a bot; mallory: no write access to the repository (author_association CONTRIBUTOR; OWNER, MEMBER or COLLABORATOR count); trent: no write access to the repository (author_association not given; OWNER, MEMBER or COLLABORATOR count)): it needs one by someone other than its author, Carol, who has write access, is not a bot and did not make its head commit",
    );
    expect(bots.approvals.map((a) => a.excluded)).toEqual([
      "a bot",
      "a bot",
      "no write access to the repository (author_association CONTRIBUTOR; OWNER, MEMBER or COLLABORATOR count)",
      "no write access to the repository (author_association not given; OWNER, MEMBER or COLLABORATOR count)",
    ]);
    // dave pushed the last commit (its committer, or its author): his approval is not independent; erin's is.
    for (const made of [commits("Carol", "Dave"), commits("dave", "web-flow")]) {
      const pushed = await judge([review("dave", "APPROVED")], made);
      expect(pushed).toMatchObject({ holds: false, independent: [] });
      expect(pushed.problem).toMatch(/^pull request #5 has no approval that counts \(dave: made the head commit aaaaaaaaaaaa\)/);
      const also = await judge([review("dave", "APPROVED"), review("erin", "APPROVED")], made);
      expect(also).toMatchObject({ holds: true, independent: ["erin"] });
      expect(also.head_commit_by).toEqual(expect.arrayContaining([expect.stringMatching(/^dave$/i)]));
    }
  });

  it("what GitHub cannot say fails closed: a head commit made by no GitHub user, a head the commit list leaves out, reviews past 30 pages", async () => {
    const unlinked = await pullRequestApproval(
      ci,
      env,
      HEAD,
      github({ "/repos/o/r/pulls/5": pull, [COMMITS]: commits(null, "web-flow"), [REVIEWS]: { body: [review("erin", "APPROVED")] } }),
    );
    expect(unlinked).toMatchObject({
      holds: false,
      problem:
        "pull request #5 is approved, but GitHub names no user as the author of its head commit aaaaaaaaaaaa (the commit's e-mail is linked to no account): no approval can be shown to be by someone other than who made its head",
    });
    const missing = await pullRequestApproval(
      ci,
      env,
      HEAD,
      github({ "/repos/o/r/pulls/5": pull, [COMMITS]: { body: [] }, [REVIEWS]: { body: [review("erin", "APPROVED")] } }),
    );
    expect(missing.problem).toMatch(/its head commit aaaaaaaaaaaa is not among the commits the API lists for it \(it lists at most 250\)/);
    // Every page names a next one: revsync reads 30 pages, then says it stopped, instead of judging a part.
    let pages = 0;
    const endless: ForgeGet = async (url) => {
      if (url.endsWith("/pulls/5")) return { status: 200, ...pull };
      if (url.includes("/commits")) return { status: 200, ...commits() };
      pages++;
      return { status: 200, body: [review("erin", "APPROVED")], link: `<https://api.example.test/reviews?page=${pages + 1}>; rel="next"` };
    };
    const cut = await pullRequestApproval(ci, env, HEAD, endless);
    expect(pages).toBe(30);
    expect(cut).toMatchObject({
      holds: false,
      independent: [],
      problem:
        "the reviews of pull request #5 go on past 30 pages (3000 items): revsync reads no further, and what it did not read (a later review, the head commit) could change the verdict",
    });
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

describe("the merge request's approval (GitLab)", () => {
  const glci: CiContext = { ...ci, provider: "gitlab" };
  const glenv = { CI_API_V4_URL: "https://gitlab.example.test/api/v4", CI_PROJECT_ID: "42", GITLAB_API_TOKEN: "t" };
  const mr = { author: { username: "carol" }, sha: HEAD, merge_commit_sha: null, squash_commit_sha: "s".repeat(40) };
  const settings = { reset_approvals_on_push: true, merge_requests_disable_committers_approval: true };
  const users: Record<number, object> = { 7: { id: 7, username: "dave", bot: false }, 8: { id: 8, username: "deploy", bot: true } };
  /** A GitLab stand-in: the merge request, its approvals, the project's settings and the users API. */
  const gitlab =
    (approvers: { id?: number; username: string }[], opts: { settings?: object; nextPage?: string } = {}): ForgeGet =>
    async (url) => {
      const path = url.replace("https://gitlab.example.test/api/v4", "");
      if (path === "/projects/42/merge_requests/5") return { status: 200, body: mr };
      if (path === "/projects/42/merge_requests/5/approvals")
        return { status: 200, body: { approved_by: approvers.map((user) => ({ user })) }, ...(opts.nextPage ? { nextPage: opts.nextPage } : {}) };
      if (path === "/projects/42/approvals") return { status: 200, body: opts.settings ?? settings };
      const user = /^\/users\/(\d+)$/.exec(path);
      const found = user ? users[Number(user[1])] : undefined;
      return found ? { status: 200, body: found } : { status: 404, body: {} };
    };

  it("counts an approval by another user with the project's settings that tie approvals to the head and keep committers out; a bot does not count", async () => {
    expect(await pullRequestApproval(glci, glenv, HEAD, gitlab([{ id: 7, username: "dave" }]))).toMatchObject({ holds: true, independent: ["dave"] });
    const bots = await pullRequestApproval(
      glci,
      glenv,
      HEAD,
      gitlab([{ id: 8, username: "deploy" }, { id: 9, username: "project_42_bot_3f9a" }, { username: "nobody-knows" }]),
    );
    expect(bots).toMatchObject({ holds: false, independent: [] });
    expect(bots.approvals.map((a) => [a.user, a.excluded])).toEqual([
      ["deploy", "a bot"],
      ["project_42_bot_3f9a", "a bot"],
      ["nobody-knows", "GitLab does not say which user this is (no user id), so whether it is a bot is unknown"],
    ]);
  });

  it("fails closed when the project lets committers approve (GitLab names no pusher), or when the approvals answer is cut", async () => {
    const committers = await pullRequestApproval(
      glci,
      glenv,
      HEAD,
      gitlab([{ id: 7, username: "dave" }], { settings: { reset_approvals_on_push: true, merge_requests_disable_committers_approval: false } }),
    );
    expect(committers.problem).toBe(
      "merge request !5 is approved, but the project lets users who add commits approve (merge_requests_disable_committers_approval is off), and GitLab names no user who pushed a commit: turn on preventing approvals by users who add commits: no approval can be shown to be by someone other than who made its head",
    );
    const cut = await pullRequestApproval(glci, glenv, HEAD, gitlab([{ id: 7, username: "dave" }], { nextPage: "2" }));
    expect(cut).toMatchObject({
      holds: false,
      problem: "the approvals of merge request !5: the API answered with only a first page, so what the rest holds is unknown",
    });
  });
});
