import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tenantIdentity } from "../tenant.js";
import { GitLock, lockRef, tenantLockRef, withoutCredentials } from "./git-lock.js";
import { LocalLock, machineLockDir, type ProcessSpace } from "./local-lock.js";
import { acquireLock, deadlineOf, DEFAULT_REQUEST_DEADLINE_MS, LockHeld, releasedRecord, type LockBackend, type LockHolder, type LockRequest } from "./lock.js";

const request = (over: Partial<LockRequest> = {}): LockRequest => ({
  environment: "production",
  user: "alice",
  service_user: "ci-bot",
  host: "runner-7",
  pid: 4242,
  ci_run_url: "https://ci.example/runs/9",
  since: "2026-11-25T12:00:00.000Z",
  plan_checksum: "sha256:abc",
  revsync_version: "0.1.0",
  ...over,
});

/** A backend held by `holders` in turn (one per take), then free. */
function scripted(holders: LockHolder[]): LockBackend & { takes: number } {
  const b = {
    kind: "git" as const,
    where: "test",
    takes: 0,
    async take(r: LockRequest) {
      const h = holders[b.takes++];
      return h ? { held: h } : { taken: { id: "mine", ...r } };
    },
    holder: async () => undefined,
    release: async () => "released" as const,
  };
  return b;
}

describe("acquireLock: one writer, a bounded wait", () => {
  const other = { id: "8dbd5989", ...request({ user: "bob", host: "laptop", pid: 7 }) };

  it("without --lock-timeout fails at once, naming the holder (user, host, CI run, since, plan, id) and the unlock command", async () => {
    let t = Date.parse("2026-11-25T12:03:00.000Z");
    const sleeps: number[] = [];
    const err = await acquireLock(scripted([other, other]), request(), {
      timeoutMs: 0,
      now: () => t,
      sleep: async (ms) => void sleeps.push((t += ms)),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockHeld);
    expect((err as LockHeld).message).toBe(
      'environment "production" is locked by another apply: bob (CI run https://ci.example/runs/9) on host laptop (pid 7), since 2026-11-25T12:00:00Z (3m ago), applying plan sha256:abc as service user ci-bot, lock id 8dbd5989; nothing was written',
    );
    expect((err as LockHeld).hint).toMatch(
      /release its lock \(the next apply then waits 1m30s, its request deadline, for any write it sent to land\): revsync unlock --env production 8dbd5989$/,
    );
    expect(sleeps).toEqual([]);
    // Where the run has no terminal, the command it names carries --force: there unlock needs it.
    const ci = await acquireLock(scripted([other]), request(), { timeoutMs: 0, now: () => t, sleep: async () => {}, unlockForce: true }).catch(
      (e: unknown) => e,
    );
    expect((ci as LockHeld).hint).toMatch(/release its lock \([^)]*\): revsync unlock --env production 8dbd5989 --force$/);
    // A holder this machine sees running: no release offered, terminal or not.
    const alive = { ...scripted([other]), state: () => "alive" as const };
    const live = await acquireLock(alive, request(), { timeoutMs: 0, now: () => t, sleep: async () => {}, unlockForce: true }).catch((e: unknown) => e);
    expect((live as LockHeld).hint).toBe("that apply is still running on this machine: wait for it with --lock-timeout (e.g. --lock-timeout 10m)");
  });

  it("with a timeout polls from 0.5 s, doubling to 5 s, never past the deadline; says each holder once; takes it when free", async () => {
    let t = 0;
    const pauses: number[] = [];
    const told: string[] = [];
    const held = await acquireLock(scripted([other, other, other, other, other, { ...other, id: "second" }]), request(), {
      timeoutMs: 60_000,
      now: () => t,
      sleep: async (ms) => {
        pauses.push(ms);
        t += ms;
      },
      onWait: (h) => told.push(h.id),
    });
    expect(pauses).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    expect(told).toEqual(["8dbd5989", "second"]);
    expect(held).toMatchObject({ holder: { id: "mine", user: "alice" }, waitedMs: 17_500 });

    t = 0;
    const short: number[] = [];
    const err = await acquireLock(scripted(Array(10).fill(other)), request(), {
      timeoutMs: 2_200,
      now: () => t,
      sleep: async (ms) => {
        short.push(ms);
        t += ms;
      },
    }).catch((e: unknown) => e);
    expect(short).toEqual([500, 1000, 700]);
    expect((err as Error).message).toContain("; waited 2.2s; nothing was written");
  });
});

describe("LocalLock: a file of this machine", () => {
  const space: ProcessSpace = { host: hostname(), boot_id: "boot-1", pid_ns: "pid:[1]" };

  it("one taker at a time; release by id only; a holder of this machine whose process is gone is replaced, and said", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-lock-"));
    try {
      const alive = new Set([100, 200]);
      const lock = (s: ProcessSpace = space) => new LocalLock(join(dir, "locks"), { baseUrl: "http://127.0.0.1:4010", realm: "demo" }, s, (p) => alive.has(p));
      const a = await lock().take(request({ host: space.host, pid: 100 }));
      if (!("taken" in a)) throw new Error("not taken");
      const b = await lock().take(request({ host: space.host, pid: 200 }));
      expect(b).toEqual({ held: a.taken });
      // Another service (another base URL) is another lock.
      const other = new LocalLock(join(dir, "locks"), { baseUrl: "http://127.0.0.1:4011", realm: "demo" }, space);
      expect("taken" in (await other.take(request({ host: space.host })))).toBe(true);
      expect(await lock().release("not-it")).toEqual({ other: a.taken });
      expect(await lock().holder()).toEqual(a.taken);
      // The holder's process is gone (same host, boot and pid namespace): the next take replaces it.
      alive.delete(100);
      const c = await lock().take(request({ host: space.host, pid: 200 }));
      expect(c).toMatchObject({ taken: { pid: 200 }, tookOver: { id: a.taken.id } });
      // A holder of another pid namespace (a container) may be alive for all this machine can tell.
      alive.delete(200);
      const inContainer = await lock({ ...space, pid_ns: "pid:[2]" }).take(request({ host: space.host, pid: 300 }));
      expect("held" in inContainer).toBe(true);
      // After a reboot, every holder of the boot before is gone.
      const rebooted = await lock({ ...space, boot_id: "boot-2" }).take(request({ host: space.host, pid: 300 }));
      expect("taken" in rebooted).toBe(true);
      if (!("taken" in rebooted)) return;
      expect(await lock().release(rebooted.taken.id)).toBe("released");
      expect(await lock().holder()).toBeUndefined();
      expect(await lock().release(rebooted.taken.id)).toBe("free");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a lock let go while a write may still land", () => {
  it("is left as a released record owing its wait: nobody holds it, the next take takes it over and is told the wait; the machine's folder ignores TMPDIR", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-lock-released-"));
    try {
      const lock = new LocalLock(join(dir, "locks"), { baseUrl: "http://127.0.0.1:4010", realm: "demo" });
      const a = await lock.take(request({ host: hostname(), pid: process.pid, request_deadline_ms: 1500 }));
      if (!("taken" in a)) throw new Error("not taken");
      const leave = releasedRecord(a.taken, deadlineOf(a.taken), "released by revsync unlock", request());
      expect(await lock.release(a.taken.id, leave)).toBe("released");
      expect(await lock.holder()).toMatchObject({ released: { lock: a.taken.id, why: "released by revsync unlock" }, request_deadline_ms: 1500 });
      expect(await lock.live()).toBeUndefined();
      const b = await lock.take(request({ host: hostname(), pid: process.pid }));
      expect(b).toMatchObject({ taken: { pid: process.pid }, tookOver: { released: { lock: a.taken.id }, request_deadline_ms: 1500 } });
      // A lock an earlier revsync took records no deadline: its defaults' cap is waited out.
      expect(deadlineOf({ ...a.taken, request_deadline_ms: undefined })).toBe(DEFAULT_REQUEST_DEADLINE_MS);
      expect(machineLockDir({ TMPDIR: "/var/folders/x/T" }, "darwin")).toBe("/tmp/revsync-locks");
      expect(machineLockDir({ TMP: "C:\\Users\\a\\Temp", ProgramData: "C:\\ProgramData" }, "win32")).toMatch(/^C:\\ProgramData.revsync.locks$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("LocalLock: what may lie at its name", () => {
  it("a FIFO or a link to a device at the lock's name (anyone may add one to the folder) is refused, never read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-lock-fifo-"));
    try {
      const lock = new LocalLock(dir, { baseUrl: "http://127.0.0.1:4010", realm: "demo" });
      execFileSync("mkfifo", [lock.path]);
      await expect(lock.take(request())).rejects.toThrow(`cannot read the lock ${lock.path}: it is a named pipe (FIFO), not a regular file`);
      rmSync(lock.path);
      symlinkSync("/dev/zero", lock.path);
      await expect(lock.holder()).rejects.toThrow("it is a character device, not a regular file");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the git lock's names", () => {
  it("a ref per environment, hex where the name cannot be a ref; credentials in URLs never shown", () => {
    expect(lockRef("production")).toBe("refs/revsync/locks/production");
    expect(lockRef("eu west")).toBe(`refs/revsync/locks/x-${Buffer.from("eu west").toString("hex")}`);
    expect(lockRef("a..b")).toMatch(/^refs\/revsync\/locks\/x-/);
    expect(withoutCredentials("fatal: unable to access 'https://gitlab-ci-token:glcbt-secret@gitlab.example/g/p.git/': 403")).toBe(
      "fatal: unable to access 'https://***@gitlab.example/g/p.git/': 403",
    );
  });
});

describe("the git lock's remote, as this clone names it", () => {
  it("says the remote's URL (a fork's origin is another repository), with credentials blanked; the ref is the tenant's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-gitlock-"));
    try {
      execFileSync("git", ["init", "-q", dir]);
      execFileSync("git", ["-C", dir, "remote", "add", "origin", "https://ci:hunter2@git.example.com/fork/policies.git"]);
      const ref = tenantLockRef(tenantIdentity("https://Revenue.example.com/", "acme"));
      expect(ref).toMatch(/^refs\/revsync\/tenant-locks\/revenue\.example\.com-acme-[0-9a-f]{16}$/);
      const lock = new GitLock({ cwd: dir, remote: "origin", environment: "production", ref, env: process.env });
      expect(await lock.describe()).toBe(`git remote origin (https://***@git.example.com/fork/policies.git), ref ${ref}`);
      // Legacy: the ref an earlier revsync named by the environment.
      expect(new GitLock({ cwd: dir, remote: "origin", environment: "production", env: process.env }).ref).toBe("refs/revsync/locks/production");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
