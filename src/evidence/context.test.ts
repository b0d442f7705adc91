import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mayBeInGitRepository, workTreeTop } from "../git-work-tree.js";
import { commitAll } from "../testing/git-commit.js";
import { changedPolicyFiles, ciContext, gitState, TreeStatus, uncommittedFiles } from "./context.js";

/** The environment of a git on PATH that notes each start (a line in DIR/starts), then runs the real one. */
function countingGit(dir: string): NodeJS.ProcessEnv {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$1" >> "${join(dir, "starts")}"\nexec "${real}" "$@"\n`);
  chmodSync(join(bin, "git"), 0o755);
  return { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
}

describe("the commit of a record", () => {
  it("git's commit and a clean tree, the evidence folder left out; a change not committed; no repository: unknown, said why", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-git-"));
    try {
      expect(await gitState(dir, join(dir, "evidence"), process.env)).toEqual({ commit: null, clean: null, note: "not a git repository" });
      const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" }).trim();
      git("init", "-q");
      writeFileSync(join(dir, "revsync.yaml"), "version: 1\n");
      expect(await gitState(dir, join(dir, "evidence"), process.env, ["revsync.yaml", "policies"])).toEqual({
        commit: null,
        clean: false,
        note: "the repository has no commit yet",
        not_clean: [{ path: "revsync.yaml", what: "untracked", policy: true }],
        not_clean_total: 1,
      });
      const head = commitAll(dir, "x");
      mkdirSync(join(dir, "evidence"), process.env);
      writeFileSync(join(dir, "evidence", "r.json"), "{}");
      expect(await gitState(dir, join(dir, "evidence"), process.env)).toEqual({ commit: head, clean: true });
      writeFileSync(join(dir, "revsync.yaml"), "version: 1\n# changed\n");
      expect((await gitState(dir, join(dir, "evidence"), process.env)).clean).toBe(false);
      // Bounded: the first 50 paths, the files revsync reads as policy first (no number of other files
      // hides one), each group in path order, and how many in all.
      for (let i = 0; i < 60; i++) writeFileSync(join(dir, `n${String(i).padStart(2, "0")}.txt`), "");
      // A path is outside text: a newline in a file name is part of it, never a clean tree.
      mkdirSync(join(dir, "policies"));
      writeFileSync(join(dir, "policies", "nl\nx.yaml"), "");
      const many = await gitState(dir, join(dir, "evidence"), process.env, ["revsync.yaml", "policies"]);
      expect(many.not_clean).toHaveLength(50);
      expect(many.not_clean_total).toBe(62);
      expect(many.not_clean?.slice(0, 3)).toEqual([
        { path: "policies/nl\nx.yaml", what: "untracked", policy: true },
        { path: "revsync.yaml", what: "modified", policy: true },
        { path: "n00.txt", what: "untracked", policy: false },
      ]);
      rmSync(join(dir, "policies"), { recursive: true });
      for (let i = 0; i < 60; i++) rmSync(join(dir, `n${String(i).padStart(2, "0")}.txt`));
      git("checkout", "--", "revsync.yaml");
      writeFileSync(join(dir, "only\nnewline.yaml"), "");
      expect(await gitState(dir, join(dir, "evidence"), process.env)).toMatchObject({ clean: false, not_clean_total: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("git is not started where it cannot find a repository", () => {
  it("a folder with no .git above it: the same answers as git's own, git never started; in a repository git is asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-nogit-"));
    try {
      const env = countingGit(dir);
      // Any variable that changes how git looks leaves it to git: its answers then are today's, by git.
      const asked = { ...env, GIT_CEILING_DIRECTORIES: "" };
      const work = join(dir, "work");
      mkdirSync(work);
      writeFileSync(join(work, "revsync.yaml"), "version: 1\n");
      expect(mayBeInGitRepository(work, env)).toBe(false);
      const answers = async (e: NodeJS.ProcessEnv) => [
        await gitState(work, join(work, "evidence"), e, ["revsync.yaml"]),
        await changedPolicyFiles(work, ["revsync.yaml"], work, e),
        await uncommittedFiles(work, ["revsync.yaml"], e),
      ];
      const without = await answers(env);
      expect(existsSync(join(dir, "starts"))).toBe(false);
      expect(without).toEqual(await answers(asked));
      expect(without[0]).toEqual({ commit: null, clean: null, note: "not a git repository" });
      expect(existsSync(join(dir, "starts"))).toBe(true);
      // No git on PATH at all: "git is not installed", as starting it says.
      const none = { ...process.env, PATH: join(dir, "empty") };
      expect(await gitState(work, work, none)).toEqual(await gitState(work, work, { ...none, GIT_DIR: join(work, ".git") }));
      expect((await gitState(work, work, none)).note).toBe("git is not installed");
      // A repository's folder (a .git above) or a bare one (HEAD) is git's to answer.
      expect(mayBeInGitRepository(work, { ...env, GIT_DIR: "/x" })).toBe(true);
      writeFileSync(join(dir, "HEAD"), "ref: refs/heads/main\n");
      expect(mayBeInGitRepository(work, env)).toBe(true);
      rmSync(join(dir, "HEAD"));
      execFileSync("git", ["init", "-q"], { cwd: dir });
      expect(mayBeInGitRepository(work, env)).toBe(true);
      expect(await changedPolicyFiles(work, ["revsync.yaml"], work, env)).toEqual({ commit: null, files: ["revsync.yaml (untracked)"] });
      expect(mayBeInGitRepository(join(dir, "gone"), env)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the CI run of a record", () => {
  it("GitHub Actions: run URL with its attempt, the actor who triggered it, the pull request from the ref or the event file", () => {
    const env = {
      GITHUB_ACTIONS: "true",
      GITHUB_SERVER_URL: "https://github.example.com",
      GITHUB_REPOSITORY: "acme/policies",
      GITHUB_RUN_ID: "7",
      GITHUB_RUN_ATTEMPT: "2",
      GITHUB_ACTOR: "dana",
      GITHUB_TRIGGERING_ACTOR: "erin",
      GITHUB_REF: "refs/heads/main",
      GITHUB_SHA: "abc",
      GITHUB_EVENT_NAME: "pull_request_target",
      GITHUB_EVENT_PATH: "/event.json",
      GITHUB_WORKFLOW: "revsync apply",
    };
    expect(ciContext(env, () => ({ pull_request: { number: 12 } }))).toEqual({
      provider: "github",
      run_url: "https://github.example.com/acme/policies/actions/runs/7/attempts/2",
      actor: "erin",
      pull_request: 12,
      commit: "abc",
      ref: "refs/heads/main",
      workflow: "revsync apply",
      event: "pull_request_target",
    });
    expect(ciContext({ ...env, GITHUB_REF: "refs/pull/5/merge" }, () => undefined)?.pull_request).toBe(5);
    expect(ciContext({ ...env, GITHUB_EVENT_PATH: undefined }, () => undefined)?.pull_request).toBeNull();
  });

  it("GitLab CI: the job URL, the user, the merge request IID; elsewhere none", () => {
    expect(
      ciContext({
        GITLAB_CI: "true",
        CI_JOB_URL: "https://gitlab.example.com/acme/policies/-/jobs/9",
        CI_PIPELINE_URL: "https://gitlab.example.com/acme/policies/-/pipelines/3",
        GITLAB_USER_LOGIN: "dana",
        CI_MERGE_REQUEST_IID: "41",
        CI_COMMIT_SHA: "def",
        CI_COMMIT_REF_NAME: "main",
        CI_PROJECT_PATH: "acme/policies",
        CI_PIPELINE_SOURCE: "push",
      }),
    ).toEqual({
      provider: "gitlab",
      run_url: "https://gitlab.example.com/acme/policies/-/jobs/9",
      actor: "dana",
      pull_request: 41,
      commit: "def",
      ref: "main",
      workflow: "acme/policies",
      event: "push",
    });
    expect(ciContext({ CI: "true" })).toBeNull();
  });
});

describe("the repository's top folder, read from the file system", () => {
  it("is git's own answer where a plain .git folder is found; a .git file, a core.worktree or a variable that changes how git looks leave it to git", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-top-"));
    try {
      const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
      const sub = join(dir, "repo", "policies", "ssp");
      mkdirSync(sub, { recursive: true });
      expect(workTreeTop(sub, process.env)).toBeUndefined();
      git(join(dir, "repo"), "init", "-q");
      expect(workTreeTop(sub, process.env)).toBe(git(sub, "rev-parse", "--show-toplevel"));
      expect(workTreeTop(sub, { ...process.env, GIT_DIR: join(dir, "repo", ".git") })).toBeUndefined();
      git(join(dir, "repo"), "config", "core.worktree", dir);
      expect(workTreeTop(sub, process.env)).toBeUndefined();
      git(join(dir, "repo"), "config", "--unset", "core.worktree");
      writeFileSync(join(sub, ".git"), `gitdir: ${join(dir, "repo", ".git")}\n`);
      expect(workTreeTop(sub, process.env)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is left to git wherever git would look elsewhere: a per-work-tree core.worktree, a worktree on a section's line, a .git folder git passes over", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-top-"));
    try {
      const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
      const proj = join(dir, "proj");
      mkdirSync(proj);
      const layouts: [string, () => void][] = [
        [
          "config.worktree",
          () =>
            execFileSync("sh", ["-c", "git init -q && git config extensions.worktreeConfig true && git config --worktree core.worktree ../.."], { cwd: proj }),
        ],
        [
          "a section's line",
          () => {
            git(proj, "init", "-q");
            writeFileSync(join(proj, ".git", "config"), `[core] worktree = ../..\n\trepositoryformatversion = 0\n`);
          },
        ],
        [
          "a stray .git folder inside another repository",
          () => {
            git(dir, "init", "-q");
            mkdirSync(join(proj, ".git"));
            writeFileSync(join(proj, ".git", "config"), "[core]\n\tbare = false\n");
          },
        ],
      ];
      for (const [layout, make] of layouts) {
        rmSync(join(proj, ".git"), { recursive: true, force: true });
        rmSync(join(dir, ".git"), { recursive: true, force: true });
        make();
        // git's own answer is the outer folder; the file system alone cannot tell it.
        expect({ layout, git: git(proj, "rev-parse", "--show-toplevel") }).toEqual({ layout, git: dir });
        expect({ layout, top: workTreeTop(proj, process.env) }).toEqual({ layout, top: undefined });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("one git status for a whole apply", () => {
  it("answers gitState, changedPolicyFiles and uncommittedFiles as their own git status did, with git started once; an ignored folder or a rename among the policy files is asked of git", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-tree-"));
    try {
      const env = countingGit(dir);
      const starts = (): number => (existsSync(join(dir, "starts")) ? readFileSync(join(dir, "starts"), "utf8").split("\n").length - 1 : 0);
      const repo = join(dir, "repo");
      const root = join(repo, "revsync");
      mkdirSync(join(root, "policies", "ssp"), { recursive: true });
      const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=a", "-c", "user.email=a@example.com", ...args], { cwd: repo, encoding: "utf8" });
      writeFileSync(join(root, "revsync.yaml"), "version: 1\n");
      writeFileSync(join(root, "policies", "ssp", "a.yaml"), "a: 1\n");
      writeFileSync(join(root, "policies", "ssp", "b.yaml"), "b: 1\n");
      writeFileSync(join(repo, ".gitignore"), "*.local.yaml\nbuild/\n");
      commitAll(repo, "x");
      const paths = ["revsync.yaml", "policies"];
      const answers = async (tree?: TreeStatus) => [
        await gitState(root, join(root, "evidence"), env, paths, tree),
        await changedPolicyFiles(root, paths, root, env, tree),
        await uncommittedFiles(root, ["policies/ssp/a.yaml", "policies/x.local.yaml", "policies/new.yaml", "notes.txt"], env, tree),
      ];
      const same = async (): Promise<number> => {
        const before = starts();
        const once = await answers(new TreeStatus(root, join(root, "evidence"), env));
        const gits = starts() - before;
        expect(once).toEqual(await answers());
        return gits;
      };
      expect(await same()).toBe(1);
      // Changed, untracked and ignored files, in and out of the policies, and the evidence folder.
      writeFileSync(join(root, "policies", "ssp", "a.yaml"), "a: 2\n");
      writeFileSync(join(root, "policies", "x.local.yaml"), "x: 1\n");
      writeFileSync(join(root, "policies", "new.yaml"), "n: 1\n");
      writeFileSync(join(root, "notes.txt"), "n\n");
      mkdirSync(join(root, "evidence"));
      writeFileSync(join(root, "evidence", "r.json"), "{}");
      mkdirSync(join(repo, "build"));
      writeFileSync(join(repo, "build", "out.yaml"), "o: 1\n");
      expect(await same()).toBe(1);
      // An ignored folder among the policy files: git walks it for changedPolicyFiles, as before.
      mkdirSync(join(root, "policies", "build"));
      writeFileSync(join(root, "policies", "build", "c.yaml"), "c: 1\n");
      expect(await same()).toBeGreaterThan(1);
      rmSync(join(root, "policies", "build"), { recursive: true });
      // A rename, which a status of the policy files alone may see otherwise.
      git("mv", "revsync/policies/ssp/b.yaml", "revsync/policies/ssp/c.yaml");
      expect(await same()).toBeGreaterThan(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
