import { execFile } from "node:child_process";
import { realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { mayBeInGitRepository, notARepositoryError, workTreeTop } from "../git-work-tree.js";
import type { CiContext, NotClean } from "./record.js";

/** git's output, run in `cwd`; in a folder git cannot find a repository from, git's failure without
 *  starting it. */
function run(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (!mayBeInGitRepository(cwd, env)) return Promise.reject(notARepositoryError(env));
  return new Promise((resolve, reject) => {
    execFile("git", args, { cwd, timeout: 10_000, maxBuffer: 16 * 1024 * 1024, env: { ...env, GIT_OPTIONAL_LOCKS: "0" } }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

/** How many of the paths that are not clean a record lists (the rest are counted). */
export const NOT_CLEAN_LISTED = 50;

/** What `git status` said of the policy repo once in a command (apply), for all who ask during it: the
 *  commit, what is not clean, what git does not hold (ignored folders named, not walked), from `root`,
 *  the evidence folder left out when it lies inside. Each question it cannot answer exactly as its own
 *  git status would (a path under an ignored folder or the evidence folder, a rename, a top folder only
 *  git knows) is asked of git as before. One process where there were up to five. */
export class TreeStatus {
  private status: Promise<string> | undefined;
  readonly exclude: string;

  constructor(
    readonly root: string,
    evidenceDir: string | undefined,
    readonly env: NodeJS.ProcessEnv,
  ) {
    const inside = evidenceDir === undefined ? "" : relative(root, evidenceDir);
    this.exclude = inside && !inside.startsWith("..") && !isAbsolute(inside) ? inside : "";
  }

  /** git's answer, asked once. */
  read(): Promise<string> {
    const exclude = this.exclude ? [`:(exclude)${this.exclude}`] : [];
    this.status ??= run(
      ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--ignored=matching", "--", ".", ...exclude],
      this.root,
      this.env,
    );
    return this.status;
  }

  /** The entries, top-relative, with the top folder and `root`'s place under it; undefined when only git
   *  can name the top folder. Rejects as git did. */
  async entries(): Promise<{ entries: string[]; top: string; under: string } | undefined> {
    const entries = (await this.read()).split("\0");
    const top = workTreeTop(this.root, this.env);
    return top === undefined ? undefined : { entries, top, under: relative(top, realOr(this.root)) };
  }
}

/** Whether top-relative path `p` lies at or under `spec` (a folder or file, top-relative; "" the top). */
const within = (p: string, spec: string): boolean => {
  const rel = relative(spec || ".", p.replace(/\/$/, "") || ".");
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/** The commit the policy repo is at and whether its working tree is clean (the evidence folder itself
 *  left out, when it lies inside), and when it is not, which paths (the first NOT_CLEAN_LISTED, and how
 *  many in all), each marked when it is a policy or values file (`policyPaths`: revsync.yaml and the
 *  policies folder, from `root`): git as a child process; "unknown" (null, with a note) when git is
 *  missing or the folder is not a repository. `env`: the run's environment, git's own (PATH, HOME). */
export async function gitState(
  root: string,
  evidenceDir: string,
  env: NodeJS.ProcessEnv,
  policyPaths: readonly string[] = [],
  tree: TreeStatus = new TreeStatus(root, evidenceDir, env),
): Promise<{ commit: string | null; clean: boolean | null; note?: string; not_clean?: NotClean[]; not_clean_total?: number }> {
  // One process: the porcelain v2 header names the commit (branch.oid), the entries what is not committed
  // (what git ignores left out: a clean tree holds ignored files).
  let status: string;
  try {
    status = (await tree.read())
      .split("\0")
      .filter((e) => !e.startsWith("! "))
      .join("\0");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { commit: null, clean: null, note: code === "ENOENT" ? "git is not installed" : "not a git repository" };
  }
  const entries = status.split("\0");
  const oid = entries.map((e) => /^# branch\.oid (\S+)$/.exec(e)?.[1]).find((x) => x);
  const found = statusEntries(entries);
  const clean = !found.length;
  const dirty = clean ? {} : await notClean(root, found, policyPaths, env);
  if (!oid || oid === "(initial)") return { commit: null, clean, note: "the repository has no commit yet", ...dirty };
  return { commit: oid, clean, ...dirty };
}

/** The entries of `git status --porcelain=v2 -z`: each path and what became of it. */
function statusEntries(entries: readonly string[]): { path: string; what: string }[] {
  const found: { path: string; what: string }[] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] ?? "";
    // A path is outside text: any byte but NUL, a newline included (-z frames it; `s` lets . match it).
    const ordinary = /^1 (\S\S)(?: \S+){6} (.+)$/s.exec(e);
    const renamed = /^2 (\S\S)(?: \S+){7} (.+)$/s.exec(e);
    const other = /^([?!]) (.+)$/s.exec(e);
    if (ordinary?.[1] && ordinary[2]) found.push({ path: ordinary[2], what: changeWords(ordinary[1]) });
    else if (renamed?.[1] && renamed[2]) {
      found.push({ path: renamed[2], what: changeWords(renamed[1]) });
      i++; // its former path follows
    } else if (/^u /.test(e)) found.push({ path: e.split(" ").slice(10).join(" "), what: "not merged" });
    else if (other?.[2]) found.push({ path: other[2], what: other[1] === "!" ? "ignored by git" : "untracked" });
    // An entry of a form not known here is not taken for clean.
    else if (e && !e.startsWith("# ")) found.push({ path: e, what: "not clean (an entry git status gave in a form revsync does not know)" });
  }
  return found;
}

/** The paths that are not clean, from `root`, each marked when revsync reads it as policy: those first,
 *  then the others, each in path order; the first NOT_CLEAN_LISTED, and how many in all. */
async function notClean(
  root: string,
  found: { path: string; what: string }[],
  policyPaths: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ not_clean: NotClean[]; not_clean_total: number }> {
  const top = await topFolder(root, env);
  const from = realOr(root);
  const isPolicy = (p: string): boolean =>
    policyPaths.some((pp) => {
      const rel = relative(pp || ".", p);
      return rel === "" ? true : !rel.startsWith("..") && !isAbsolute(rel) && POLICY_FILE.test(p);
    });
  const all = found
    .map((f) => {
      const path = relative(from, join(top, f.path)) || f.path;
      return { path, what: f.what, policy: isPolicy(path) };
    })
    // The files revsync reads as policy first, so that no number of other files hides one of them.
    .sort((a, b) => (a.policy !== b.policy ? (a.policy ? -1 : 1) : a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { not_clean: all.slice(0, NOT_CLEAN_LISTED), not_clean_total: all.length };
}

/** The files among `files` (paths from `cwd`) that git does not hold: untracked, or ignored (which
 *  `git status` leaves out of a clean tree). Files that do not exist are not named. Empty when git
 *  cannot tell (no git, not a repository). */
export async function uncommittedFiles(cwd: string, files: string[], env: NodeJS.ProcessEnv, tree?: TreeStatus): Promise<string[]> {
  if (!files.length) return [];
  let status: string;
  try {
    status =
      (tree && (await fromTree(tree, (t) => treeUncommitted(t, tree, cwd, files)))) ??
      (await run(["status", "--porcelain=v2", "--untracked-files=all", "--ignored=matching", "-z", "--", ...files.map((f) => `:(literal)${f}`)], cwd, env));
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of status.split("\0")) {
    const m = /^([?!]) (.+)$/.exec(entry);
    if (m?.[2]) out.push(`${m[2]} (${m[1] === "!" ? "ignored by git" : "untracked"})`);
  }
  return out;
}

/** The repository's top folder, from which git names the files it lists (it may lie above revsync's):
 *  read from the file system where that is certain, else git's answer; `root` when git cannot tell. */
async function topFolder(root: string, env: NodeJS.ProcessEnv): Promise<string> {
  const known = workTreeTop(root, env);
  if (known) return known;
  try {
    return (await run(["rev-parse", "--show-toplevel"], root, env)).trim() || root;
  } catch {
    return root;
  }
}

/** A question answered from `tree` (git's status text of those entries alone), or undefined when it
 *  cannot be exactly: git is asked then. Rejects as git did. */
async function fromTree(tree: TreeStatus, answer: (t: { entries: string[]; top: string; under: string }) => string[] | undefined): Promise<string | undefined> {
  const t = await tree.entries();
  const kept = t && answer(t);
  return kept && kept.join("\0");
}

/** The entries of `git status -- PATHS` (top-relative `specs`), from the whole tree's: the header and
 *  each entry under one of them; undefined where they could differ (a rename, which a narrower status
 *  sees as an add; an ignored folder, which a narrower one walks). */
function narrowed(t: { entries: string[] }, specs: string[], exclude: string | undefined): string[] | undefined {
  if (exclude !== undefined && specs.some((p) => within(p, exclude) || within(exclude, p))) return undefined;
  const kept: string[] = [];
  for (const e of t.entries) {
    if (e.startsWith("# ")) kept.push(e);
    else if (e.startsWith("2 ")) return undefined;
    else if (!e) continue;
    else {
      const path = statusEntries([e])[0]?.path ?? e;
      const folder = e.startsWith("! ") && path.endsWith("/");
      if (folder && specs.some((p) => within(p, path) || within(path, p))) return undefined;
      if (specs.some((p) => within(path, p))) kept.push(e);
    }
  }
  return kept;
}

/** changedPolicyFiles' status from the tree's: `paths` from the tree's root. */
function treePolicyFiles(t: { entries: string[]; under: string }, tree: TreeStatus, paths: string[]): string[] | undefined {
  if (paths.some((p) => isAbsolute(p) || relative(".", p).startsWith(".."))) return undefined;
  return narrowed(
    t,
    paths.map((p) => join(t.under, p)),
    tree.exclude ? join(t.under, tree.exclude) : undefined,
  );
}

/** uncommittedFiles' status from the tree's: `files` from `cwd`, each one under the tree's root. */
function treeUncommitted(t: { entries: string[]; top: string }, tree: TreeStatus, cwd: string, files: string[]): string[] | undefined {
  const specs = files.map((f) => relative(t.top, resolve(realOr(cwd), f)));
  const root = relative(t.top, realOr(tree.root));
  if (specs.some((p) => isAbsolute(p) || p.startsWith("..") || !within(p, root))) return undefined;
  const kept = narrowed(t, specs, tree.exclude ? join(root, tree.exclude) : undefined);
  return kept?.filter((e) => specs.includes(statusEntries([e])[0]?.path ?? ""));
}

/** A folder's real path (git names files by real paths), or the folder as given. */
function realOr(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** What became of a file in the working tree, as `git status` says it (porcelain v2: XY, staged then not). */
function changeWords(xy: string): string {
  const c = xy[1] !== "." ? xy[1] : xy[0];
  return c === "D" ? "deleted" : c === "A" ? "added" : c === "R" || c === "C" ? "renamed" : "modified";
}

/** The files read as policy (revsync.yaml's folder of policy files, values files) are these. */
const POLICY_FILE = /\.(ya?ml|csv)$/i;

/** The policy files that differ from the commit the repository is at, each with what differs, as paths
 *  from `cwd`: under `paths` (revsync.yaml and the policies folder, from `root`), every file git holds
 *  that is changed, added or deleted (staged or not), and the YAML and CSV files git does not hold
 *  (untracked, or ignored). `commit`: the commit (null when git cannot tell, or there is none yet). Empty
 *  when git cannot tell (no git, not a repository): one git process, two when something differs and the top folder is not plain from the file system. */
export async function changedPolicyFiles(
  root: string,
  paths: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  tree?: TreeStatus,
): Promise<{ commit: string | null; files: string[] }> {
  let status: string;
  try {
    const specs = paths.map((p) => `:(literal)${p}`);
    status =
      (tree?.root === root && (await fromTree(tree, (t) => treePolicyFiles(t, tree, paths)))) ||
      (await run(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--ignored=traditional", "--", ...specs], root, env));
  } catch {
    return { commit: null, files: [] };
  }
  const entries = status.split("\0");
  const oid = entries.map((e) => /^# branch\.oid (\S+)$/.exec(e)?.[1]).find((x) => x);
  // Of what git does not hold, only the YAML and CSV files: what revsync could read as policy.
  const found = statusEntries(entries).filter((f) => (f.what !== "untracked" && f.what !== "ignored by git") || POLICY_FILE.test(f.path));
  const commit = oid && oid !== "(initial)" ? oid : null;
  if (!found.length) return { commit, files: [] };
  const top = await topFolder(root, env);
  const from = realOr(cwd);
  found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { commit, files: found.map((f) => `${relative(from, join(top, f.path)) || f.path} (${f.what})`) };
}

const nonEmpty = (v: string | undefined): string | null => (v && v.trim() ? v : null);
const number = (v: string | undefined | null): number | null => (v && /^\d+$/.test(v) ? Number(v) : null);

/** The CI run this apply is part of, from the variables GitHub Actions and GitLab CI set; null elsewhere.
 *  The pull request of a GitHub run is read from its ref (refs/pull/N/merge) or its event file. An
 *  apply on merge runs for a push, which names no pull request: REVSYNC_PULL_REQUEST, set by the CI
 *  recipes to the pull (merge) request that was merged, names it then, and wins over what the run's own
 *  variables say. */
export function ciContext(env: NodeJS.ProcessEnv, readEvent: (path: string) => unknown = () => undefined): CiContext | null {
  const ctx = ciOwnContext(env, readEvent);
  const given = number(env.REVSYNC_PULL_REQUEST?.trim().replace(/^[#!]/, ""));
  return ctx && given !== null ? { ...ctx, pull_request: given } : ctx;
}

function ciOwnContext(env: NodeJS.ProcessEnv, readEvent: (path: string) => unknown): CiContext | null {
  if (env.GITHUB_ACTIONS === "true") {
    const server = env.GITHUB_SERVER_URL ?? "https://github.com";
    const run =
      env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID
        ? `${server}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}${env.GITHUB_RUN_ATTEMPT ? `/attempts/${env.GITHUB_RUN_ATTEMPT}` : ""}`
        : null;
    let pr = number(/^refs\/pull\/(\d+)\//.exec(env.GITHUB_REF ?? "")?.[1]);
    if (pr === null && env.GITHUB_EVENT_PATH) {
      const event = readEvent(env.GITHUB_EVENT_PATH) as { pull_request?: { number?: unknown }; number?: unknown } | undefined;
      const n = event?.pull_request?.number ?? undefined;
      pr = typeof n === "number" ? n : null;
    }
    return {
      provider: "github",
      run_url: run,
      actor: nonEmpty(env.GITHUB_TRIGGERING_ACTOR) ?? nonEmpty(env.GITHUB_ACTOR),
      pull_request: pr,
      commit: nonEmpty(env.GITHUB_SHA),
      ref: nonEmpty(env.GITHUB_REF),
      workflow: nonEmpty(env.GITHUB_WORKFLOW),
      event: nonEmpty(env.GITHUB_EVENT_NAME),
    };
  }
  if (env.GITLAB_CI === "true") {
    return {
      provider: "gitlab",
      run_url: nonEmpty(env.CI_JOB_URL) ?? nonEmpty(env.CI_PIPELINE_URL),
      actor: nonEmpty(env.GITLAB_USER_LOGIN),
      pull_request: number(env.CI_MERGE_REQUEST_IID),
      commit: nonEmpty(env.CI_COMMIT_SHA),
      ref: nonEmpty(env.CI_COMMIT_REF_NAME),
      workflow: nonEmpty(env.CI_PROJECT_PATH),
      event: nonEmpty(env.CI_PIPELINE_SOURCE),
    };
  }
  return null;
}
