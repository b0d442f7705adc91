import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { execFileSync } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cli, DEMO_ENV, removeDir, ROOT, startEmu, tempRepo, type Emu } from "../src/testing/helpers.js";

// Four eyes in CI (issue 37): with four_eyes, apply reads the pull (merge) request's approval from the
// forge's API with the token the CI recipes pass, and refuses (exit 1, nothing written) unless someone
// other than its author approved the commit applied. GitHub's reviews API and GitLab's approvals API are
// stood in for by a server written here, at the base URL the CIs set (GITHUB_API_URL, CI_API_V4_URL).

const HEAD = "1111111111111111111111111111111111111111";
const OLDER = "0000000000000000000000000000000000000000";
/** The commit the merge made: the policy repo's own HEAD, made in beforeAll (apply in CI under four eyes
 *  plans only from a clean tree at the commit it judges). */
let MERGE = "";
const GH_TOKEN = "ghs_standin-token-4821";
const GL_TOKEN = "glpat-standin-token-7734";

type Scenario = {
  approvals: { user: string; commit: string; association?: string; bot?: boolean }[];
  resetOnPush?: boolean;
  /** GitLab: the project lets users who added commits approve. */
  committersApprove?: boolean;
  /** GitHub: who made the head commit (default carol, committed through web-flow). */
  headBy?: { author: string; committer: string };
  /** GitHub: every page of reviews names a next one. */
  endless?: boolean;
  /** GitHub: the first page of reviews names a next one on another origin. */
  nextElsewhere?: boolean;
  /** The commit the forge says the merge made (default MERGE, the repo's HEAD). */
  merge?: string;
};
let scenario: Scenario = { approvals: [] };
let seen: { path: string; headers: IncomingHttpHeaders }[] = [];
let forge: Server;
let forgeUrl = "";

/** The stand-in's answers: GitHub's pull, its reviews and its commits, GitLab's merge request, its
 *  approvals, the project's approval settings and its users, for a change by carol whose head is HEAD and
 *  whose merge made MERGE. */
function answer(path: string): { status: number; body: unknown; link?: string } {
  const s = scenario;
  const userId = (user: string): number => 100 + s.approvals.findIndex((a) => a.user === user);
  if (path === "/repos/acme/policies/pulls/12")
    return { status: 200, body: { number: 12, user: { login: "carol" }, head: { sha: HEAD }, merge_commit_sha: s.merge ?? MERGE } };
  if (path.startsWith("/repos/acme/policies/pulls/12/commits")) {
    const by = s.headBy ?? { author: "carol", committer: "web-flow" };
    return { status: 200, body: [{ sha: HEAD, author: { login: by.author }, committer: { login: by.committer } }] };
  }
  if (path.startsWith("/repos/acme/policies/pulls/12/reviews")) {
    const page = Number(/[?&]page=(\d+)/.exec(path)?.[1] ?? "1");
    return {
      status: 200,
      body: [
        {
          id: 1,
          user: { login: "erin", type: "User" },
          author_association: "MEMBER",
          state: "COMMENTED",
          submitted_at: "2026-03-01T09:00:00Z",
          commit_id: HEAD,
        },
        ...s.approvals.map((a, i) => ({
          id: i + 2,
          user: { login: a.user, type: a.bot ? "Bot" : "User" },
          author_association: a.association ?? "COLLABORATOR",
          state: "APPROVED",
          submitted_at: `2026-03-02T1${i}:00:00Z`,
          commit_id: a.commit,
        })),
      ],
      ...(s.endless ? { link: `<${forgeUrl}/repos/acme/policies/pulls/12/reviews?per_page=100&page=${page + 1}>; rel="next"` } : {}),
      ...(s.nextElsewhere ? { link: `<https://forge.elsewhere.example/repos/acme/policies/pulls/12/reviews?page=2>; rel="next"` } : {}),
    };
  }
  if (path === "/api/v4/projects/42/merge_requests/12")
    return {
      status: 200,
      body: { iid: 12, author: { username: "carol" }, sha: HEAD, merge_commit_sha: s.merge ?? MERGE, squash_commit_sha: null, state: "merged" },
    };
  if (path === "/api/v4/projects/42/merge_requests/12/approvals")
    return {
      status: 200,
      body: {
        approved: s.approvals.length > 0,
        approved_by: s.approvals.map((a) => ({ user: { id: userId(a.user), username: a.user }, approved_at: "2026-03-02T10:00:00Z" })),
      },
    };
  if (path === "/api/v4/projects/42/approvals")
    return {
      status: 200,
      body: { reset_approvals_on_push: s.resetOnPush !== false, merge_requests_disable_committers_approval: s.committersApprove !== true },
    };
  const user = s.approvals.find((a) => path === `/api/v4/users/${userId(a.user)}`);
  if (user) return { status: 200, body: { id: userId(user.user), username: user.user, bot: user.bot === true } };
  return { status: 404, body: { message: "404 Not Found" } };
}

let emu: Emu;
let repo: string;
beforeAll(async () => {
  emu = await startEmu();
  forge = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    const a = answer(req.url ?? "");
    res.writeHead(a.status, { "content-type": "application/json", ...(a.link ? { link: a.link } : {}) }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => forge.listen(0, "127.0.0.1", r));
  forgeUrl = `http://127.0.0.1:${(forge.address() as AddressInfo).port}`;
  // One tenant configuration change to apply: a small plan, the same in every case.
  repo = tempRepo(emu.url, { "policies/tenant-configuration.yaml": readFileSync(join(ROOT, "policies", "tenant-configuration.yaml"), "utf8") });
  appendFileSync(join(repo, "revsync.yaml"), "four_eyes: true\n");
  // A checkout of the merged commit (the evidence folders the runs add are no policy files): one shell
  // for the four gits (each process this large worker starts costs 10 to 20 ms).
  MERGE = execFileSync(
    "sh",
    ["-c", "git init -q && git add -A && git -c user.name=ci -c user.email=ci@example.com commit -q -m merged && git rev-parse HEAD"],
    {
      cwd: repo,
      encoding: "utf8",
    },
  ).trim();
});
afterAll(async () => {
  removeDir(repo);
  await new Promise<void>((r) => forge.close(() => r()));
  await emu.close();
});
beforeEach(async () => {
  await emu.reset();
  seen = [];
});

const CI = {
  github: (applied: string) => ({
    GITHUB_ACTIONS: "true",
    GITHUB_API_URL: forgeUrl,
    GITHUB_REPOSITORY: "acme/policies",
    GITHUB_TOKEN: GH_TOKEN,
    GITHUB_SHA: applied,
    GITHUB_REF: "refs/heads/main",
    GITHUB_EVENT_NAME: "push",
    REVSYNC_PULL_REQUEST: "12",
  }),
  gitlab: (applied: string) => ({
    GITLAB_CI: "true",
    CI_API_V4_URL: `${forgeUrl}/api/v4`,
    CI_PROJECT_ID: "42",
    GITLAB_API_TOKEN: GL_TOKEN,
    CI_COMMIT_SHA: applied,
    CI_PIPELINE_SOURCE: "push",
    REVSYNC_PULL_REQUEST: "12",
  }),
};

describe.each(["github", "gitlab"] as const)("the pull request's approval in CI (%s)", (provider) => {
  const apply = (applied: string) =>
    cli(["apply", "--auto-approve", "--evidence", `ev-${provider}`], { cwd: repo, env: { ...DEMO_ENV, ...CI[provider](applied) } });
  const refused = async (s: Scenario, applied: string, reason: RegExp) => {
    scenario = s;
    const r = await apply(applied);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/Error: four eyes: /);
    expect(r.stderr).toMatch(reason);
    expect(r.stderr).toContain("nothing was sent");
    expect(await emu.writes()).toEqual([]);
    return r;
  };

  it("refuses, writing nothing, with no approval, an approval by the author only, or one at an older commit; applies what someone else approved, and the record names the author and each approval", async () => {
    const pr = provider === "gitlab" ? "merge request !12" : "pull request #12";
    await refused({ approvals: [] }, MERGE, new RegExp(`${pr} has no approval: it needs one by someone other than its author, carol`));
    await refused({ approvals: [{ user: "carol", commit: HEAD }] }, MERGE, new RegExp(`${pr} is approved only by its author, carol`));
    if (provider === "github")
      await refused(
        { approvals: [{ user: "dave", commit: OLDER }] },
        MERGE,
        /pull request #12 was approved by dave at an older commit \(000000000000\), not at its head 111111111111: the change applied is not the one approved/,
      );
    // GitLab does not say which commit an approval is of: only a project that drops approvals on a push
    // makes a standing approval one of the head.
    else
      await refused(
        { approvals: [{ user: "dave", commit: HEAD }], resetOnPush: false },
        MERGE,
        /merge request !12 is approved by dave, but the project keeps approvals/,
      );
    // The commit applied (the checkout's HEAD, whatever the CI's variable says) is neither the approved
    // head nor the merge made of it.
    await refused(
      { approvals: [{ user: "dave", commit: HEAD }], merge: "9".repeat(40) },
      MERGE,
      new RegExp(
        `the commit applied, ${MERGE.slice(0, 12)}, is neither the approved head 111111111111 of ${pr} nor the commit its merge made \\(999999999999\\)`,
      ),
    );

    // Approvals that are not independent of the change, whoever else wrote it: a bot's, and on GitHub a
    // user's without write access, and the approval of whoever pushed the head commit.
    await refused(
      { approvals: [{ user: provider === "gitlab" ? "deploy" : "github-actions[bot]", commit: HEAD, bot: true }] },
      MERGE,
      new RegExp(`${pr} has no approval that counts \\([^)]*: a bot\\)`),
    );
    if (provider === "github") {
      await refused(
        { approvals: [{ user: "mallory", commit: HEAD, association: "CONTRIBUTOR" }] },
        MERGE,
        /mallory: no write access to the repository \(author_association CONTRIBUTOR/,
      );
      await refused(
        { approvals: [{ user: "dave", commit: HEAD }], headBy: { author: "carol", committer: "dave" } },
        MERGE,
        /pull request #12 has no approval that counts \(dave: made the head commit 111111111111\)/,
      );
      // Reviews that never end are not judged in part, nor reviews whose next page lies elsewhere.
      await refused({ approvals: [{ user: "dave", commit: HEAD }], endless: true }, MERGE, /the reviews of pull request #12 go on past 30 pages/);
      await refused(
        { approvals: [{ user: "dave", commit: HEAD }], nextElsewhere: true },
        MERGE,
        /the reviews of pull request #12: the API's next page is on another origin \(https:\/\/forge\.elsewhere\.example\) than the API's own \(http:\/\/127\.0\.0\.1:\d+\), which revsync does not follow, so what the rest holds is unknown/,
      );
    } else
      await refused(
        { approvals: [{ user: "dave", commit: HEAD }], committersApprove: true },
        MERGE,
        /merge request !12 is approved, but the project lets users who add commits approve \(merge_requests_disable_committers_approval is off\)/,
      );

    scenario = {
      approvals: [
        { user: "carol", commit: HEAD },
        { user: "dave", commit: HEAD },
      ],
    };
    const ok = await apply(MERGE);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain(`Four eyes: ${pr} by carol is approved by dave at 111111111111.`);
    expect((await emu.writes()).map((w) => w.method)).toEqual(["PATCH"]);
    // The token went to the forge as the forge wants it, and nowhere in the output.
    const auth = seen.map((s) => (provider === "github" ? s.headers.authorization : s.headers["private-token"]));
    expect(new Set(auth)).toEqual(new Set([provider === "github" ? `Bearer ${GH_TOKEN}` : GL_TOKEN]));
    const dir = join(repo, `ev-${provider}`);
    const records = readdirSync(dir)
      .sort()
      .map((f) => readFileSync(join(dir, f), "utf8"));
    for (const text of records) expect(text).not.toContain(provider === "github" ? GH_TOKEN : GL_TOKEN);
    const last = JSON.parse(records.at(-1) ?? "{}");
    expect(last.pull_request_approval).toMatchObject({
      provider,
      number: 12,
      author: "carol",
      head_commit: HEAD,
      applied_commit: MERGE,
      independent: ["dave"],
      holds: true,
      problem: null,
    });
    expect(last.pull_request_approval.approvals.map((a: any) => [a.user, a.commit, a.excluded])).toEqual([
      ["carol", HEAD, "the author"],
      ["dave", HEAD, undefined],
    ]);
    // The refused runs left records too, each saying why.
    expect(JSON.parse(records[0] ?? "{}").pull_request_approval).toMatchObject({ holds: false, independent: [] });
    const verify = await cli(["evidence", "verify", `ev-${provider}`], { cwd: repo });
    expect(verify.code, verify.stdout).toBe(0);
  });
});

it("a tree edited after checkout is not applied under four eyes in CI, whoever approved the commit", async () => {
  scenario = { approvals: [{ user: "dave", commit: HEAD }] };
  const file = join(repo, "policies", "tenant-configuration.yaml");
  const committed = readFileSync(file, "utf8");
  writeFileSync(file, committed.replace("ui_mode: Classic", "ui_mode: Modern").replace(/\n$/, "\n  # edited after checkout\n"));
  try {
    const r = await cli(["apply", "--auto-approve"], { cwd: repo, env: { ...DEMO_ENV, ...CI.github(MERGE) } });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      `Error: four eyes: the policy files differ from commit ${MERGE.slice(0, 12)}: policies/tenant-configuration.yaml (modified); apply in CI plans only from a clean tree equal to the commit approved, so nothing was sent`,
    );
    expect(await emu.writes()).toEqual([]);
  } finally {
    writeFileSync(file, committed);
  }
});

it("four_eyes outside CI: apply refuses, sending nothing; with four_eyes: { local_apply: true } it applies, says so, the record holds it and verify flags it", async () => {
  const r = await cli(["apply", "--auto-approve"], { cwd: repo, env: DEMO_ENV });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("Error: four eyes: this apply runs outside CI (GitHub Actions or GitLab CI)");
  expect(r.stderr).toContain("four_eyes: { local_apply: true }");
  expect(await emu.writes()).toEqual([]);
  const config = join(repo, "revsync.yaml");
  writeFileSync(config, readFileSync(config, "utf8").replace("four_eyes: true", "four_eyes: { local_apply: true }"));
  const local = await cli(["apply", "--auto-approve", "--evidence", "ev-local"], { cwd: repo, env: DEMO_ENV });
  expect(local.code, local.stderr).toBe(0);
  expect(local.stderr).toContain("Warning: four eyes: applied outside CI, as four_eyes: { local_apply: true } allows");
  expect(seen).toEqual([]);
  const [file] = readdirSync(join(repo, "ev-local"));
  expect(JSON.parse(readFileSync(join(repo, "ev-local", file ?? ""), "utf8"))).toMatchObject({ four_eyes: true, four_eyes_local_apply: true });
  const verify = await cli(["evidence", "verify", "ev-local"], { cwd: repo });
  expect(verify.stdout).toContain("LOCAL-APPLY: four eyes: applied outside CI, as four_eyes: { local_apply: true } of revsync.yaml allowed");
});
