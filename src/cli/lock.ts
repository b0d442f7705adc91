import { readFileSync } from "node:fs";
import { hostname, tmpdir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { parseDuration } from "../duration.js";
import { UserError } from "../errors.js";
import { ciContext } from "../evidence/context.js";
import type { EvidenceLock } from "../evidence/record.js";
import { GitLock } from "../lock/git-lock.js";
import { LocalLock } from "../lock/local-lock.js";
import { acquireLock, holderWords, type LockBackend, type LockHolder } from "../lock/lock.js";
import { PACKAGE_ROOT } from "../package-root.js";
import { pickView } from "../report/view.js";
import { lockStatusViews } from "../report/views/lock.js";
import { envOf, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

/** Where the environment's lock is kept (docs/decisions.md, "One writer per environment"): a ref of a git
 *  remote of the policy repo, or for a service on loopback a file of this machine's temporary folder. */
export function lockBackend(repo: Repo, env: ResolvedEnv, flags: GlobalFlags): LockBackend {
  const penv = envOf(flags);
  const setting = env.lock ?? { kind: "local" };
  if (setting.kind === "git") return new GitLock({ cwd: repo.root, remote: setting.remote, environment: env.name, env: penv });
  const tmp = penv.TMPDIR || penv.TMP || penv.TEMP || tmpdir();
  return new LocalLock(join(resolve(tmp), "revsync-locks"), { baseUrl: env.baseUrl, realm: env.realm });
}

const revsyncVersion = (): string => (JSON.parse(readFileSync(resolve(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;

/** Who runs this apply: the CI run's actor, else the machine's user. */
function runner(penv: NodeJS.ProcessEnv): { user: string | null; ci_run_url: string | null } {
  const ci = ciContext(penv);
  let user = ci?.actor ?? null;
  if (!user) {
    try {
      user = userInfo().username || null;
    } catch {
      user = penv.USER ?? penv.USERNAME ?? null;
    }
  }
  return { user, ci_run_url: ci?.run_url ?? null };
}

export interface ApplyLockFlags {
  /** --lock-timeout: how long to wait for another holder (default: not at all). */
  lockTimeout?: string;
  /** --lock: "false" only explicitly; anything else holds the lock. */
  lock?: string;
}

/** --lock=false, said explicitly: the one way to apply without the lock. */
export function lockDisabled(flags: ApplyLockFlags): boolean {
  const v = flags.lock;
  if (v === undefined || v === "true") return false;
  if (v === "false") return true;
  throw new UserError(`--lock must be true or false, got ${JSON.stringify(v)}`);
}

/** --lock-timeout in ms (0 without it: fail at once, naming the holder). */
export function lockTimeoutOf(flags: ApplyLockFlags): number {
  if (flags.lockTimeout === undefined) return 0;
  const ms = parseDuration(flags.lockTimeout);
  if (ms === undefined || ms < 0) throw new UserError(`--lock-timeout must be a duration such as 30s, 10m or 1h, got ${JSON.stringify(flags.lockTimeout)}`);
  return ms;
}

/** The environment's lock as apply holds it: taken before its first write, released after its last. */
export interface EnvLock {
  readonly holder: LockHolder;
  /** What the evidence record says of it. */
  evidence(): EvidenceLock;
  /** Releases it (once); a failure is a warning naming the unlock command, never the run's failure. */
  release(out: Output): Promise<void>;
  readonly released: boolean;
}

/** Takes the environment's lock for an apply of `plan`, waiting up to --lock-timeout for another holder
 *  (each holder named once); throws LockHeld (the holder named, nothing written) or LockUnavailable. */
export async function takeEnvLock(
  backend: LockBackend,
  env: ResolvedEnv,
  run: { planChecksum: string; serviceUser: string | null; flags: GlobalFlags & ApplyLockFlags; out: Output; isStopping: () => boolean },
): Promise<EnvLock> {
  const penv = envOf(run.flags);
  const timeoutMs = lockTimeoutOf(run.flags);
  const held = await acquireLock(
    backend,
    {
      environment: env.name,
      ...runner(penv),
      service_user: run.serviceUser,
      host: hostname(),
      pid: process.pid,
      since: new Date().toISOString(),
      plan_checksum: run.planChecksum,
      revsync_version: revsyncVersion(),
    },
    {
      timeoutMs,
      now: () => Date.now(),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      isStopping: run.isStopping,
      onWait: (h, left) =>
        run.out.warn(
          `environment ${JSON.stringify(env.name)} is locked by another apply: ${holderWords(h, Date.now())}; waiting up to ${Math.ceil(left / 1000)}s (--lock-timeout)`,
        ),
    },
  );
  if (held.tookOver) run.out.warn(`took over the lock of an apply on this machine that is no longer running: ${holderWords(held.tookOver, Date.now())}`);
  run.out.info(`Locked environment ${JSON.stringify(env.name)} (${backend.where}; lock id ${held.holder.id}).`);
  return heldLock(backend, env, held);
}

/** The lock as this run holds it: what the evidence says of it, and its release (once; a failure is a
 *  warning naming the unlock command, never the run's failure). */
function heldLock(backend: LockBackend, env: ResolvedEnv, held: Awaited<ReturnType<typeof acquireLock>>): EnvLock {
  let released = false;
  let note: string | undefined = held.tookOver ? `took over the lock ${held.tookOver.id} of pid ${held.tookOver.pid}, no longer running` : undefined;
  const say = (more: string): void => void (note = `${note ? `${note}; ` : ""}${more}`);
  return {
    holder: held.holder,
    get released() {
      return released;
    },
    evidence: () => ({
      backend: backend.kind,
      where: backend.where,
      id: held.holder.id,
      acquired_at: held.holder.since,
      waited_ms: held.waitedMs,
      released,
      ...(note ? { note } : {}),
    }),
    async release(out) {
      if (released) return;
      const unlock = `revsync unlock --env ${env.name} ${held.holder.id}`;
      try {
        const r = await backend.release(held.holder.id);
        released = r === "released" || r === "free";
        if (r === "free") {
          say("at the end the lock was no longer held: someone released it (revsync unlock) while this apply ran");
          out.warn(`the lock of environment ${JSON.stringify(env.name)} was released by someone else while this apply ran`);
        } else if (r !== "released") {
          say(`at the end another apply held the lock: ${r.other.id}`);
          out.warn(
            `the lock of environment ${JSON.stringify(env.name)} was released by someone else while this apply ran, and another apply holds it now: ${holderWords(r.other, Date.now())}`,
          );
        }
      } catch (e) {
        say(`not released: ${(e as Error).message}`);
        out.warn(`the lock of environment ${JSON.stringify(env.name)} could not be released: ${(e as Error).message}; release it with: ${unlock}`);
      }
    },
  };
}

export type LockCommandFlags = GlobalFlags;

/** revsync lock status: who holds the environment's lock, or that nobody does. Exit 0 either way; 1 when
 *  it cannot be read. */
export async function runLockStatus(flags: LockCommandFlags, out: Output): Promise<number> {
  const view = await pickView(lockStatusViews, flags.format);
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  const backend = lockBackend(repo, env, flags);
  view({ environment: env.name, backend, holder: await backend.holder() }, out);
  return 0;
}

/** revsync unlock --env NAME LOCK_ID: releases a dead holder's lock (as terraform force-unlock). The
 *  environment is named, never guessed, and the id must name the lock held now (a prefix of 7 or more
 *  characters of it will do), so a lock taken since by another apply is never released by mistake. */
export async function runUnlock(flags: LockCommandFlags, out: Output, args: string[]): Promise<number> {
  if (!flags.env) throw new UserError("unlock needs --env NAME: the environment whose lock to release is named, never guessed");
  const id = (args[0] ?? "").trim();
  if (!id) throw new UserError("unlock needs the lock's id (revsync lock status --env NAME shows it)");
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  const backend = lockBackend(repo, env, flags);
  const holder = await backend.holder();
  if (!holder) {
    out.info(`Environment ${JSON.stringify(env.name)} is not locked (${backend.where}): nothing to release.`);
    return 0;
  }
  if (!(id === holder.id || (id.length >= 7 && holder.id.startsWith(id)))) {
    throw new UserError(
      `the lock of environment ${JSON.stringify(env.name)} is ${holder.id}, not ${id}: held by ${holderWords(holder, Date.now())}; nothing was released`,
      "check revsync lock status: another apply may have taken the lock since",
    );
  }
  const r = await backend.release(holder.id);
  if (r === "released") {
    out.out(`Released the lock ${holder.id} of environment ${JSON.stringify(env.name)}, held by ${holderWords(holder, Date.now())}.`);
    return 0;
  }
  if (r === "free") {
    out.info(`Environment ${JSON.stringify(env.name)} is not locked any more: nothing to release.`);
    return 0;
  }
  throw new UserError(`the lock of environment ${JSON.stringify(env.name)} changed hands meanwhile: ${holderWords(r.other, Date.now())}; nothing was released`);
}
