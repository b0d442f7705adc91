import { createHash, randomBytes } from "node:crypto";
import { chmodSync, linkSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { makeFolders } from "../fs-atomic.js";
import { hostname } from "node:os";
import { join } from "node:path";
import { tenantIdentity } from "../tenant.js";
import { READ_CAPS, readFailure, readUserFile } from "../user-files.js";
import { LockUnavailable, type HolderState, type LockBackend, type LockHolder, type LockRequest, type Taken } from "./lock.js";

/** Where a machine keeps the locks of services on loopback: one folder for every user and every run of
 *  the machine, whatever TMPDIR a user, a CI job or an operating system (macOS gives each user one) sets.
 *  /tmp is every Unix's folder for such files, shared by all and sticky; Windows' is ProgramData. */
export function machineLockDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? join(env.ProgramData || env.ALLUSERSPROFILE || "C:\\ProgramData", "revsync", "locks") : "/tmp/revsync-locks";
}

/** Which running system a process belongs to, where the system says (Linux): the boot and the pid
 *  namespace. A holder of this host, boot and namespace whose pid no longer runs is certainly gone. */
export interface ProcessSpace {
  host: string;
  boot_id: string | null;
  pid_ns: string | null;
}

export function thisProcessSpace(): ProcessSpace {
  const read = (f: () => string): string | null => {
    try {
      return f().trim() || null;
    } catch {
      return null;
    }
  };
  return {
    host: hostname(),
    boot_id: read(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8")),
    pid_ns: read(() => readlinkSync("/proc/self/ns/pid")),
  };
}

type Stored = LockHolder & Partial<ProcessSpace>;

export const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Whether a holder's process still runs, as this machine can tell: a holder of another host is
 *  `unknown`; of this host, `alive` while its pid runs (whatever the namespace: a lock is never called
 *  dead on a guess), `gone` once it does not (in the same boot and pid namespace, or where the record
 *  does not say them, as a git lock's does not) or after a reboot. */
export function holderState(
  h: { host: string; pid: number; boot_id?: string | null; pid_ns?: string | null },
  s: ProcessSpace,
  isRunning = running,
): HolderState {
  if (h.host !== s.host || h.pid <= 0) return "unknown";
  if (s.boot_id && h.boot_id && h.boot_id !== s.boot_id) return "gone";
  if (isRunning(h.pid)) return "alive";
  if (h.boot_id === undefined && h.pid_ns === undefined) return "gone";
  return (h.boot_id ?? null) === s.boot_id && (h.pid_ns ?? null) === s.pid_ns ? "gone" : "unknown";
}

/** The lock as a file of this machine, for a service on loopback (the emulator): nothing but this machine
 *  reaches it, so every writer to it can see this file. Taking it is an atomic link of a complete record
 *  to the lock's name, which fails when the name exists; the file is named by the tenant (its base URL as
 *  serviceUrl normalises it, and its realm: src/tenant.ts), so two policy repos aimed at one emulator
 *  share it however they spell its URL (`earlier`: the name an earlier revsync gave it, the base URL as
 *  written, which RenamedLock honours while the change of names lasts). Like an operating system's file lock, it
 *  does not outlive its holder: a holder of this machine whose process is gone (its pid not running, in
 *  the same boot and pid namespace) is replaced, and the take says so. */
export class LocalLock implements LockBackend {
  readonly kind = "local";
  readonly path: string;
  readonly where: string;

  constructor(
    private readonly dir: string,
    service: { baseUrl: string; realm: string },
    private readonly space: ProcessSpace = thisProcessSpace(),
    private readonly isRunning: (pid: number) => boolean = running,
    earlier = false,
  ) {
    const tenant = tenantIdentity(service.baseUrl, service.realm);
    const name = earlier
      ? createHash("sha256").update(`${service.baseUrl}\n${service.realm}`).digest("hex").slice(0, 32)
      : `${tenant.label}-${tenant.key.slice(0, 32)}`;
    this.path = join(dir, `${name}.json`);
    this.where = `file ${this.path} of this machine`;
  }

  /** The holder whose process still counts: undefined when free, released, or held by a process that is
   *  gone. */
  async live(): Promise<LockHolder | undefined> {
    const h = this.read();
    return h && !h.released && !this.gone(h) ? holderOf(h) : undefined;
  }

  state(h: LockHolder): HolderState {
    const stored = this.read();
    return holderState(stored?.id === h.id ? stored : h, this.space, this.isRunning);
  }

  private read(): Stored | undefined {
    let text: string;
    try {
      // A regular file of a lock record's size: anyone may add a name to this folder (a FIFO there must
      // not hang apply, a device not fill its memory).
      text = readUserFile(this.path, READ_CAPS.lock);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new LockUnavailable(`cannot read the lock ${this.path}: ${readFailure(e)}`);
    }
    try {
      return JSON.parse(text) as Stored;
    } catch {
      throw new LockUnavailable(
        `the lock ${this.path} is not a lock record revsync wrote`,
        `remove the file if no apply to this service runs, or run apply with --lock=false`,
      );
    }
  }

  /** Certainly gone: a holder of this host, boot and pid namespace whose pid no longer runs. */
  private gone(h: Stored): boolean {
    const s = this.space;
    if (h.host !== s.host || h.pid <= 0) return false;
    if (s.boot_id && h.boot_id && h.boot_id !== s.boot_id) return true;
    if ((h.boot_id ?? null) !== s.boot_id || (h.pid_ns ?? null) !== s.pid_ns) return false;
    return !this.isRunning(h.pid);
  }

  /** The folder, made for every user of the machine; a link there is refused (a folder anyone may make
   *  first must not lead the locks elsewhere). */
  private folder(): void {
    makeFolders(this.dir, 0o1777);
    if (lstatSync(this.dir).isSymbolicLink())
      throw new LockUnavailable(`cannot take the lock ${this.path}: ${this.dir} is a link, not a folder of this machine`);
    // Every user of this machine may take a lock of a service on it; none may remove another's file.
    try {
      chmodSync(this.dir, 0o1777);
    } catch {
      // Not ours to change: creating the file below says whether we may.
    }
  }

  private place(record: Stored): boolean {
    const tmp = `${this.path}.${record.id}.tmp`;
    try {
      this.folder();
      writeFileSync(tmp, JSON.stringify(record), { mode: 0o644 });
      linkSync(tmp, this.path);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
      if (e instanceof LockUnavailable) throw e;
      throw new LockUnavailable(`cannot take the lock ${this.path}: ${(e as Error).message}`);
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        // Never written.
      }
    }
  }

  /** Removes a gone holder's lock, once, however many takers found it gone at the same moment. */
  private removeGone(h: Stored): void {
    const guard = `${this.path}.takeover`;
    try {
      mkdirSync(guard);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw new LockUnavailable(`cannot take over the lock ${this.path}: ${(e as Error).message}`);
      // Another taker is removing it; a guard left by a process killed in between is old.
      try {
        if (Date.now() - statSync(guard).mtimeMs > 10_000) rmdirSync(guard);
      } catch {
        // Gone already.
      }
      return;
    }
    try {
      if (this.read()?.id === h.id) unlinkSync(this.path);
    } catch (e) {
      // Another user's file in the sticky folder: only they (or root) may remove it.
      throw new LockUnavailable(
        `cannot take over the lock ${this.path} (${h.released ? "released" : `its holder, pid ${h.pid}, is gone`}): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        "another user of this machine left it: that user (or root) removes the file, once no apply to this service runs",
      );
    } finally {
      rmdirSync(guard);
    }
  }

  async take(request: LockRequest): Promise<Taken | { held: LockHolder }> {
    const id = randomBytes(20).toString("hex");
    const record: Stored = { id, ...request, boot_id: this.space.boot_id, pid_ns: this.space.pid_ns };
    let tookOver: LockHolder | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.place(record)) return { taken: holderOf(record), ...(tookOver ? { tookOver } : {}) };
      const h = this.read();
      if (!h) continue;
      // A released lock, or a holder whose process is gone: taken over (the taker waits out its deadline).
      if (!h.released && !this.gone(h)) return { held: holderOf(h) };
      tookOver = holderOf(h);
      this.removeGone(h);
    }
    const h = this.read();
    if (h) return { held: holderOf(h) };
    throw new LockUnavailable(`cannot take the lock ${this.path}: it changed hands three times while revsync tried`);
  }

  async holder(): Promise<LockHolder | undefined> {
    const h = this.read();
    return h && holderOf(h);
  }

  async release(id: string, leave?: LockRequest): Promise<"released" | "free" | { other: LockHolder }> {
    const h = this.read();
    if (!h) return "free";
    if (h.id !== id) return { other: holderOf(h) };
    try {
      if (leave) this.replace(leave);
      else unlinkSync(this.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return "free";
      throw new LockUnavailable(`cannot release the lock ${this.path}: ${(e as Error).message}`);
    }
    return "released";
  }

  /** The lock's file replaced whole by a released record (a rename: a reader sees the one or the other). */
  private replace(leave: LockRequest): void {
    const record: Stored = { id: randomBytes(20).toString("hex"), ...leave, boot_id: this.space.boot_id, pid_ns: this.space.pid_ns };
    const tmp = `${this.path}.${record.id}.tmp`;
    writeFileSync(tmp, JSON.stringify(record), { mode: 0o644 });
    try {
      renameSync(tmp, this.path);
    } catch (e) {
      unlinkSync(tmp);
      throw e;
    }
  }
}

/** The holder as every waiter is shown it (the process space stays in the file). */
function holderOf(s: Stored): LockHolder {
  return {
    id: s.id,
    environment: s.environment,
    user: s.user ?? null,
    service_user: s.service_user ?? null,
    host: s.host,
    pid: s.pid,
    ci_run_url: s.ci_run_url ?? null,
    since: s.since,
    plan_checksum: s.plan_checksum ?? null,
    revsync_version: s.revsync_version,
    ...(typeof s.request_deadline_ms === "number" ? { request_deadline_ms: s.request_deadline_ms } : {}),
    ...(releasedOf(s.released) ?? {}),
  };
}

/** A released record's `released`, as read from a file anyone may write. */
export function releasedOf(v: unknown): { released: { lock: string; why: string } } | undefined {
  const r = v as { lock?: unknown; why?: unknown } | null | undefined;
  return r && typeof r === "object" && typeof r.lock === "string"
    ? { released: { lock: r.lock, why: typeof r.why === "string" ? r.why : "released" } }
    : undefined;
}
