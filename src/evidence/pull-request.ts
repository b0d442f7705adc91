import { sameUser } from "../shared/who.js";
import type { CiContext, PullRequestApproval } from "./record.js";

/** One GET of the forge's API: its status, its JSON body (undefined when it is not JSON) and its Link
 *  header. Never throws for an answer; throws (an Error, in words) when no answer came. */
export type ForgeGet = (url: string, headers: Record<string, string>) => Promise<{ status: number; body: unknown; link?: string }>;

/** An approval as the forge gives it: who, when, and the commit it approves (null when the forge does not say). */
interface Approval {
  user: string;
  at: string | null;
  commit: string | null;
}

/** What the forge says of a pull (merge) request: its author, its head, the commits its merge made, its
 *  approvals; `commitNote`: why an approval's commit is unknown, when it is. */
interface Read {
  author: string | null;
  head: string | null;
  merges: string[];
  approvals: Approval[];
  /** Each user's approval standing now (the latest decisive review of each user, on GitHub). */
  standing: Approval[];
  commitNote?: string;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

class ForgeError extends Error {}

async function getJson(get: ForgeGet, url: string, headers: Record<string, string>, what: string): Promise<{ body: unknown; link?: string }> {
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

/** The next page of a GitHub list (its Link header's rel="next"), on the same API host only. */
function nextPage(link: string | undefined, base: string): string | undefined {
  const m = /<([^>]+)>\s*;\s*rel="next"/.exec(link ?? "");
  if (!m?.[1]) return undefined;
  try {
    return new URL(m[1]).origin === new URL(base).origin ? m[1] : undefined;
  } catch {
    return undefined;
  }
}

/** GitHub: the pull request (its author, user.login; its head, head.sha; merge_commit_sha, the commit its
 *  merge, squash or rebase made, or the test merge of an open one) and its reviews (each: user.login,
 *  state, submitted_at, commit_id, the head the review was given on), in order. A user's approval stands
 *  when their latest review that decides (APPROVED, CHANGES_REQUESTED, DISMISSED) is APPROVED. */
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
  const pr = obj((await getJson(get, `${base}/repos/${repo}/pulls/${n}`, headers, `pull request #${n}`)).body);
  const reviews: unknown[] = [];
  let url: string | undefined = `${base}/repos/${repo}/pulls/${n}/reviews?per_page=100`;
  for (let page = 0; url && page < 30; page++) {
    const r = await getJson(get, url, headers, `the reviews of pull request #${n}`);
    if (!Array.isArray(r.body)) throw new ForgeError(`the reviews of pull request #${n}: the API's answer is not a list`);
    reviews.push(...(r.body as unknown[]));
    url = nextPage(r.link, base);
  }
  const approvals: Approval[] = [];
  const latest = new Map<string, Approval | null>();
  for (const raw of reviews) {
    const r = obj(raw);
    const user = str(obj(r.user).login);
    const state = str(r.state)?.toUpperCase();
    if (!user || !state) continue;
    const a: Approval = { user, at: str(r.submitted_at), commit: str(r.commit_id) };
    if (state === "APPROVED") approvals.push(a);
    if (state === "APPROVED" || state === "CHANGES_REQUESTED" || state === "DISMISSED") latest.set(user.toLowerCase(), state === "APPROVED" ? a : null);
  }
  const merge = str(pr.merge_commit_sha);
  return {
    author: str(obj(pr.user).login),
    head: str(obj(pr.head).sha),
    merges: merge ? [merge] : [],
    approvals,
    standing: [...latest.values()].filter((a): a is Approval => a !== null),
  };
}

/** GitLab: the merge request (author.username; its head, sha; merge_commit_sha and squash_commit_sha, the
 *  commits its merge made) and its approvals (approved_by: each user.username, and approved_at where the
 *  version says). GitLab does not say which commit an approval was given on: an approval is of the head
 *  only when the project removes approvals on every push (reset_approvals_on_push of its approval
 *  settings); otherwise the commit is unknown and the approval does not count. */
async function readGitlab(get: ForgeGet, env: NodeJS.ProcessEnv, n: number): Promise<Read> {
  const base = (env.CI_API_V4_URL ?? "").replace(/\/+$/, "");
  if (!base) throw new ForgeError("CI_API_V4_URL is not set, so the merge request cannot be found");
  const project = env.CI_PROJECT_ID;
  if (!project) throw new ForgeError("CI_PROJECT_ID is not set, so the merge request cannot be found");
  const token = env.GITLAB_API_TOKEN;
  if (!token) throw new ForgeError("GITLAB_API_TOKEN is not set: set it as a masked CI/CD variable (api or read_api scope)");
  const headers = { "private-token": token, accept: "application/json", "user-agent": "revsync" };
  const at = `${base}/projects/${encodeURIComponent(project)}`;
  const mr = obj((await getJson(get, `${at}/merge_requests/${n}`, headers, `merge request !${n}`)).body);
  const body = obj((await getJson(get, `${at}/merge_requests/${n}/approvals`, headers, `the approvals of merge request !${n}`)).body);
  let reset: boolean | undefined;
  let commitNote: string | undefined;
  try {
    reset = obj((await getJson(get, `${at}/approvals`, headers, "the project's approval settings")).body).reset_approvals_on_push === true;
    if (!reset)
      commitNote =
        "the project keeps approvals when commits are pushed (reset_approvals_on_push is off), so an approval may be of an older commit: turn on removing all approvals when commits are added";
  } catch (e) {
    commitNote = `${(e as Error).message}, so which commit each approval is of is unknown`;
  }
  const head = str(mr.sha);
  const approvals: Approval[] = [];
  for (const raw of Array.isArray(body.approved_by) ? body.approved_by : []) {
    const a = obj(raw);
    const user = str(obj(a.user).username);
    if (user) approvals.push({ user, at: str(a.approved_at), commit: reset ? head : null });
  }
  return {
    author: str(obj(mr.author).username),
    head,
    merges: [str(mr.merge_commit_sha), str(mr.squash_commit_sha)].filter((s): s is string => !!s),
    approvals,
    standing: approvals,
    ...(commitNote ? { commitNote } : {}),
  };
}

/** Whether what the forge said holds the rule (docs/decisions.md, "Four eyes"): an approval standing now
 *  by someone other than the author, given on the head commit (the commit approved), and the commit
 *  applied is that head or a commit the merge of it made. Pure. */
export function judgeApproval(read: Read, applied: string | null, where: { provider: "github" | "gitlab"; number: number }): PullRequestApproval {
  const name = where.provider === "gitlab" ? `merge request !${where.number}` : `pull request #${where.number}`;
  const others = read.standing.filter((a) => !sameUser(a.user, read.author));
  const atHead = others.filter((a) => !!read.head && a.commit === read.head);
  const short = (c: string | null): string => (c ? c.slice(0, 12) : "unknown");
  let problem: string | null = null;
  if (!read.author) problem = `the forge does not say who wrote ${name}`;
  else if (!read.head) problem = `the forge does not say which commit ${name} holds`;
  else if (!others.length)
    problem = read.standing.length
      ? `${name} is approved only by its author, ${read.author}: it needs an approval by someone else`
      : `${name} has no approval: it needs one by someone other than its author, ${read.author}`;
  else if (!atHead.length)
    problem = read.commitNote
      ? `${name} is approved by ${others.map((a) => a.user).join(", ")}, but ${read.commitNote}`
      : `${name} was approved by ${others.map((a) => a.user).join(", ")} at an older commit (${[...new Set(others.map((a) => short(a.commit)))].join(", ")}), not at its head ${short(read.head)}: the change applied is not the one approved`;
  else if (!applied) problem = "the commit this run applies is unknown (no git HEAD, no CI commit)";
  else if (applied !== read.head && !read.merges.includes(applied))
    problem = `the commit applied, ${short(applied)}, is neither the approved head ${short(read.head)} of ${name} nor the commit its merge made (${read.merges.map(short).join(", ") || "none yet"})`;
  return {
    provider: where.provider,
    number: where.number,
    author: read.author,
    head_commit: read.head,
    merge_commits: read.merges,
    applied_commit: applied,
    approvals: read.approvals,
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
