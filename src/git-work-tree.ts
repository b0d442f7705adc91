import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";

/** The variables by which git finds a repository other than by looking for one from its working folder
 *  up (GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR, GIT_OBJECT_DIRECTORY), or looks differently
 *  (GIT_CEILING_DIRECTORIES, GIT_DISCOVERY_ACROSS_FILESYSTEM): with any of them set, only git itself can
 *  tell. */
const DISCOVERY_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_OBJECT_DIRECTORY",
  "GIT_CEILING_DIRECTORIES",
  "GIT_DISCOVERY_ACROSS_FILESYSTEM",
];

/** Whether anything stands at `path` (a dangling link included). Without an exception per missing
 *  entry: most are missing. */
const exists = (path: string): boolean => {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    // No permission to look: there may be one; git tells.
    return true;
  }
};

/** Whether git, started in `dir` with `env`, could find a repository there: false only when certain
 *  that it cannot, that is when neither `dir` (its real path, as git sees it) nor any folder above it
 *  holds a `.git` (folder, file or link) or is itself a repository's folder (holds a HEAD: a bare
 *  repository, or inside one's .git), and no variable changes how git looks. Starting a process from a
 *  large Node process costs some 10 to 20 ms (more on a loaded machine); the folders revsync runs in are
 *  often in no repository at all. A folder that cannot be read (gone, no permission) is left to git. */
export function mayBeInGitRepository(dir: string, env: NodeJS.ProcessEnv): boolean {
  if (DISCOVERY_VARIABLES.some((v) => env[v] !== undefined)) return true;
  return nearestMark(dir) !== null;
}

/** The nearest folder at or above `dir` (its real path) that holds a `.git` (folder, file or link) or a
 *  `HEAD`, and which; null when none does, undefined when `dir` cannot be resolved (gone, no permission). */
function nearestMark(dir: string): { at: string; mark: ".git" | "HEAD" } | null | undefined {
  let at: string;
  try {
    at = realpathSync(dir);
  } catch {
    return undefined;
  }
  for (;;) {
    if (exists(join(at, ".git"))) return { at, mark: ".git" };
    if (exists(join(at, "HEAD"))) return { at, mark: "HEAD" };
    const up = dirname(at);
    if (up === at) return null;
    at = up;
  }
}

/** Whether a `git` program is on the PATH of `env` (where a child process started with that
 *  environment looks for it; without one, where the system looks by default): when it is not, starting
 *  git fails with ENOENT. */
export function gitOnPath(env: NodeJS.ProcessEnv): boolean {
  const path = env.PATH ?? env.Path ?? (process.platform === "win32" ? "" : "/usr/bin:/bin");
  const names = process.platform === "win32" ? ["git.exe", "git.cmd", "git.bat", "git"] : ["git"];
  for (const folder of path.split(delimiter))
    for (const name of names) {
      try {
        if (statSync(join(folder || ".", name), { throwIfNoEntry: false })?.isFile()) return true;
      } catch {
        /* not here (a PATH entry that is not a folder) */
      }
    }
  return false;
}

/** The failure of a git process that was not started: as git not installed (ENOENT), or git's exit
 *  code 128 for "not a git repository", as the callers tell them apart. */
export function notARepositoryError(env: NodeJS.ProcessEnv): NodeJS.ErrnoException {
  const missing = !gitOnPath(env);
  const e: NodeJS.ErrnoException = new Error(missing ? "spawn git ENOENT" : "fatal: not a git repository (or any of the parent directories): .git");
  (e as { code?: unknown }).code = missing ? "ENOENT" : 128;
  return e;
}

/** The top folder of the work tree git would find from `dir` (its real path, as `git rev-parse
 *  --show-toplevel` prints it), read from the file system: the nearest folder at or above `dir` that holds
 *  a `.git` folder git takes for a repository whose config sets no work tree elsewhere (plainGitFolder).
 *  Undefined when only git can tell: a variable that
 *  changes how git looks, a `.git` file (a linked work tree, a submodule), a config that names the work
 *  tree elsewhere or cannot be read, a bare repository, or no repository at all. Saves starting git (10
 *  to 20 ms from a large Node process) in the common case. */
export function workTreeTop(dir: string, env: NodeJS.ProcessEnv): string | undefined {
  if (DISCOVERY_VARIABLES.some((v) => env[v] !== undefined)) return undefined;
  const found = nearestMark(dir);
  return found?.mark === ".git" && plainGitFolder(join(found.at, ".git")) ? found.at : undefined;
}

/** Whether `dotGit` is a folder (not a link, not a file) that git takes for a repository (a HEAD, an
 *  objects and a refs folder: git passes over a `.git` without them and looks further up) and whose
 *  config can name no work tree elsewhere: no `worktree` key anywhere in it (a section line may carry
 *  one: `[core] worktree = ..`), no per-work-tree config (extensions.worktreeConfig, config.worktree),
 *  not bare. Anything else is left to git. */
function plainGitFolder(dotGit: string): boolean {
  try {
    if (!lstatSync(dotGit).isDirectory()) return false;
    if (!["HEAD", "objects", "refs"].every((name) => exists(join(dotGit, name)))) return false;
    if (exists(join(dotGit, "config.worktree"))) return false;
    const config = readFileSync(join(dotGit, "config"), "utf8");
    const names = /(^|\])\s*(worktree|worktreeconfig)\s*=/im.test(config);
    const bare = /(^|\])\s*bare\s*=\s*(true|yes|on|1)\s*$/im.test(config);
    // An included file may set any of these.
    return !names && !bare && !/\[\s*include/i.test(config);
  } catch {
    return false;
  }
}
