import { describe, expect, it } from "vitest";
import { cli, DEMO_ENV, useEmulatorRepo } from "../src/testing/helpers.js";

// Reads change nothing, so they persist (503, 502 and dropped connections alike, within the run's time
// limit), and a read that still fails fails only what it feeds: the plan, drift and apply say what was
// not read, do the rest, and exit 1; the next run reads it again. Retry waits are capped (tests count
// sends, not time): here at 1 ms, as each run waits out some ten of them.

const fx = useEmulatorRepo();
const run = (args: string[]) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, REVSYNC_MAX_RETRY_WAIT_MS: "1" } });
const SSP = "/policy/ssp";

describe("reads that persist", () => {
  it("seven dropped connections, a 502 and a 503 on one read: it is sent again until it is answered, and the plan is whole", async () => {
    await fx.emu.admin("POST", "faults", {
      faults: [
        { kind: "drop", method: "GET", path: SSP, query: "policy_name=Hardware SSP", times: 7 },
        { kind: "status", status: 502, method: "GET", path: "/tenant-configurations", times: 1 },
        { kind: "status", status: 503, method: "GET", path: "/tenant-configurations", times: 1 },
      ],
    });
    const plan = await run(["plan", "--format", "json"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout).unread).toBeUndefined();
    const journal = await fx.emu.admin<{ method: string; path: string; query?: string; fault?: string }[]>("GET", "requests");
    expect(journal.filter((j) => j.fault === "drop")).toHaveLength(7);
  });

  it("a policy whose detail never answers: plan shows everything else and that policy as not read, exit 1; apply does the rest and exits 1; once the service answers, the next apply finishes", async () => {
    await fx.emu.admin("POST", "faults", { kind: "status", status: 503, method: "GET", path: SSP, query: "policy_name=Hardware SSP" });
    const json = await run(["plan", "--format", "json"]);
    expect(json.code).toBe(1);
    const plan = JSON.parse(json.stdout);
    expect(plan.unread).toEqual([{ address: "ssp/Hardware SSP", error: expect.stringMatching(/^GET \S+ssp\S* failed \(503/) }]);
    expect(plan.changes.map((c: any) => c.address).filter((a: string) => a.startsWith("ssp/Hardware SSP"))).toEqual([]);
    expect(plan.changes.map((c: any) => c.action)).toEqual(expect.arrayContaining(["update", "create", "review", "approve"]));
    expect(json.stderr).toContain("part of the service could not be read, even after retries: ssp/Hardware SSP");

    const text = await run(["plan"]);
    expect(text.stdout).toMatch(
      / - ssp\/Hardware SSP \(not read\)\n {6}reason: GET \S+ failed \(503[^\n]*; nothing is said of it or of what lies below it: run again to read it/,
    );
    expect(text.stdout).toMatch(/; 1 not read \(the service did not answer: the plan says nothing of it\)\.$/m);
    const markdown = await run(["plan", "--format", "markdown"]);
    expect(markdown.stdout).toContain("> **Not read**: `ssp/Hardware SSP`: GET");

    const drift = await run(["drift"]);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(" - ssp/Hardware SSP (not read)");

    const apply = await run(["apply", "--auto-approve"]);
    expect(apply.code).toBe(1);
    expect(apply.stdout).toMatch(/^done +update +tenant-configuration\//m);
    expect(apply.stderr).toContain("Error: part of the service could not be read, even after retries: ssp/Hardware SSP");
    expect((await fx.emu.writes()).some((w) => w.path.includes("Hardware"))).toBe(false);

    await fx.emu.admin("DELETE", "faults");
    const again = await run(["apply", "--auto-approve"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/done +review +ssp\/Hardware SSP\/batch\/FY26-H2/);
    expect((await run(["plan", "--detailed-exitcode"])).code).toBe(0);
  });

  it("the SSP list never answers: the tenant configuration is planned, every SSP policy is said not read", async () => {
    await fx.emu.admin("POST", "faults", { kind: "status", status: 502, method: "GET", path: SSP });
    const r = await run(["plan", "--format", "json"]);
    expect(r.code).toBe(1);
    const plan = JSON.parse(r.stdout);
    expect(plan.unread).toEqual([{ address: "ssp", error: expect.stringMatching(/failed \(502/) }]);
    expect(plan.changes.map((c: any) => c.address)).toEqual(["tenant-configuration/Default Tenant Configuration"]);
    expect((await run(["plan"])).stdout).toContain(" - ssp/… (all of it) (not read)");
  });
});
