import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, cli, cliProcess, DEMO_ENV, dropKeptLock, useEmulatorRepo } from "../src/testing/helpers.js";

// Apply never writes the wrong thing (issue 11), with the built CLI as a process of its own where the
// process is the point: the exit code it sets, and signals (npm run test:slow; docs/development.md).
// The emulator's journal is the witness of what was sent; the in-process tests are
// test/apply-safety.e2e.test.ts.

const fx = useEmulatorRepo();
const FAST = { REVSYNC_MAX_RETRY_WAIT_MS: "5" };
const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...FAST, ...env } });

describe("the process", () => {
  it("exits with the command's code, as the process sets it: 2 with changes (--detailed-exitcode), 1 on bad input (nothing sent), 0 once applied", async () => {
    // The other tests run the command entry in process; here the built CLI runs as a process of its own.
    const opts = { cwd: fx.repo, env: { ...DEMO_ENV, ...FAST } };
    expect((await cliProcess(["plan", "--detailed-exitcode", "--quiet"], opts)).code).toBe(2);
    await fx.emu.admin("DELETE", "requests");
    const bad = await cliProcess(["apply", "--auto-approve", "--concurrency", "0"], opts);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--concurrency must be a whole number from 1 to 64");
    expect(await fx.emu.writes()).toEqual([]);
    expect((await cliProcess(["apply", "--auto-approve", "--quiet"], opts)).code).toBe(0);
  });
});

describe("interrupts", () => {
  it("SIGINT: nothing new starts, what is in flight finishes, the report agrees with the service, exit 130", async () => {
    // One step at a time; the signal comes as the second step (the create) starts: the update is done,
    // the create is in flight (1.5 s of latency: a wide margin for the signal) and finishes, nothing
    // else starts.
    await fx.emu.admin("POST", "faults", { faults: [{ kind: "latency", latency_ms: 1500, method: "POST", path: "/policy/ssp" }] });
    // A signal to the process: the CLI runs as one.
    const r = await cliProcess(["apply", "--auto-approve", "--concurrency", "1", "--verbose"], {
      cwd: fx.repo,
      env: DEMO_ENV,
      when: { stderr: "start create ssp/Training Courses SSP", act: (child) => child.kill("SIGINT") },
    });
    expect(r.code).toBe(130);
    expect(r.stdout).toContain("Apply interrupted: 2 done, 0 failed, 5 skipped.");
    const done = 2;
    const left = JSON.parse((await run(["plan", "--format", "json"])).stdout);
    expect(left.changes.length).toBe(7 - done);
    await fx.emu.admin("DELETE", "faults");
    expect((await run(["apply", "--auto-approve"])).code).toBe(0);
    expect((await run(["plan", "--detailed-exitcode"])).code).toBe(0);
  });

  it("a second SIGINT during apply stops at once: it lists the steps already finished and names the requests in flight", async () => {
    // The batches' reviews and approves are held (until the next test's reset); the tenant configuration's
    // update and the create are not. Held, not slowed: a slow review could finish before a loaded machine
    // delivered the first interrupt.
    await fx.emu.admin("POST", "faults", { faults: [{ kind: "latency", latency_ms: 600_000, method: "PATCH", path: "/policy/ssp" }] });
    const child = spawn(process.execPath, [BIN, "apply", "--auto-approve", "--verbose"], {
      cwd: fx.repo,
      env: { ...process.env, ...DEMO_ENV, NO_COLOR: "1", CI: "" },
    });
    let stderr = "";
    let stdout = "";
    let signals = 0;
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      // Driven by what apply prints, not by timing: two steps have finished and a slow one has started;
      // then the first interrupt is seen.
      if (signals === 0 && stderr.includes("done create ssp/Training Courses SSP") && stderr.includes("start review ssp/Hardware SSP/batch/FY26-H2")) {
        signals++;
        child.kill("SIGINT");
      } else if (signals === 1 && stderr.includes("starting nothing new")) {
        signals++;
        child.kill("SIGINT");
      }
    });
    const code = await new Promise<number | null>((r) => child.on("close", r));
    expect(code).toBe(130);
    const said = stderr.slice(stderr.indexOf("interrupted again"));
    expect(said).toMatch(
      /^interrupted again: stopping now\.\nFinished before the stop:\n {2}done {4}update {3}tenant-configuration\/Default Tenant Configuration: updated\n {2}done {4}create {3}ssp\/Training Courses SSP: created\nThe outcome of these requests in flight is unknown:\n/,
    );
    expect(said).toContain("\n  review ssp/Hardware SSP/batch/FY26-H2\n");
    expect(said).toContain("Run revsync plan to see what landed.");
    expect(stdout).not.toContain("Apply complete");
    // A write in flight: the lock is kept, never released under it; the next apply takes it over once this
    // process is gone, after waiting out its request deadline.
    expect(stderr).toContain(
      'the lock of environment "demo" is kept: writes were in flight when the run stopped; the next apply on this machine takes it over',
    );
    const status = JSON.parse((await run(["lock", "status", "--format", "json"])).stdout);
    expect(status).toMatchObject({ locked: true, holder_process: "gone", holder: { pid: child.pid, request_deadline_ms: 90_000 } });
    dropKeptLock(fx.emu.url);
  });
});
