import { sameUser } from "../shared/who.js";
import type { CiContext, PullRequestApproval } from "./record.js";

/** One GET of the forge's API: its status, its JSON body (undefined when it is not JSON), its Link
 *  header and GitLab's x-next-page header. Never throws for an answer; throws (an Error, in words) when
 *  no answer came. */
export type ForgeGet = (url: string, headers: Record<string, string>) => Promise<{ status: number; body: unknown; link?: string; nextPage?: string }>;

/** An approval as the forge gives it: who, when, and the commit it approves (null when the forge does not
 *  say); `excluded`: why the forge's own words rule it out whoever wrote the change (a bot, a user without
 *  write access). */
interface Approval {
  user: string;
  at: string | null;
  commit: string | null;
  excluded?: string;
}

/** What the forge says of a pull (merge) request: its author, its head, the commits its merge made, its
 *  approvals; `commitNote`: why an approval's commit is unknown, when it is; `headBy`: the users who made
 *  its head commit (its author and committer), whose approval is not independent; `headByNote`: why who
 *  made it is unknown, when it is (then no approval can be shown to be by someone else). */
interface Read {
  author: string | null;
  head: string | null;
  merges: string[];
  approvals: Approval[];
  /** Each user's approval standing now (the latest decisive review of each user, on GitHub). */
  standing: Approval[];
  /** Users whose approval no longer stands because their own later review requested changes (GitHub). */
  withdrawn?: string[];
  commitNote?: string;
  headBy: string[];
  headByNote?: string;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

class ForgeError extends Error {}

async function getJson(
  get: ForgeGet,
  url: string,
  headers: Record<string, string>,
  what: string,
): Promise<{ body: unknown; link?: string; nextPage?: string }> {
  let r;
  try {
    r = await get(url, headers);
  } catch (e) {
    throw new ForgeError(`${what} could not be read (${(e as Error).message})`);
  }
  if (r.status !== 200)
    throw new ForgeError(
      `${what} could not be read: the API answered ${r.status}${r.status === 401 || r.status === 403 || r.status === 404 ? " (is the token valid, and may it read the repository's pull requests?)" : ""}`,
    );
  if (r.body === undefined) throw new ForgeError(`${what}: the API's answer is not JSON`);
  return r;
}

/** One answer that must be whole: an answer that says a next page follows was cut short by the API, and
 *  what it left out could change the verdict. */
async function getWhole(get: ForgeGet, url: string, headers: Record<string, string>, what: string): Promise<unknown> {
  const r = await getJson(get, url, headers, what);
  if (/rel="?next"?/i.test(r.link ?? "") || (r.nextPage ?? "").trim())
    throw new ForgeError(`${what}: the API answered with only a first page, so what the rest holds is unknown`);
  return r.body;
}

/** The most pages of one list revsync reads (100 items a page). */
const MAX_PAGES = 30;

/** Every item of a paged GitHub list, page by page (the Link header's next, on the API's host only).
 *  A list that goes on past MAX_PAGES is not read to its end: that is a failure in words, never a verdict
 *  on part of the list. */
async function readPages(get: ForgeGet, first: string, headers: Record<string, string>, what: string, base: string): Promise<unknown[]> {
  const items: unknown[] = [];
  let url: string | undefined = first;
  for (let page = 0; url; page++) {
    if (page === MAX_PAGES)
      throw new ForgeError(
        `${what} go on past ${MAX_PAGES} pages (${MAX_PAGES * 100} items): revsync reads no further, and what it did not read (a later review, the head commit) could change the verdict`,
      );
    const r = await getJson(get, url, headers, what);
    if (!Array.isArray(r.body)) throw new ForgeError(`${what}: the API's answer is not a list`);
    items.push(...(r.body as unknown[]));
    url = nextPage(r.link, base, what);
  }
  return items;
}

/** GitHub's author associations of a user with write access to the repository: its owner, a member of
 *  the organization that owns it, a collaborator. */
const WRITERS = new Set(["OWNER", "MEMBER", "COLLABORATOR"]);

/** Why a GitHub reviewer's approval does not count whoever wrote the change, if it does not: a bot (an
 *  app's login ends in [bot], and the API types it Bot), or a user without write access. */
function githubExcluded(user: Record<string, unknown>, login: string, association: string | null): string | undefined {
  if (/\[bot\]$/i.test(login) || str(user.type) === "Bot") return "a bot";
  if (!association || !WRITERS.has(association.toUpperCase()))
    return `no write access to the repository (author_association ${association ?? "not given"}; OWNER, MEMBER or COLLABORATOR count)`;
  return undefined;
}

/** The next page of a GitHub list (its Link header's rel="next"), on the API's own host only; undefined
 *  when the header names no next page. A next page revsync will not follow (another origin, a link it
 *  cannot read) fails the read closed: what it holds (a later "changes requested") could change the
 *  verdict, so it is never taken as the end of the list. */
function nextPage(link: string | undefined, base: string, what: string): string | undefined {
  if (!/rel="?next"?/i.test(link ?? "")) return undefined;
  const m = /<([^>]+)>\s*;\s*rel="?next"?/i.exec(link ?? "");
  let url: URL | undefined;
  try {
    url = m?.[1] ? new URL(m[1]) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || !m?.[1]) throw new ForgeError(`${what}: the API says a next page follows, but its link cannot be read, so what the rest holds is unknown`);
  if (url.origin !== new URL(base).origin)
    throw new ForgeError(
      `${what}: the API's next page is on another origin (${url.origin}) than the API's own (${new URL(base).origin}), which revsync does not follow, so what the rest holds is unknown`,
    );
  return m[1];
}

/** GitHub: the pull request (its author, user.login; its head, head.sha; merge_commit_sha, the commit its
 *  merge, squash or rebase made, or the test merge of an open one), its reviews (each: user.login,
 *  user.type, author_association, state, submitted_at, commit_id, the head the review was given on), in
 *  order, and its commits (the head's author.login and committer.login, the GitHub users who made it). A
 *  user's approval stands when their latest review that decides (APPROVED, CHANGES_REQUESTED, DISMISSED)
 *  is APPROVED. */
async function readGithub(get: ForgeGet, env: NodeJS.ProcessEnv, n: number): Promise<Read> {
  const base = (env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
  const repo = env.GITHUB_REPOSITORY;
  if (!repo) throw new ForgeError("GITHUB_REPOSITORY is not set, so the pull request cannot be found");
  const token = env.GITHUB_TOKEN;
  if (!token) throw new ForgeError("GITHUB_TOKEN is not set: give the apply step GITHUB_TOKEN: ${{ github.token }} (with pull-requests: read)");
  const headers = {
    authorization: `Bearer ${token}`,
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    "user-agent": "revsync",
  };
  const pr = obj(await getWhole(get, `${base}/repos/${repo}/pulls/${n}`, headers, `pull request #${n}`));
  const reviews = await readPages(get, `${base}/repos/${repo}/pulls/${n}/reviews?per_page=100`, headers, `the reviews of pull request #${n}`, base);
  const approvals: Approval[] = [];
  const latest = new Map<string, Approval | null>();
  const withdrawn = new Map<string, string>();
  for (const raw of reviews) {
    const r = obj(raw);
    const reviewer = obj(r.user);
    const user = str(reviewer.login);
    const state = str(r.state)?.toUpperCase();
    if (!user || !state) continue;
    const excluded = githubExcluded(reviewer, user, str(r.author_association));
    const a: Approval = { user, at: str(r.submitted_at), commit: str(r.commit_id), ...(excluded ? { excluded } : {}) };
    if (state === "APPROVED") approvals.push(a);
    if (state === "APPROVED" || state === "CHANGES_REQUESTED" || state === "DISMISSED") {
      const key = user.toLowerCase();
      if (state === "CHANGES_REQUESTED" && latest.get(key)) withdrawn.set(key, user);
      else withdrawn.delete(key);
      latest.set(key, state === "APPROVED" ? a : null);
    }
  }
  const head = str(obj(pr.head).sha);
  const made = head ? await githubHeadBy(get, headers, base, repo, n, head) : { headBy: [] };
  const merge = str(pr.merge_commit_sha);
  return {
    author: str(obj(pr.user).login),
    head,
    merges: merge ? [merge] : [],
    approvals,
    standing: [...latest.values()].filter((a): a is Approval => a !== null),
    ...(withdrawn.size ? { withdrawn: [...withdrawn.values()] } : {}),
    ...made,
  };
}

/** Who made a pull request's head commit: the GitHub users its commit list names as the head's author and
 *  committer. A head the list does not hold (GitHub lists at most 250 commits), or an author or committer
 *  GitHub names no user for (an e-mail linked to no account), leaves who made it unknown. */
async function githubHeadBy(
  get: ForgeGet,
  headers: Record<string, string>,
  base: string,
  repo: string,
  n: number,
  head: string,
): Promise<{ headBy: string[]; headByNote?: string }> {
  const commits = await readPages(get, `${base}/repos/${repo}/pulls/${n}/commits?per_page=100`, headers, `the commits of pull request #${n}`, base);
  const commit = commits.map(obj).find((c) => str(c.sha) === head);
  if (!commit) return { headBy: [], headByNote: `its head commit ${head.slice(0, 12)} is not among the commits the API lists for it (it lists at most 250)` };
  const by = (["author", "committer"] as const).map((role) => ({ role, login: str(obj(commit[role]).login) }));
  const unknown = by.filter((b) => !b.login).map((b) => b.role);
  return {
    headBy: [...new Set(by.flatMap((b) => (b.login ? [b.login] : [])))],
    ...(unknown.length
      ? {
          headByNote: `GitHub names no user as the ${unknown.join(" and ")} of its head commit ${head.slice(0, 12)} (the commit's e-mail is linked to no account)`,
        }
      : {}),
  };
}

/** GitLab's own users that are bots by their user names, for an instance whose users API does not say
 *  `bot`: a project's or group's access token (project_42_bot_…, group_7_bot_…), a service account. */
const GITLAB_BOT_NAME = /^(?:(?:project|group)_\d+_bot(?:_|\d|$)|service_account_)/i;

/** GitLab: the merge request (author.username; its head, sha; merge_commit_sha and squash_commit_sha, the
 *  commits its merge made), its approvals (approved_by: each user.id, user.username, and approved_at where
 *  the version says), each approver's user record (bot) and the project's approval settings. GitLab does
 *  not say which commit an approval was given on: an approval is of the head only when the project
 *  removes approvals on every push (reset_approvals_on_push); otherwise the commit is unknown and the
 *  approval does not count. GitLab names no user who pushed a commit either: an approval is independent
 *  of who made the head only when the project refuses approvals by users who add commits
 *  (merge_requests_disable_committers_approval). GitLab lets only users with at least the Developer role
 *  approve, so write access is its own check. */
async function readGitlab(get: ForgeGet, env: NodeJS.ProcessEnv, n: number): Promise<Read> {
  const base = (env.CI_API_V4_URL ?? "").replace(/\/+$/, "");
  if (!base) throw new ForgeError("CI_API_V4_URL is not set, so the merge request cannot be found");
  const project = env.CI_PROJECT_ID;
  if (!project) throw new ForgeError("CI_PROJECT_ID is not set, so the merge request cannot be found");
  const token = env.GITLAB_API_TOKEN;
  if (!token) throw new ForgeError("GITLAB_API_TOKEN is not set: set it as a masked CI/CD variable (api or read_api scope)");
  const headers = { "private-token": token, accept: "application/json", "user-agent": "revsync" };
  const at = `${base}/projects/${encodeURIComponent(project)}`;
  const mr = obj(await getWhole(get, `${at}/merge_requests/${n}`, headers, `merge request !${n}`));
  const body = obj(await getWhole(get, `${at}/merge_requests/${n}/approvals`, headers, `the approvals of merge request !${n}`));
  let reset = false;
  let commitNote: string | undefined;
  let headByNote: string | undefined;
  try {
    const settings = obj(await getWhole(get, `${at}/approvals`, headers, "the project's approval settings"));
    reset = settings.reset_approvals_on_push === true;
    if (!reset)
      commitNote =
        "the project keeps approvals when commits are pushed (reset_approvals_on_push is off), so an approval may be of an older commit: turn on removing all approvals when commits are added";
    if (settings.merge_requests_disable_committers_approval !== true)
      headByNote =
        "the project lets users who add commits approve (merge_requests_disable_committers_approval is off), and GitLab names no user who pushed a commit: turn on preventing approvals by users who add commits";
  } catch (e) {
    if (!(e instanceof ForgeError)) throw e;
    commitNote = `${e.message}, so which commit each approval is of is unknown`;
    headByNote = `${e.message}, so whether a user who added commits may have approved is unknown`;
  }
  const head = str(mr.sha);
  const approvals: Approval[] = [];
  for (const raw of Array.isArray(body.approved_by) ? body.approved_by : []) {
    const a = obj(raw);
    const u = obj(a.user);
    const user = str(u.username);
    if (!user) continue;
    const excluded = await gitlabBot(get, headers, base, u, user);
    approvals.push({ user, at: str(a.approved_at), commit: reset ? head : null, ...(excluded ? { excluded } : {}) });
  }
  return {
    author: str(obj(mr.author).username),
    head,
    merges: [str(mr.merge_commit_sha), str(mr.squash_commit_sha)].filter((s): s is string => !!s),
    approvals,
    standing: approvals,
    headBy: [],
    ...(commitNote ? { commitNote } : {}),
    ...(headByNote ? { headByNote } : {}),
  };
}

/** Why a GitLab approver does not count whoever wrote the change, if it does not: a bot, as its user
 *  record says (`bot`) or its user name shows; a user whose record cannot be read is not counted either. */
async function gitlabBot(get: ForgeGet, headers: Record<string, string>, base: string, u: Record<string, unknown>, user: string): Promise<string | undefined> {
  if (u.bot === true || GITLAB_BOT_NAME.test(user)) return "a bot";
  const id = typeof u.id === "number" && Number.isSafeInteger(u.id) ? u.id : null;
  if (id === null) return "GitLab does not say which user this is (no user id), so whether it is a bot is unknown";
  try {
    return obj(await getWhole(get, `${base}/users/${id}`, headers, `the user ${user}`)).bot === true ? "a bot" : undefined;
  } catch (e) {
    if (!(e instanceof ForgeError)) throw e;
    return `${e.message}, so whether it is a bot is unknown`;
  }
}

/** Whether what the forge said holds the rule (docs/decisions.md, "Four eyes"): an approval standing now
 *  by someone independent of the change (not its author, not a bot, with write access, not who made its
 *  head commit), given on the head commit (the commit approved), and the commit applied is that head or
 *  a commit the merge of it made. What the forge could not say (who made the head) fails it. Pure. */
export function judgeApproval(read: Read, applied: string | null, where: { provider: "github" | "gitlab"; number: number }): PullRequestApproval {
  const name = where.provider === "gitlab" ? `merge request !${where.number}` : `pull request #${where.number}`;
  const short = (c: string | null): string => (c ? c.slice(0, 12) : "unknown");
  /** Why an approver does not count whatever commit they approved, if they do not. */
  const excluded = (a: Approval): string | undefined =>
    sameUser(a.user, read.author)
      ? "the author"
      : (a.excluded ?? (read.headBy.some((u) => sameUser(u, a.user)) ? `made the head commit ${short(read.head)}` : undefined));
  const others = read.standing.filter((a) => !sameUser(a.user, read.author));
  const counting = others.filter((a) => !excluded(a));
  const atHead = counting.filter((a) => !!read.head && a.commit === read.head);
  let problem: string | null = null;
  if (!read.author) problem = `the forge does not say who wrote ${name}`;
  else if (!read.head) problem = `the forge does not say which commit ${name} holds`;
  else if (!others.length) {
    const withdrawn = (read.withdrawn ?? []).filter((u) => !sameUser(u, read.author));
    problem = read.standing.length
      ? `${name} is approved only by its author, ${read.author}: it needs an approval by someone else`
      : withdrawn.length
        ? `${name}'s approval was withdrawn: ${withdrawn.map((u) => `${u} approved, then requested changes`).join("; ")}; it needs an approval standing now by someone other than its author, ${read.author}`
        : `${name} has no approval: it needs one by someone other than its author, ${read.author}`;
  } else if (read.headByNote) problem = `${name} is approved, but ${read.headByNote}: no approval can be shown to be by someone other than who made its head`;
  else if (!counting.length)
    problem = `${name} has no approval that counts (${others.map((a) => `${a.user}: ${excluded(a)}`).join("; ")}): it needs one by someone other than its author, ${read.author}, who has write access, is not a bot and did not make its head commit`;
  else if (!atHead.length)
    problem = read.commitNote
      ? `${name} is approved by ${counting.map((a) => a.user).join(", ")}, but ${read.commitNote}`
      : `${name} was approved by ${counting.map((a) => a.user).join(", ")} at an older commit (${[...new Set(counting.map((a) => short(a.commit)))].join(", ")}), not at its head ${short(read.head)}: the change applied is not the one approved`;
  else if (!applied) problem = "the commit this run applies is unknown (no git HEAD, no CI commit)";
  else if (applied !== read.head && !read.merges.includes(applied))
    problem = `the commit applied, ${short(applied)}, is neither the approved head ${short(read.head)} of ${name} nor the commit its merge made (${read.merges.map(short).join(", ") || "none yet"})`;
  return {
    provider: where.provider,
    number: where.number,
    author: read.author,
    head_commit: read.head,
    head_commit_by: read.headBy,
    merge_commits: read.merges,
    applied_commit: applied,
    approvals: read.approvals.map((a) => {
      const why = excluded(a);
      return { user: a.user, at: a.at, commit: a.commit, ...(why ? { excluded: why } : {}) };
    }),
    independent: atHead.map((a) => a.user),
    holds: problem === null,
    problem,
  };
}

/** The pull (merge) request's approval, read from GitHub's reviews API or GitLab's approvals API with the
 *  token the CI recipes pass (GITHUB_TOKEN, GITLAB_API_TOKEN), at the API the CI names (GITHUB_API_URL,
 *  CI_API_V4_URL), and judged against the commit applied. A failure to read is the record's problem, in
 *  words (the rule then does not hold). */
export async function pullRequestApproval(ci: CiContext, env: NodeJS.ProcessEnv, applied: string | null, get: ForgeGet): Promise<PullRequestApproval> {
  const empty = (number: number | null, problem: string): PullRequestApproval => ({
    provider: ci.provider,
    number,
    author: null,
    head_commit: null,
    merge_commits: [],
    applied_commit: applied,
    approvals: [],
    independent: [],
    holds: false,
    problem,
  });
  const n = ci.pull_request;
  if (n === null)
    return empty(
      null,
      `this ${ci.provider === "gitlab" ? "pipeline" : "run"} names no ${ci.provider === "gitlab" ? "merge" : "pull"} request (the CI recipes set REVSYNC_PULL_REQUEST to the one merged)`,
    );
  try {
    const read = ci.provider === "gitlab" ? await readGitlab(get, env, n) : await readGithub(get, env, n);
    return judgeApproval(read, applied, { provider: ci.provider, number: n });
  } catch (e) {
    if (e instanceof ForgeError) return empty(n, e.message);
    throw e;
  }
}
