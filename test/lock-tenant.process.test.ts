import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GitLock, tenantLockRef } from "../src/lock/git-lock.js";
import { LocalLock, machineLockDir } from "../src/lock/local-lock.js";
import type { LockRequest } from "../src/lock/lock.js";
import { tenantIdentity } from "../src/tenant.js";
import { BIN, cli, DEMO_ENV, useEmulator, type CliResult } from "../src/testing/helpers.js";

// One lock per tenant, whatever an environment is called and however its URL is spelt, and unlock that
// never releases a live apply's lock unasked: through the real CLI against the emulator run as the
// interface promises the service (--ignore-if-match), with the git backend on a real bare repository.

const fx = useEmulator({ honourIfMatch: false, clear: ["faults"] });
const port = (): string => new URL(fx.emu.url).port;

const tmp = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  fx.dirs.push(d);
  return d;
};

/** A policy repo whose revsync.yaml holds `environments` as written, with one tenant configuration file. */
function repo(environments: string, spec: string): string {
  const dir = tmp("revsync-tenant-");
  writeFileSync(join(dir, "revsync.yaml"), `version: 1\npolicies: policies\nenvironments:\n${environments}`);
  mkdirSync(join(dir, "policies"));
  writeFileSync(
    join(dir, "policies", "tc.yaml"),
    `apiVersion: revsync/v1\nkind: TenantConfiguration\nmetadata: { name: Default Tenant Configuration }\nspec: { ${spec} }\n`,
  );
  return dir;
}
const env = (name: string, baseUrl: string, lock = ""): string => `  ${name}:\n    base_url: ${baseUrl}\n    realm: demo\n${lock ? `    lock: ${lock}\n` : ""}`;

const holder = (over: Partial<LockRequest> = {}): LockRequest => ({
  environment: "demo",
  user: "carol",
  service_user: "alice",
  host: "runner-9",
  pid: 7,
  ci_run_url: null,
  since: new Date().toISOString(),
  plan_checksum: null,
  revsync_version: "0.0.9",
  ...over,
});

const liveTc = async (): Promise<Record<string, unknown>> =>
  ((await fx.emu.admin("GET", "state")) as any).tenants[0].tenantConfigurations[0].compliance_spec[0];

describe("one writer per tenant", () => {
  it("two repos aimed at one emulator as http://127.0.0.1:P and http://localhost:P/: one lock, so one apply writes and the other names it; no change is lost", async () => {
    const locks = { TMPDIR: tmp("revsync-locks-") };
    const a = repo(env("demo", `http://127.0.0.1:${port()}`), "ui_mode: Modern");
    const b = repo(env("loopback", `http://localhost:${port()}/`), "manual_journal_contra_account: MJ-RACE-B");
    for (const dir of [a, b]) expect((await cli(["plan", "--out", "p.json", "--quiet"], { cwd: dir, env: { ...DEMO_ENV, ...locks } })).code).toBe(0);
    // B starts once A holds its lock, and A's PATCH is held until B has met it: two applies at once, every
    // time, however long B takes to start.
    await fx.emu.admin("POST", "faults", { kind: "latency", latency_ms: 600_000, method: "PATCH" });
    const args = ["apply", "p.json", "--auto-approve"];
    const release = { stderr: "is locked by another apply", act: () => fx.emu.admin("DELETE", "faults") };
    let second: Promise<CliResult> | undefined;
    const won = await cli(args, {
      cwd: a,
      env: { ...DEMO_ENV, ...locks },
      when: { stderr: "Locked environment", act: () => (second = cli(args, { cwd: b, env: { ...DEMO_ENV, ...locks }, when: release })) },
    });
    const lost = (await second) as CliResult;
    expect(won.code, won.stderr).toBe(0);
    expect(won.stdout).toContain("1 done");
    // The waiter names the holder, and the environment the holder applies to under its own name.
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(
      /environment "loopback" is locked by another apply: .* to environment "demo" \(the same tenant\) as service user alice, lock id [0-9a-f]{40}; nothing was written/,
    );
    const tc = await liveTc();
    expect(tc.ui_mode).toBe("Modern");
    expect(tc.manual_journal_contra_account).not.toBe("MJ-RACE-B");
  });

  it("two environments of one repo aimed at one tenant, and REVSYNC_BASE_URL on a third, take one git lock; lock status names the remote's URL", async () => {
    const remote = tmp("revsync-remote-");
    execFileSync("git", ["init", "-q", "--bare", remote]);
    const dir = repo(
      env("demo", fx.emu.url, "git") +
        env("copy", `${fx.emu.url.replace("127.0.0.1", "localhost")}/`, "git") +
        env("prod", "https://revenue.example.invalid", "git"),
      "ui_mode: Modern",
    );
    execFileSync("git", ["init", "-q", dir]);
    execFileSync("git", ["-C", dir, "remote", "add", "origin", `file://${remote}`]);
    // An apply of environment demo holds the tenant's lock (on another machine).
    const tenant = tenantIdentity(fx.emu.url, "demo");
    const held = await new GitLock({ cwd: dir, remote: "origin", environment: "demo", ref: tenantLockRef(tenant), env: process.env }).take(holder());
    const id = "taken" in held ? held.taken.id : "";
    for (const [name, extra] of [
      ["copy", {}],
      ["prod", { REVSYNC_BASE_URL: `http://LOCALHOST:${port()}/` }],
    ] as const) {
      const r = await cli(["apply", "--env", name, "--auto-approve"], { cwd: dir, env: { ...DEMO_ENV, ...extra } });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`environment "${name}" is locked by another apply: carol on host runner-9 (pid 7), since `);
      expect(r.stderr).toContain(`to environment "demo" (the same tenant) as service user alice, lock id ${id}; nothing was written`);
    }
    expect(await fx.emu.writes()).toEqual([]);
    const status = await cli(["lock", "status", "--env", "copy"], { cwd: dir, env: DEMO_ENV });
    expect(status.stdout).toContain(`is locked (git remote origin (file://${remote}), ref ${tenantLockRef(tenant)}):`);
    expect(status.stdout).toContain("If that apply is dead, release it: revsync unlock --env copy ");
  });

  it("a lock under the name an earlier revsync gave it is honoured: apply meets it, lock status shows it, unlock releases it", async () => {
    const remote = tmp("revsync-remote-");
    execFileSync("git", ["init", "-q", "--bare", remote]);
    const dir = repo(env("demo", fx.emu.url, "git"), "ui_mode: Modern");
    execFileSync("git", ["init", "-q", dir]);
    execFileSync("git", ["-C", dir, "remote", "add", "origin", `file://${remote}`]);
    // An earlier revsync's lock: refs/revsync/locks/<environment> (its request deadline short: once unlock
    // released it, the next apply waits it out).
    const old = await new GitLock({ cwd: dir, remote: "origin", environment: "demo", env: process.env }).take(holder({ request_deadline_ms: 50 }));
    const id = "taken" in old ? old.taken.id : "";
    const r = await cli(["apply", "--auto-approve"], { cwd: dir, env: DEMO_ENV });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`lock id ${id}; nothing was written`);
    expect(await fx.emu.writes()).toEqual([]);
    // Taking the new name and finding the old one held, apply let the new one go again.
    expect(execFileSync("git", ["-C", remote, "for-each-ref", "refs/revsync/"], { encoding: "utf8" })).toBe(`${id} commit\trefs/revsync/locks/demo\n`);
    const status = await cli(["lock", "status", "--env", "demo"], { cwd: dir, env: DEMO_ENV });
    expect(status.stdout).toContain("is locked (git remote origin, ref refs/revsync/locks/demo, the name an earlier revsync gave this lock):");
    const unlock = await cli(["unlock", "--env", "demo", id, "--force"], { cwd: dir, env: DEMO_ENV });
    expect(unlock.code, unlock.stderr).toBe(0);
    const after = await cli(["apply", "--auto-approve"], { cwd: dir, env: DEMO_ENV });
    expect(after.code, after.stderr).toBe(0);
    expect(execFileSync("git", ["-C", remote, "for-each-ref", "refs/revsync/"], { encoding: "utf8" })).toBe("");
  });
});

describe("unlock never releases a live apply's lock unasked", () => {
  /** A repo aimed at the emulator (a file of this machine is its lock), and that lock as a test holds it:
   *  in the machine's lock folder, or with `earlier`, where an earlier revsync kept it (TMPDIR's). */
  function localRepo(): { dir: string; locks: { TMPDIR: string }; lock: (earlier?: boolean) => LocalLock } {
    const locks = { TMPDIR: tmp("revsync-locks-") };
    const dir = repo(env("demo", fx.emu.url), "ui_mode: Modern");
    const service = { baseUrl: fx.emu.url, realm: "demo" };
    const lock = (earlier = false) =>
      earlier ? new LocalLock(join(locks.TMPDIR, "revsync-locks"), service, undefined, undefined, true) : new LocalLock(machineLockDir(), service);
    return { dir, locks, lock };
  }
  // The machine's lock folder is shared: the file this emulator's tenant left goes with the test.
  afterEach(() => rmSync(new LocalLock(machineLockDir(), { baseUrl: fx.emu.url, realm: "demo" }).path, { force: true }));

  it("a holder running on this host (this test's own process) is refused without --force, lock status says it runs; an earlier revsync's local lock is met by apply", async () => {
    const { dir, locks, lock } = localRepo();
    const taken = await lock(true).take(holder({ host: hostname(), pid: process.pid }));
    const id = "taken" in taken ? taken.taken.id : "";
    const r = await cli(["apply", "--auto-approve"], { cwd: dir, env: { ...DEMO_ENV, ...locks } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`(pid ${process.pid})`);
    expect(await fx.emu.writes()).toEqual([]);
    const status = await cli(["lock", "status", "--env", "demo"], { cwd: dir, env: { ...DEMO_ENV, ...locks } });
    expect(status.stdout).toContain(
      `Its process (pid ${process.pid}) is running on this host: that apply is alive; wait for it (apply --lock-timeout). Only --force releases it, and that apply then writes beside the next one: revsync unlock --env demo ${id} --force`,
    );
    const refused = await cli(["unlock", "--env", "demo", id], { cwd: dir, env: { ...DEMO_ENV, ...locks } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is held by a process that is running on this host (pid ${process.pid})`);
    expect(refused.stderr).toContain("nothing was released");
    expect(await lock(true).holder()).toMatchObject({ id });
    const forced = await cli(["unlock", "--env", "demo", id, "--force"], { cwd: dir, env: { ...DEMO_ENV, ...locks } });
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain(`releasing the lock of a process that is running on this host (pid ${process.pid}), as --force says`);
    expect(await lock(true).holder()).toBeUndefined();
  });

  it("a holder whose process is gone: lock status says so, and that the next apply takes it over", async () => {
    const { dir, locks, lock } = localRepo();
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    await lock().take(holder({ host: hostname(), pid: dead }));
    const status = await cli(["lock", "status", "--env", "demo"], { cwd: dir, env: { ...DEMO_ENV, ...locks } });
    expect(status.stdout).toContain(
      `Its process (pid ${dead}) is gone: the next apply takes the lock over, after waiting 1m30s (its request deadline) for any write it sent to land (or release it now: revsync unlock --env demo `,
    );
    expect(JSON.parse((await cli(["lock", "status", "--env", "demo", "--format", "json"], { cwd: dir, env: { ...DEMO_ENV, ...locks } })).stdout)).toMatchObject(
      {
        locked: true,
        holder_process: "gone",
      },
    );
  });

  it("on a terminal unlock asks first: 'no' releases nothing, 'yes' releases", async () => {
    const { dir, locks, lock } = localRepo();
    const taken = await lock().take(holder());
    const id = "taken" in taken ? taken.taken.id : "";
    const onTerminal = (answer: string): Promise<{ code: number; out: string }> =>
      new Promise((resolve) => {
        const child = spawn("script", ["-qfec", `${process.execPath} ${BIN} unlock --env demo ${id}`, "/dev/null"], {
          cwd: dir,
          env: { ...process.env, ...DEMO_ENV, ...locks, CI: "", NO_COLOR: "1" },
        });
        let out = "";
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("Only 'yes' will be accepted:") && !child.stdin.writableEnded) child.stdin.end(answer);
        });
        child.on("close", (code) => resolve({ code: code ?? -1, out }));
      });
    const no = await onTerminal("no\n");
    expect(no.out).toContain("Release it? An apply that still runs would then write beside the next one.");
    expect(no.out).toContain("unlock cancelled: nothing was released");
    expect(no.code).toBe(1);
    expect(await lock().holder()).toMatchObject({ id });
    const yes = await onTerminal("yes\n");
    expect(yes.out).toContain(`Released the lock ${id} of environment "demo"`);
    expect(yes.out).toContain("The next apply waits 1m30s (that apply's request deadline) for any write it sent to land");
    expect(yes.code).toBe(0);
    // Released, owing the next apply the wait: nobody holds it.
    expect(await lock().holder()).toMatchObject({ released: { lock: id }, request_deadline_ms: 90_000 });
    const status = await cli(["lock", "status", "--env", "demo", "--format", "json"], { cwd: dir, env: { ...DEMO_ENV, ...locks } });
    expect(JSON.parse(status.stdout)).toMatchObject({ locked: false, holder: null, released: { lock: id, next_apply_waits_ms: 90_000 } });
  });
});
