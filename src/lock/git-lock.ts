import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { TenantIdentity } from "../tenant.js";
import { holderState, releasedOf, thisProcessSpace } from "./local-lock.js";
import { LockUnavailable, type HolderState, type LockBackend, type LockHolder, type LockRequest, type Taken } from "./lock.js";

/** The tree of a lock commit: git's empty tree, which every repository knows without storing it. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
/** Each git command's own time limit: a remote that never answers must not hold an apply forever. */
const GIT_TIMEOUT_MS = 60_000;

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A URL's credentials (`https://user:token@host`) never reach a message: git may quote its remote's URL. */
export const withoutCredentials = (text: string): string =>
  text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi, "$1***@").replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s?#]*)[?#][^\s'"]*/gi, "$1?***");

/** The ref of a tenant's lock: a readable part (host, port, path, realm) and a hash of the tenant's
 *  identity (its normalised base URL and realm), so that every environment aimed at one tenant, however
 *  its URL is spelt, takes one lock. */
export function tenantLockRef(tenant: TenantIdentity): string {
  return `refs/revsync/tenant-locks/${tenant.label ? `${tenant.label}-` : ""}${tenant.key.slice(0, 16)}`;
}

/** The ref an earlier revsync kept an environment's lock under, by the environment's name: its name as
 *  it is when git takes it as a ref's last part, else hex (a name with spaces, dots at the ends or other
 *  characters a ref cannot hold). RenamedLock honours it while the change of names lasts. */
export function lockRef(environment: string): string {
  const plain =
    /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(environment) && !environment.endsWith(".lock") && !environment.includes("..") && !environment.endsWith(".");
  return `refs/revsync/locks/${plain ? environment : `x-${Buffer.from(environment, "utf8").toString("hex")}`}`;
}

/** The lock record a lock commit carries: its message, after the first line, is the record as JSON. */
function parseRecord(id: string, message: string, environment: string): LockHolder {
  const json = message.slice(message.indexOf("\n") + 1).trim();
  let r: Partial<LockHolder> = {};
  try {
    const v = JSON.parse(json) as unknown;
    if (v && typeof v === "object") r = v as Partial<LockHolder>;
  } catch {
    // Not a record revsync wrote: shown as what little is known.
  }
  const text = (v: unknown): string | null => (typeof v === "string" && v ? v : null);
  return {
    id,
    environment: text(r.environment) ?? environment,
    user: text(r.user),
    service_user: text(r.service_user),
    host: text(r.host) ?? "(unknown host)",
    pid: typeof r.pid === "number" ? r.pid : 0,
    ci_run_url: text(r.ci_run_url),
    since: text(r.since) ?? "(unknown)",
    plan_checksum: text(r.plan_checksum),
    revsync_version: text(r.revsync_version) ?? "(unknown)",
    ...(typeof r.request_deadline_ms === "number" ? { request_deadline_ms: r.request_deadline_ms } : {}),
    ...(releasedOf(r.released) ?? {}),
  };
}

/** The lock as a ref of the policy repo's git remote (refs/revsync/locks/<environment>), which every
 *  machine that applies (CI runners, a laptop) already reaches with the credentials it clones and pushes
 *  with. Taking it is a push that creates the ref only if it does not exist (--force-with-lease with an
 *  empty expected value: the remote updates refs atomically, so of two pushes at once one wins); releasing
 *  it deletes the ref only while it still names this lock's commit (a lease on the lock id). The lock
 *  commit (git's empty tree, no parent) carries the holder in its message. */
export class GitLock implements LockBackend {
  readonly kind = "git";
  readonly ref: string;
  readonly where: string;

  constructor(
    private readonly opts: {
      /** The policy repo: git runs here, with its remotes and credentials. */
      cwd: string;
      /** A remote's name or URL. */
      remote: string;
      environment: string;
      /** The lock's ref (default: the environment's, as an earlier revsync named it). */
      ref?: string;
      /** The run's environment (git's own: PATH, HOME, credential helpers, SSH agent). */
      env: NodeJS.ProcessEnv;
    },
  ) {
    this.ref = opts.ref ?? lockRef(opts.environment);
    this.where = `git remote ${withoutCredentials(opts.remote)}, ref ${this.ref}`;
  }

  /** Where, with the remote's URL as this clone has it (credentials blanked): `origin` means each clone's
   *  own origin, and a fork's is another repository, whose locks nobody else sees. */
  async describe(): Promise<string> {
    if (/[:/\\]/.test(this.opts.remote)) return this.where;
    const r = await this.git(["remote", "get-url", this.opts.remote]).catch(() => undefined);
    const url = r && r.code === 0 ? r.stdout.trim() : "";
    return url ? `git remote ${this.opts.remote} (${withoutCredentials(url)}), ref ${this.ref}` : this.where;
  }

  /** The holder: a git lock's process cannot be seen from here unless it runs on this host. */
  async live(): Promise<LockHolder | undefined> {
    const h = await this.holder();
    return h?.released ? undefined : h;
  }

  state(h: LockHolder): HolderState {
    return h.host === hostname() ? holderState(h, thisProcessSpace()) : "unknown";
  }

  private git(args: string[], extraEnv: Record<string, string> = {}): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        "git",
        args,
        {
          cwd: this.opts.cwd,
          timeout: GIT_TIMEOUT_MS,
          maxBuffer: 1024 * 1024,
          env: {
            ...this.opts.env,
            // Never a prompt (for a password, a passphrase): a lock that cannot be taken says so.
            GIT_TERMINAL_PROMPT: "0",
            GIT_OPTIONAL_LOCKS: "0",
            LC_ALL: "C",
            ...extraEnv,
          },
        },
        (err, stdout, stderr) => {
          if (err && (err as NodeJS.ErrnoException).code === "ENOENT") {
            reject(new LockUnavailable(`the lock of environment ${JSON.stringify(this.opts.environment)} is a ref of a git remote, and git is not installed`));
            return;
          }
          const killed = err && (err as { killed?: boolean }).killed;
          resolve({
            code: err ? (typeof (err as { code?: unknown }).code === "number" ? ((err as { code: number }).code ?? 1) : 1) : 0,
            stdout: String(stdout),
            stderr: withoutCredentials(String(stderr)) + (killed ? `\n(git ${args[0]} did not finish within ${GIT_TIMEOUT_MS / 1000}s)` : ""),
          });
        },
      );
      child.stdin?.end();
    });
  }

  /** git's own words for a failure, on one line. */
  private static said(r: GitResult): string {
    const lines = r.stderr
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !/^(To |Done$|hint:)/.test(l));
    return lines.join("; ") || `git exited ${r.code}`;
  }

  private unavailable(doing: string, r: GitResult): LockUnavailable {
    const env = JSON.stringify(this.opts.environment);
    const said = GitLock.said(r);
    if (/not a git repository/i.test(said))
      return new LockUnavailable(
        `cannot ${doing} the lock of environment ${env}: the policy repo (${this.opts.cwd}) is not a git repository, and the lock is a ref of its git remote`,
        "apply from a clone of the policy repo, or name another remote under lock: in revsync.yaml; --lock=false goes on without a lock (the evidence record says so)",
      );
    if (/does not appear to be a git repository|no such remote|No such file or directory/i.test(said))
      return new LockUnavailable(
        `cannot ${doing} the lock of environment ${env} in git remote ${JSON.stringify(withoutCredentials(this.opts.remote))}: ${said}`,
        "the lock is a ref of the policy repo's git remote, which every machine that applies reaches: add the remote (git remote add origin URL), or name one under lock: { remote: … } in revsync.yaml; --lock=false goes on without a lock (the evidence record says so)",
      );
    return new LockUnavailable(
      `cannot ${doing} the lock of environment ${env} (${this.where}): ${said}`,
      `taking the lock pushes the ref ${this.ref}: the credentials that run apply need push access to that remote (GitHub Actions: permissions: contents: write; GitLab CI: a token that can push, see the README's "CI recipes"); --lock=false goes on without a lock (the evidence record says so)`,
    );
  }

  /** A lock commit carrying `record` (git's empty tree, no parent): its id. */
  private async commit(record: LockRequest, doing: string): Promise<string> {
    const message = `revsync lock of environment ${record.environment}\n\n${JSON.stringify(record)}\n`;
    const commit = await this.git(["commit-tree", EMPTY_TREE, "-m", message], {
      GIT_AUTHOR_NAME: "revsync",
      GIT_AUTHOR_EMAIL: "revsync@invalid",
      GIT_COMMITTER_NAME: "revsync",
      GIT_COMMITTER_EMAIL: "revsync@invalid",
    });
    if (commit.code !== 0) throw this.unavailable(doing, commit);
    return commit.stdout.trim();
  }

  /** Sets the ref to `id` only while it is `expected` ("": absent). */
  private push(expected: string, id: string): Promise<GitResult> {
    return this.git(["push", "--porcelain", "--no-verify", `--force-with-lease=${this.ref}:${expected}`, this.opts.remote, `${id}:${this.ref}`]);
  }

  async take(request: LockRequest): Promise<Taken | { held: LockHolder }> {
    const id = await this.commit(request, "take");
    // A push refused while the ref is free again (its holder let go meanwhile) is tried once more. A push
    // whose answer was lost (the connection dropped after the remote updated the ref) is told by the ref:
    // naming this take's own commit, the lock is taken. A released lock is taken over, only while it is
    // still the one read.
    let tookOver: LockHolder | undefined;
    for (let attempt = 0; ; attempt++) {
      const push = await this.push(tookOver?.id ?? "", id);
      if (push.code === 0) return { taken: { id, ...request }, ...(tookOver ? { tookOver } : {}) };
      const held = await this.holder().catch(() => undefined);
      if (held?.id === id) return { taken: { id, ...request }, ...(tookOver ? { tookOver } : {}) };
      tookOver = held?.released ? held : undefined;
      if (held && !held.released) return { held };
      if (attempt >= 2) throw this.unavailable("take", push);
    }
  }

  async holder(): Promise<LockHolder | undefined> {
    // Fetched into a ref of this process's own (two waiters in one clone never write the same ref), read,
    // and removed.
    const seen = `refs/revsync/seen/${process.pid}-${randomBytes(4).toString("hex")}`;
    const fetch = await this.git([
      "-c",
      "gc.auto=0",
      "-c",
      "maintenance.auto=false",
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-write-fetch-head",
      "--no-recurse-submodules",
      this.opts.remote,
      `+${this.ref}:${seen}`,
    ]);
    if (fetch.code !== 0) {
      if (/couldn't find remote ref/i.test(fetch.stderr)) return undefined;
      throw this.unavailable("read", fetch);
    }
    try {
      const read = await this.git(["for-each-ref", "--format=%(objectname)%00%(contents)", seen]);
      const nul = read.stdout.indexOf("\0");
      if (read.code !== 0 || nul < 0) throw this.unavailable("read", read);
      return parseRecord(read.stdout.slice(0, nul), read.stdout.slice(nul + 1), this.opts.environment);
    } finally {
      await this.git(["update-ref", "-d", seen]);
    }
  }

  async release(id: string, leave?: LockRequest): Promise<"released" | "free" | { other: LockHolder }> {
    const next = leave ? await this.commit(leave, "release") : "";
    const push = await this.push(id, next);
    if (push.code === 0) return "released";
    const now = await this.holder();
    if (next && now?.id === next) return "released";
    // Gone: refused (porcelain's "!"), someone else removed it first; else the answer to this delete was
    // lost after the remote made it.
    if (!now) return /^!\t/m.test(push.stdout) ? "free" : "released";
    if (now.id !== id) return { other: now };
    throw this.unavailable("release", push);
  }
}
