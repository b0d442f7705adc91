import { execFileSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, cliProcess, DEMO_ENV, dropKeptLock, useEmulator, type CliResult } from "../src/testing/helpers.js";

// One writer even when a run is killed, TMPDIRs differ or the answer to the lock's push is lost: real
// processes (kill -9 is the point), real git, against the emulator run as the interface promises the
// service (--ignore-if-match). Deadlines are short (REVSYNC_TIMEOUT_MS), so the waits are too.

const fx = useEmulator({ honourIfMatch: false, clear: ["faults"] });
const TC = "tenant-configuration/Default Tenant Configuration";

/** A proxy in front of the emulator that tells each request as it arrives (before the emulator has
 *  answered or processed it), and holds it, its body read whole, for as long as `seen` says: a test acts
 *  on the moment a write is on its way, never on a timer. A request whose sender is gone meanwhile still
 *  goes on, as one a dead apply left in the network does. */
function arrivals(
  target: () => string,
  seen: (method: string, body: string) => Promise<void> | undefined,
  answered: (body: string) => void = () => undefined,
): { url: () => string; server: Server } {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    await seen(req.method ?? "", body.toString());
    const up = request(new URL(req.url ?? "/", target()), { method: req.method, headers: req.headers }, (answer) => {
      answered(body.toString());
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on("error", () => res.destroy());
    res.on("error", () => undefined);
    up.end(body);
  });
  return { url: () => `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

/** A policy repo aimed at `url` whose tenant configuration sets the contra account to `account`. */
function repo(url: string, account: string, lock = ""): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-takeover-"));
  fx.dirs.push(dir);
  writeFileSync(join(dir, "revsync.yaml"), `version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: ${url}\n    realm: demo\n${lock}`);
  mkdirSync(join(dir, "policies"));
  writeFileSync(
    join(dir, "policies", "tc.yaml"),
    `apiVersion: revsync/v1\nkind: TenantConfiguration\nmetadata: { name: Default Tenant Configuration }\nspec: { manual_journal_contra_account: ${account} }\n`,
  );
  return dir;
}
const account = async (): Promise<string> =>
  ((await fx.emu.admin("GET", "state")) as any).tenants[0].tenantConfigurations[0].compliance_spec[0].manual_journal_contra_account;

describe("a takeover waits for the dead", () => {
  let onArrival: (method: string, body: string) => Promise<void> | undefined = () => undefined;
  let onAnswer: (body: string) => void = () => undefined;
  const proxy = arrivals(
    () => fx.emu.url,
    (method, body) => onArrival(method, body),
    (body) => onAnswer(body),
  );
  beforeAll(() => new Promise<void>((r) => proxy.server.listen(0, "127.0.0.1", r)));
  afterAll(() => new Promise<void>((r) => proxy.server.close(() => r())));

  it("kill -9 while its slow write is on its way, and an immediate second apply: it waits out the dead apply's request deadline, then never says done over the write that landed", async () => {
    // The killed apply's update is slow (1 s in the service, and held in the network until the next apply
    // holds the lock); its requests end within 2 s (REVSYNC_TIMEOUT_MS, answer and body), which its lock
    // records. The next apply's own update is quick: without the wait, it would land first and be undone.
    await fx.emu.admin("POST", "faults", { kind: "latency", latency_ms: 1000, method: "PATCH", body_contains: "MJ-DEAD" });
    const a = repo(proxy.url(), "MJ-DEAD");
    const b = repo(proxy.url(), "MJ-NEXT");
    let dead: ChildProcess | undefined;
    let second: Promise<CliResult> | undefined;
    let locked: () => void = () => undefined;
    const deadAnswered = new Promise<void>((r) => (onAnswer = (body) => body.includes("MJ-DEAD") && r()));
    // The moment A's PATCH is on its way: A is killed, B starts at once; A's PATCH goes on once B holds the lock.
    onArrival = (method) => {
      if (method !== "PATCH" || !dead || second) return undefined;
      dead.kill("SIGKILL");
      const gate = new Promise<void>((r) => (locked = r));
      second = cliProcess(["apply", "--auto-approve"], { cwd: b, env: DEMO_ENV, when: { stderr: "Locked environment", act: () => locked() } });
      return gate;
    };
    const killed = await cliProcess(["apply", "--auto-approve"], {
      cwd: a,
      env: { ...DEMO_ENV, REVSYNC_TIMEOUT_MS: "1000" },
      when: { stderr: "Locked environment", act: (child) => (dead = child) },
    });
    expect(killed.code).toBe(null);
    const next = (await second) as CliResult;
    onArrival = () => undefined;
    // A's write has been processed by the service (its answer came back to the network, with nobody left
    // to read it).
    await deadAnswered;
    expect(next.stderr).toMatch(/took over the lock of an apply on this machine that is no longer running: \S+ on host \S+ \(pid \d+\)/);
    expect(next.stderr).toContain("waiting 2s (its request deadline) for any write it sent to land; then each write reads the service again before it is sent");
    // A's write landed while B waited. B either wrote after it (its own value holds) or found it and said the
    // configuration changed since its plan: never a clean done under it.
    const patches = (await fx.emu.writes()).filter((w) => w.method === "PATCH");
    const final = await account();
    if (next.code === 0) {
      expect([final, patches.length]).toEqual(["MJ-NEXT", 2]);
    } else {
      expect([final, patches.length]).toEqual(["MJ-DEAD", 1]);
      expect(next.stdout).toMatch(new RegExp(`^blocked +update +${TC}: `, "m"));
      expect(next.stdout).not.toMatch(/^done /m);
    }
  });

  it("two applies with different TMPDIRs share the machine's lock: the second names the first and writes nothing", async () => {
    const a = repo(proxy.url(), "MJ-ONE");
    const b = repo(proxy.url(), "MJ-TWO");
    let second: Promise<CliResult> | undefined;
    // The first apply's PATCH is held at the proxy until the second has met its lock.
    onArrival = (method) => {
      if (method !== "PATCH" || second) return undefined;
      second = cli(["apply", "--auto-approve"], { cwd: b, env: { ...DEMO_ENV, TMPDIR: mkdtempSync(join(tmpdir(), "revsync-tmpdir-b-")) } });
      return second.then(() => undefined);
    };
    const first = await cliProcess(["apply", "--auto-approve"], { cwd: a, env: { ...DEMO_ENV, TMPDIR: mkdtempSync(join(tmpdir(), "revsync-tmpdir-a-")) } });
    const lost = (await second) as CliResult;
    expect(first.code, first.stderr).toBe(0);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/environment "demo" is locked by another apply: .*\(pid \d+\).*; nothing was written/);
    expect(await account()).toBe("MJ-ONE");
    onArrival = () => undefined;
  });
});

describe("a lock never let go while a write may still land", () => {
  it("an apply whose write revsync stopped waiting for leaves the lock released, owing the rest of that write's deadline; the next apply waits it out", async () => {
    // The first PATCH takes 4.5 s in the service; revsync waits 3 s for an answer (REVSYNC_TIMEOUT_MS: its
    // requests end within 6 s), reads back, finds it not landed yet and sends it again. The apply ends
    // some 3.3 s in, so about 2.7 s of that write's deadline are owed: margin enough that a slow worker
    // (at 1 s and 1.5 s, it had 0.8 s, and one quiet run in four ended past the deadline, owing nothing)
    // never makes this a race.
    await fx.emu.admin("POST", "faults", { kind: "latency", latency_ms: 4500, method: "PATCH", times: 1 });
    const dir = repo(fx.emu.url, "MJ-CUT");
    const env = { ...DEMO_ENV, REVSYNC_TIMEOUT_MS: "3000" };
    const cut = await cli(["apply", "--auto-approve", "--format", "json"], { cwd: dir, env });
    const report = JSON.parse(cut.stdout);
    expect(report.lock.note).toMatch(/^released with [\d.]+s owed: the next apply waits that long before it writes \(a write of an apply was cut short/);
    const status = JSON.parse((await cli(["lock", "status", "--format", "json"], { cwd: dir, env })).stdout);
    expect(status).toMatchObject({ locked: false, released: { why: expect.stringContaining("cut short") } });
    expect(status.released.next_apply_waits_ms).toBeGreaterThan(0);
    const next = await cli(["apply", "--auto-approve"], { cwd: repo(fx.emu.url, "MJ-AFTER"), env });
    expect(next.stderr).toMatch(
      /took over a lock released while a write sent under it may still land \(a write of an apply was cut short[^)]*\); waiting [\d.]+s/,
    );
    // The slow PATCH landed while the next apply waited (the service journals a request once processed),
    // before its guard read: whatever that apply then did, it did knowing it.
    expect((await fx.emu.writes()).filter((w) => w.method === "PATCH").length).toBeGreaterThanOrEqual(2);
  });
});

describe("a git lock that knows itself", () => {
  it("the remote updates the lock's ref and the answer to the push is lost: apply reads the ref, finds its own lock id, applies, and releases it", async () => {
    const remote = mkdtempSync(join(tmpdir(), "revsync-remote-"));
    fx.dirs.push(remote);
    execFileSync("git", ["init", "-q", "--bare", remote]);
    // Drops the answer to a push that creates a ref: the ref is committed, then the receiving end dies.
    const hook = join(remote, "hooks", "reference-transaction");
    writeFileSync(
      hook,
      '#!/bin/sh\n[ "$1" = committed ] || exit 0\nwhile read -r old new ref; do\n  case "$old" in 0000000000000000000000000000000000000000) kill -9 $PPID ;; esac\ndone\nexit 0\n',
    );
    chmodSync(hook, 0o755);
    const dir = repo(fx.emu.url, "MJ-GIT", "    lock: git\n");
    execFileSync("git", ["init", "-q", dir]);
    execFileSync("git", ["-C", dir, "remote", "add", "origin", `file://${remote}`]);
    const r = await cli(["apply", "--auto-approve"], { cwd: dir, env: DEMO_ENV });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Locked environment "demo" \(git remote origin .*; lock id [0-9a-f]{40}\)\./);
    expect(r.stderr).not.toContain("locked by another apply");
    expect(await account()).toBe("MJ-GIT");
    expect(execFileSync("git", ["-C", remote, "for-each-ref", "refs/revsync/"], { encoding: "utf8" })).toBe("");
    dropKeptLock(fx.emu.url);
  });
});
