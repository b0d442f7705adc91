import { formatDuration } from "../duration.js";
import { UserError } from "../errors.js";
import { shellQuote } from "../shell-quote.js";

/** Who holds an environment's lock, as every waiter is shown it: never a secret (no token, no password,
 *  no URL with credentials), so that it can be printed, stored in a git remote and kept in evidence. */
export interface LockHolder {
  /** The lock's id: what `revsync unlock` takes (git: the lock commit; local: a random id). */
  id: string;
  environment: string;
  /** Who runs the apply: the CI run's actor, else the machine's user. */
  user: string | null;
  /** The user revsync signs in to the service as. */
  service_user: string | null;
  host: string;
  pid: number;
  /** The CI run that applies, when there is one. */
  ci_run_url: string | null;
  /** When the lock was taken (ISO, UTC). */
  since: string;
  /** The checksum of the plan being applied. */
  plan_checksum: string | null;
  revsync_version: string;
  /** The longest one of the holder's requests may run (its cap, REVSYNC_TIMEOUT_MS): the longest after
   *  the holder stopped that a write it sent may still land. Absent in a lock an earlier revsync took
   *  (DEFAULT_REQUEST_DEADLINE_MS then). */
  request_deadline_ms?: number;
  /** Set on a lock let go while a write sent under it may still land: released by `revsync unlock` (a
   *  dead apply's), or by an apply a write of which was cut short. Nobody holds it: the next apply takes
   *  it, and waits request_deadline_ms before its first write. */
  released?: { lock: string; why: string };
}

/** What a lock record holds before it has an id. */
export type LockRequest = Omit<LockHolder, "id">;

/** The cap of a request of an earlier revsync, whose lock did not record it: 30 s for the answer and 60 s
 *  for its body (REVSYNC_TIMEOUT_MS's defaults). */
export const DEFAULT_REQUEST_DEADLINE_MS = 90_000;

/** How long after a holder stopped a write it sent may still land: what a taker waits out. */
export const deadlineOf = (h: LockHolder): number =>
  typeof h.request_deadline_ms === "number" && Number.isFinite(h.request_deadline_ms) && h.request_deadline_ms >= 0
    ? Math.min(h.request_deadline_ms, 24 * 3_600_000)
    : DEFAULT_REQUEST_DEADLINE_MS;

/** The record a lock let go is replaced by while a write sent under it may still land (`waitMs` from now):
 *  free to take, after that wait (docs/decisions.md, "A takeover waits for the dead"). */
export function releasedRecord(
  h: LockHolder,
  waitMs: number,
  why: string,
  by: Pick<LockRequest, "user" | "host" | "pid" | "since" | "revsync_version">,
): LockRequest {
  return {
    environment: h.environment,
    user: by.user,
    service_user: null,
    host: by.host,
    pid: by.pid,
    ci_run_url: null,
    since: by.since,
    plan_checksum: null,
    revsync_version: by.revsync_version,
    request_deadline_ms: Math.max(0, Math.ceil(waitMs)),
    released: { lock: h.id, why },
  };
}

/** Whether a holder's process still runs: `alive`, a process of this host that runs; `gone`, a process of
 *  this host that no longer runs; `unknown`, a process of another host (or one this host cannot tell). */
export type HolderState = "alive" | "gone" | "unknown";

/** One place a tenant's lock is kept. Taking it is one atomic test-and-set: of two takers at the same
 *  moment exactly one gets it; releasing it removes only the lock of that id. */
export interface LockBackend {
  readonly kind: "git" | "local";
  /** Where, in words: "git remote origin, ref refs/revsync/tenant-locks/…", "file /tmp/…". */
  readonly where: string;
  /** Where, in words a person checks it by: a git remote's URL too (credentials blanked). */
  describe?(): Promise<string>;
  /** Whether the holder's process still runs, as far as this machine can tell. */
  state?(holder: LockHolder): HolderState;
  /** Takes the lock, or says who holds it. `tookOver`: what this take replaced, a holder on this machine
   *  whose process is gone, or a lock released while a write may still land (`released`): either way the
   *  taker waits out its deadlineOf before it writes. Throws LockUnavailable when it can neither take nor
   *  read it. */
  take(request: LockRequest): Promise<Taken | { held: LockHolder }>;
  /** What lies at the lock now: its holder, a released record (`released` set: nobody holds it), or
   *  undefined when it is free. */
  holder(): Promise<LockHolder | undefined>;
  /** Releases the lock of `id`: "released", "free" (nobody holds it), or the holder of another lock.
   *  `leave`: a released record put in its place (a write sent under it may still land) instead of
   *  nothing. */
  release(id: string, leave?: LockRequest): Promise<"released" | "free" | { other: LockHolder }>;
}

/** A take that got the lock, and what it replaced. */
export interface Taken {
  taken: LockHolder;
  tookOver?: LockHolder;
}

/** The lock could not be taken or checked (no remote, no permission to push, git missing): apply stops
 *  before it writes anything, unless --lock=false says to go on without one. */
export class LockUnavailable extends UserError {
  constructor(message: string, hint?: string) {
    super(message, hint ?? "fix that, or run apply with --lock=false to go on without a lock (the evidence record says so)");
    this.name = "LockUnavailable";
  }
}

/** The command that releases a lock, as a shell reads it back: the environment's name (revsync.yaml's)
 *  and the lock id (read from the lock, which anyone who can push may write) each one word. */
export const unlockCommand = (environment: string, id: string, force = false): string =>
  `revsync unlock --env ${shellQuote(environment)} ${shellQuote(id)}${force ? " --force" : ""}`;

const ago = (ms: number): string => (ms < 60_000 ? `${Math.max(0, Math.round(ms / 1000))}s` : formatDuration(Math.round(ms / 60_000) * 60_000));

/** The holder in words: "alice (CI run URL) on host runner-7 (pid 4242), since 2026-… (3m ago), applying plan
 *  sha256:… as service user ci-bot; lock id 8dbd…". `environment`: the environment the reader names; a
 *  holder that applies to the same tenant under another environment's name is said to. */
export function holderWords(h: LockHolder, now: number, environment?: string): string {
  const since = Date.parse(h.since);
  const other = environment !== undefined && h.environment !== environment ? ` to environment ${JSON.stringify(h.environment)} (the same tenant)` : "";
  return [
    `${h.user ?? "someone"}${h.ci_run_url ? ` (CI run ${h.ci_run_url})` : ""} on host ${h.host} (pid ${h.pid})`,
    `since ${h.since.replace(/\.\d{3}Z$/, "Z")}${Number.isFinite(since) ? ` (${ago(now - since)} ago)` : ""}`,
    `applying plan ${h.plan_checksum ?? "(unknown)"}${other}${h.service_user ? ` as service user ${h.service_user}` : ""}`,
    `lock id ${h.id}`,
  ].join(", ");
}

export interface AcquireOptions {
  /** How long to wait for another holder (--lock-timeout); 0: fail at once. */
  timeoutMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Told once per holder met while waiting. */
  onWait?: (holder: LockHolder, remainingMs: number) => void;
  /** Stop waiting (an interrupt): nothing was written. */
  isStopping?: () => boolean;
  /** The unlock command a LockHeld names carries --force: the run has no terminal, and where there is
   *  none unlock asks nobody and refuses without it (the command works where it is printed). */
  unlockForce?: boolean;
}

/** The lock this run holds. */
export interface HeldLock {
  holder: LockHolder;
  waitedMs: number;
  tookOver?: LockHolder;
}

/** Held by another apply past --lock-timeout: the waiter names the holder, writes nothing, exits 1. */
export class LockHeld extends UserError {
  constructor(
    readonly environment: string,
    readonly holder: LockHolder,
    waitedMs: number,
    now: number,
    force = false,
    state: HolderState = "unknown",
  ) {
    super(
      `environment ${JSON.stringify(environment)} is locked by another apply: ${holderWords(holder, now, environment)}${waitedMs ? `; waited ${formatDuration(waitedMs)}` : ""}; nothing was written`,
      // A holder this machine sees running is never offered a release: unlock --force would take a live
      // apply's lock (two writers at once), whatever a terminal can or cannot answer.
      state === "alive"
        ? "that apply is still running on this machine: wait for it with --lock-timeout (e.g. --lock-timeout 10m)"
        : `wait for it with --lock-timeout (e.g. --lock-timeout 10m); if that apply is dead (killed, its runner gone), release its lock (the next apply then waits ${formatDuration(deadlineOf(holder))}, its request deadline, for any write it sent to land): ${unlockCommand(environment, holder.id, force)}`,
    );
    this.name = "LockHeld";
  }
}

/** Takes the lock, waiting up to `timeoutMs` for another holder with a bounded poll (from 0.5 s, growing
 *  to 5 s between tries, never past the deadline). */
export async function acquireLock(backend: LockBackend, request: LockRequest, opts: AcquireOptions): Promise<HeldLock> {
  const start = opts.now();
  const deadline = start + opts.timeoutMs;
  let pause = 500;
  const told = new Set<string>();
  for (;;) {
    const r = await backend.take({ ...request, since: new Date(opts.now()).toISOString() });
    if ("taken" in r) return { holder: r.taken, waitedMs: opts.now() - start, ...(r.tookOver ? { tookOver: r.tookOver } : {}) };
    const left = deadline - opts.now();
    if (left <= 0 || opts.isStopping?.())
      throw new LockHeld(request.environment, r.held, opts.timeoutMs ? opts.now() - start : 0, opts.now(), opts.unlockForce, backend.state?.(r.held));
    if (!told.has(r.held.id)) {
      told.add(r.held.id);
      opts.onWait?.(r.held, left);
    }
    await opts.sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, 5000);
  }
}

/** A lock kept under its tenant's name (`current`) that, while the change of names lasts, also honours
 *  the name an earlier revsync gave it (`earlier`: the raw base URL for a file of this machine, the
 *  environment's name for a git ref), so that a lock an earlier revsync holds is never ignored
 *  (docs/decisions.md, "One writer per tenant"). A take takes the current name, then reads the earlier
 *  one: a holder there (one that still counts) is met as any holder is, and the current name is let go
 *  again. lock status shows either; unlock releases either, by its id. */
export class RenamedLock implements LockBackend {
  readonly kind: "git" | "local";
  readonly where: string;
  private readonly onEarlier = new Set<string>();

  constructor(
    private readonly current: LockBackend,
    private readonly earlier: LockBackend & { live(): Promise<LockHolder | undefined> },
  ) {
    this.kind = current.kind;
    this.where = current.where;
  }

  async describe(): Promise<string> {
    return (await this.current.describe?.()) ?? this.current.where;
  }

  /** Where the lock of `id` lies, in words: the earlier name's, said so, when it is held there. */
  async whereOf(id: string): Promise<string> {
    return this.onEarlier.has(id) ? `${this.earlier.where}, the name an earlier revsync gave this lock` : this.describe();
  }

  state(h: LockHolder): HolderState {
    return (this.onEarlier.has(h.id) ? this.earlier.state?.(h) : this.current.state?.(h)) ?? "unknown";
  }

  async take(request: LockRequest): Promise<Taken | { held: LockHolder }> {
    const r = await this.current.take(request);
    if (!("taken" in r)) return r;
    // Let go again, what it replaced is put back as it was owed: the wait for a dead holder's writes.
    const back = r.tookOver && releasedRecord(r.tookOver, deadlineOf(r.tookOver), r.tookOver.released?.why ?? "its holder's process is gone", request);
    let old: LockHolder | undefined;
    try {
      old = await this.earlier.live();
    } catch (e) {
      await this.current.release(r.taken.id, back).catch(() => undefined);
      throw e;
    }
    if (!old || old.id === r.taken.id) return r;
    this.onEarlier.add(old.id);
    await this.current.release(r.taken.id, back);
    return { held: old };
  }

  async holder(): Promise<LockHolder | undefined> {
    const now = await this.current.holder();
    if (now) return now;
    const old = await this.earlier.holder();
    if (old) this.onEarlier.add(old.id);
    return old;
  }

  async release(id: string, leave?: LockRequest): Promise<"released" | "free" | { other: LockHolder }> {
    const r = await this.current.release(id, leave);
    if (r === "released") return r;
    const old = await this.earlier.holder();
    if (old?.id !== id) return r;
    const done = await this.earlier.release(id);
    // The earlier name is not read for released records: the one owed goes under the current name, where
    // it is free.
    if (done === "released" && leave && r === "free") await this.current.take(leave);
    return done;
  }
}
