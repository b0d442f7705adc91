import { readFileSync } from "node:fs";
import { hostname, tmpdir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { formatDuration, parseDuration } from "../duration.js";
import { UserError } from "../errors.js";
import { ciContext } from "../evidence/context.js";
import type { EvidenceLock } from "../evidence/record.js";
import { GitLock, tenantLockRef } from "../lock/git-lock.js";
import { LocalLock, machineLockDir } from "../lock/local-lock.js";
import {
  acquireLock,
  deadlineOf,
  holderWords,
  releasedRecord,
  RenamedLock,
  unlockCommand,
  type LockBackend,
  type LockHolder,
  type LockRequest,
} from "../lock/lock.js";
import { tenantIdentity } from "../tenant.js";
import { PACKAGE_ROOT } from "../package-root.js";
import type { AskYes, RunOutput } from "../run-output.js";
import type { LockStatus } from "../report/views/lock.js";

/** Where the environment's lock is kept (docs/decisions.md, "One writer per tenant"): a ref of a git
 *  remote of the policy repo, or for a service on loopback a file of this machine's lock folder (one per
 *  machine, whatever TMPDIR says: machineLockDir); named by the tenant the environment resolves to (its
 *  base URL, normalised, and realm), so every environment and every spelling of one tenant's URL takes one
 *  lock; and, while the change of names lasts, honouring the name an earlier revsync gave it
 *  (RenamedLock: for a file, in the temporary folder where an earlier revsync kept it). */
export function lockBackend(repo: Repo, env: ResolvedEnv, penv: NodeJS.ProcessEnv): RenamedLock {
  const setting = env.lock ?? { kind: "local" };
  if (setting.kind === "git") {
    const git = { cwd: repo.root, remote: setting.remote, environment: env.name, env: penv };
    return new RenamedLock(new GitLock({ ...git, ref: tenantLockRef(tenantIdentity(env.baseUrl, env.realm)) }), new GitLock(git));
  }
  const tmp = penv.TMPDIR || penv.TMP || penv.TEMP || tmpdir();
  const earlier = join(resolve(tmp), "revsync-locks");
  const service = { baseUrl: env.baseUrl, realm: env.realm };
  return new RenamedLock(new LocalLock(machineLockDir(penv), service), new LocalLock(earlier, service, undefined, undefined, true));
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

/** The environment's lock as apply holds it: taken before its first write, let go after its last, once
 *  the run's evidence record is written (the record says whether it is let go or kept, and why). */
export interface EnvLock {
  readonly holder: LockHolder;
  /** What the evidence record says of it. */
  evidence(): EvidenceLock;
  /** Decides to let it go (once): `landBy`, until when (this clock, epoch ms) a write this run sent may
   *  still land (its answer was cut short): it is then left as a released record owing the next apply
   *  what is left of that wait, as it is after a lock taken over whose wait was cut short. */
  letGo(landBy?: number): void;
  /** Decides to keep it (a write in flight when the run stopped at once): `why`, in the evidence. */
  keep(why: string): void;
  /** Lets it go as decided (letGo, unless kept); a failure is a warning naming the unlock command, never
   *  the run's failure. */
  release(out: RunOutput): Promise<void>;
  readonly released: boolean;
}

/** The lock as takeEnvLock holds it while it waits for a holder it took over. */
interface HeldEnvLock extends EnvLock {
  owe(untilMs: number, why: string): void;
}

/** What an apply run gives its lock: the plan, the sign-in, the flags and streams, whether it is stopping,
 *  the longest one of its requests may run (what the lock records for a taker to wait out), and its
 *  clock (tests inject it). */
export interface LockRun {
  planChecksum: string;
  serviceUser: string | null;
  flags: ApplyLockFlags;
  /** The run's environment variables (who runs it, in CI). */
  penv: NodeJS.ProcessEnv;
  out: RunOutput;
  isStopping: () => boolean;
  requestDeadlineMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Runs a wait outside the run's time limit (ApiCore.untimed). */
  untimed?: <T>(fn: () => Promise<T>) => Promise<T>;
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits out `ms` in short steps, until done or the run is stopping: whether it was waited out whole. */
async function waitOut(ms: number, run: LockRun): Promise<boolean> {
  const now = run.now ?? Date.now;
  const sleep = run.sleep ?? realSleep;
  const end = now() + ms;
  while (now() < end) {
    if (run.isStopping()) return false;
    await sleep(Math.min(250, end - now()));
  }
  return true;
}

/** Takes the environment's lock for an apply of `plan`, waiting up to --lock-timeout for another holder
 *  (each holder named once); throws LockHeld (the holder named, nothing written) or LockUnavailable. */
export async function takeEnvLock(backend: LockBackend, env: ResolvedEnv, run: LockRun): Promise<EnvLock> {
  const penv = run.penv;
  const timeoutMs = lockTimeoutOf(run.flags);
  const now = run.now ?? Date.now;
  const held = await acquireLock(backend, lockRequest(env, run, penv), {
    timeoutMs,
    now,
    sleep: run.sleep ?? realSleep,
    isStopping: run.isStopping,
    unlockForce: !run.out.interactive,
    onWait: (h, left) =>
      run.out.warn(
        `environment ${JSON.stringify(env.name)} is locked by another apply: ${holderWords(h, now(), env.name)}; waiting up to ${Math.ceil(left / 1000)}s (--lock-timeout)`,
      ),
  });
  run.out.info(`Locked environment ${JSON.stringify(env.name)} (${await where(backend)}; lock id ${held.holder.id}).`);
  const lock = heldLock(backend, env, held, now);
  if (held.tookOver) await waitForTheDead(held.tookOver, lock, run);
  return lock;
}

/** This run's lock record: who, where, the plan, and the longest one of its requests may run. */
function lockRequest(env: ResolvedEnv, run: LockRun, penv: NodeJS.ProcessEnv): LockRequest {
  return {
    environment: env.name,
    ...runner(penv),
    service_user: run.serviceUser,
    host: hostname(),
    pid: process.pid,
    since: new Date((run.now ?? Date.now)()).toISOString(),
    plan_checksum: run.planChecksum,
    revsync_version: revsyncVersion(),
    request_deadline_ms: run.requestDeadlineMs,
  };
}

/** A lock taken over (its holder's process gone, or released while a write sent under it may still land):
 *  before the first write, the longest time such a write can still land is waited out (its holder's request
 *  deadline, which its lock records); then every write's guard reads the service afresh, as always. A run
 *  stopped meanwhile leaves what is left of the wait to the next apply (EnvLock.release). */
async function waitForTheDead(over: LockHolder, lock: HeldEnvLock, run: LockRun): Promise<void> {
  const ms = deadlineOf(over);
  const now = run.now ?? Date.now;
  const whose = over.released
    ? `a lock released while a write sent under it may still land (${over.released.why}; lock ${over.released.lock})`
    : `the lock of an apply on this machine that is no longer running: ${holderWords(over, now())}`;
  lock.owe(now() + ms, `taken over from ${over.released ? `lock ${over.released.lock}, released` : `pid ${over.pid}, no longer running`}`);
  if (!ms) return run.out.warn(`took over ${whose}`);
  run.out.warn(
    `took over ${whose}; waiting ${formatDuration(ms)} (its request deadline) for any write it sent to land; then each write reads the service again before it is sent`,
  );
  // Not the service's time: it does not count against --timeout.
  const waited = await (run.untimed ?? ((f) => f()))(() => waitOut(ms, run));
  if (waited) run.out.info(`Waited ${formatDuration(ms)} for the writes of the lock taken over.`);
}

/** What the evidence says of the lock taken over, when one was. */
function tookOverNote(over: LockHolder | undefined): string | undefined {
  if (!over) return undefined;
  const waited = `and waited ${formatDuration(deadlineOf(over))} before its first write`;
  return over.released
    ? `took over the lock ${over.id}, released (${over.released.why}), ${waited}`
    : `took over the lock ${over.id} of pid ${over.pid}, no longer running, ${waited}`;
}

/** The lock as this run holds it: what the evidence says of it, whether it is let go or kept at the end,
 *  and its release (once; a failure is a warning naming the unlock command, never the run's failure). */
function heldLock(backend: LockBackend, env: ResolvedEnv, held: Awaited<ReturnType<typeof acquireLock>>, now: () => number): HeldEnvLock {
  let state: "held" | "letting go" | "kept" | "released" = "held";
  let owed = { until: 0, why: "" };
  let leave: LockRequest | undefined;
  let note = tookOverNote(held.tookOver);
  const say = (more: string): void => void (note = `${note ? `${note}; ` : ""}${more}`);
  const id = held.holder.id;
  return {
    holder: held.holder,
    get released() {
      return state === "released";
    },
    owe(until, why) {
      if (until > owed.until) owed = { until, why };
    },
    evidence: () => ({
      backend: backend.kind,
      where: backend.where,
      id,
      acquired_at: held.holder.since,
      waited_ms: held.waitedMs,
      released: state === "letting go" || state === "released",
      ...(note ? { note } : {}),
    }),
    letGo(landBy = 0) {
      if (state !== "held") return;
      if (landBy > owed.until) owed = { until: landBy, why: "a write of an apply was cut short before its answer came, and may still land" };
      // Never let go plainly while a write may still land: the next apply then waits what is left of it.
      const left = owed.until - now();
      leave = left > 0 ? releasedRecord(held.holder, left, owed.why, held.holder) : undefined;
      if (leave) say(`released with ${formatDuration(left)} owed: the next apply waits that long before it writes (${owed.why})`);
      state = "letting go";
    },
    keep(why) {
      if (state !== "held") return;
      say(`kept: ${why}`);
      state = "kept";
    },
    async release(out) {
      if (state === "held") this.letGo();
      if (state !== "letting go") return;
      state = "released";
      try {
        const r = await backend.release(id, leave);
        if (r === "free") out.warn(`the lock of environment ${JSON.stringify(env.name)} was released by someone else while this apply ran`);
        else if (r !== "released")
          out.warn(
            `the lock of environment ${JSON.stringify(env.name)} was released by someone else while this apply ran, and another apply holds it now: ${holderWords(r.other, now(), env.name)}`,
          );
      } catch (e) {
        state = "kept";
        out.warn(
          `the lock of environment ${JSON.stringify(env.name)} could not be released: ${(e as Error).message}; release it with: ${unlockCommand(env.name, id, !out.interactive)}`,
        );
      }
    },
  };
}

/** Where a lock is kept, in the words a person checks it by (a git remote's URL too). */
const where = async (backend: LockBackend): Promise<string> => (await backend.describe?.().catch(() => undefined)) ?? backend.where;

/** revsync lock status: who holds the environment's lock, or that nobody does, and whether its process
 *  still runs where this machine can tell. */
export async function lockStatus(backend: RenamedLock, environment: string, interactive: boolean): Promise<LockStatus> {
  const holder = await backend.holder();
  const at = holder ? await backend.whereOf(holder.id) : await backend.describe();
  return { environment, backend: { kind: backend.kind, where: at }, holder, ...(holder ? { state: backend.state(holder) } : {}), interactive };
}

/** What unlock is told: the lock's id (or a prefix of 7 or more characters of it), --force, and how to
 *  ask a person on a terminal. */
export interface UnlockRequest {
  id: string;
  force: boolean;
  penv: NodeJS.ProcessEnv;
  out: RunOutput;
  ask: AskYes;
}

/** revsync unlock --env NAME LOCK_ID: releases a dead holder's lock (as terraform force-unlock). The
 *  environment is named, never guessed, and the id must name the lock held now (a prefix of 7 or more
 *  characters of it will do), so a lock taken since by another apply is never released by mistake. The
 *  lock of a process that runs on this host is not released (it is not dead) unless --force; any other
 *  is released once a person says yes on a terminal, or with --force where none can (no terminal). */
export async function unlockEnvironment(backend: RenamedLock, environment: string, req: UnlockRequest): Promise<number> {
  const { id, out } = req;
  const name = JSON.stringify(environment);
  const holder = await backend.holder();
  if (!holder || holder.released) {
    out.info(`Environment ${name} is not locked (${await where(backend)}): nothing to release.`);
    return 0;
  }
  const words = (h: LockHolder): string => holderWords(h, Date.now(), environment);
  if (!(id === holder.id || (id.length >= 7 && holder.id.startsWith(id)))) {
    throw new UserError(
      `the lock of environment ${name} is ${holder.id}, not ${JSON.stringify(id)}: held by ${words(holder)}; nothing was released`,
      "check revsync lock status: another apply may have taken the lock since",
    );
  }
  if (!(await mayRelease(req, environment, holder, backend.state(holder)))) return 1;
  // A write that apply sent may still land: the lock is left released, owing the next apply the wait for it.
  const wait = deadlineOf(holder);
  const me = { ...runner(req.penv), host: hostname(), pid: process.pid, since: new Date().toISOString(), revsync_version: revsyncVersion() };
  const leave = releasedRecord(holder, wait, `released by revsync unlock, run by ${me.user ?? "someone"} on host ${me.host}`, me);
  const r = await backend.release(holder.id, leave);
  if (r === "released") {
    out.out(
      `Released the lock ${holder.id} of environment ${name}, held by ${words(holder)}. The next apply waits ${formatDuration(wait)} (that apply's request deadline) for any write it sent to land, then reads the service again before it writes.`,
    );
    return 0;
  }
  if (r === "free") {
    out.info(`Environment ${name} is not locked any more: nothing to release.`);
    return 0;
  }
  throw new UserError(`the lock of environment ${name} changed hands meanwhile: ${words(r.other)}; nothing was released`);
}

/** Whether unlock may release `holder`'s lock: never a process that runs on this host without --force
 *  (that apply is alive, and would go on writing beside the next); else with --force, or once a person
 *  answers yes on a terminal (without one, --force is required). */
async function mayRelease(req: UnlockRequest, environment: string, holder: LockHolder, state: string): Promise<boolean> {
  const { out, force } = req;
  const env = JSON.stringify(environment);
  if (state === "alive") {
    if (!force)
      throw new UserError(
        `the lock of environment ${env} is held by a process that is running on this host (pid ${holder.pid}): ${holderWords(holder, Date.now(), environment)}; nothing was released`,
        `that apply is not dead: wait for it (apply --lock-timeout), or stop it first (its writes stop with it); --force releases the lock of a running apply, which then writes beside the next one`,
      );
    out.warn(`releasing the lock of a process that is running on this host (pid ${holder.pid}), as --force says: it may go on writing beside the next apply`);
    return true;
  }
  if (force) return true;
  if (!out.interactive)
    throw new UserError(
      `unlock releases the lock of another apply of environment ${env}: without a terminal to confirm on, it needs --force; nothing was released`,
      `release a lock only once you know its apply no longer runs: ${unlockCommand(environment, holder.id, true)}`,
    );
  out.info(`The lock of environment ${env} is held by ${holderWords(holder, Date.now(), environment)}.`);
  const yes = await req.ask("Release it? An apply that still runs would then write beside the next one. Only 'yes' will be accepted: ");
  if (!yes) out.error("unlock cancelled: nothing was released");
  return yes;
}
