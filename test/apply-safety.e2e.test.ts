import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { seedState } from "../src/emulator/seed.js";
import { legacyPlanChecksum, planChecksum } from "../src/plan/model.js";
import { cli, DEMO_ENV, token, useEmulatorRepo } from "../src/testing/helpers.js";

// Apply never writes the wrong thing (issue 11), through the real CLI, with the emulator's journal as
// the witness of what was sent.

const fx = useEmulatorRepo();
const FAST = { REVSYNC_MAX_RETRY_WAIT_MS: "5" };
const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...FAST, ...env } });
const journal = () => fx.emu.admin<{ method: string; path: string; query: string; status: number; fault?: string }[]>("GET", "requests");
const SSP = "/apis/policy-sets/v1/policy/ssp";

describe("a saved plan is bound to the tenant it was made for", () => {
  it("applied with another tenant's URL or realm: refused, both named, zero requests (two-tenant emulator)", async () => {
    const demo = seedState("demo").tenants[0];
    const prod = structuredClone(demo);
    if (!demo || !prod) throw new Error("no demo tenant");
    prod.realm = "prod";
    await fx.emu.admin("POST", "reset", { state: { version: 1, seq: 5000, tokens: {}, tenants: [demo, prod] } });
    const file = join(fx.repo, "demo.plan.json");
    expect((await run(["plan", "--out", file])).code).toBe(0);
    const saved = JSON.parse(readFileSync(file, "utf8"));
    expect(saved).toMatchObject({ base_url: fx.emu.url, auth_url: fx.emu.url, realm: "demo", user: "alice", checksum: expect.stringMatching(/^sha256:/) });
    await fx.emu.admin("DELETE", "requests");

    // show renders it offline: no revsync.yaml, no credentials, no request.
    const shown = await cli(["show", file], { cwd: tmpdir() });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      new RegExp(`^Saved plan ${file}, made \\S+Z as alice\\.\nrevsync will make these changes in environment "demo" \\(${fx.emu.url}, realm demo\\):\n`),
    );
    expect(shown.stdout).toContain("Plan: 1 to create, 1 to update, 2 to review, 3 to approve.");
    expect(JSON.parse((await cli(["show", file, "--format", "json"], { cwd: tmpdir() })).stdout)).toEqual(saved);
    expect((await cli(["show", file, "--format", "markdown"], { cwd: tmpdir() })).stdout).toMatch(/^<!-- revsync-plan:demo -->\n### revsync plan for `demo`/);

    const otherUrl = await run(["apply", file, "--auto-approve"], { REVSYNC_BASE_URL: `${fx.emu.url}/tenants/prod`, REVSYNC_REALM: "prod" });
    expect(otherUrl.code).toBe(1);
    expect(otherUrl.stderr).toContain(`base_url: the plan was made for ${fx.emu.url}; this run resolves ${fx.emu.url}/tenants/prod`);
    expect(otherUrl.stderr).toContain("realm: the plan was made for demo; this run resolves prod");
    const otherRealm = await run(["apply", file, "--auto-approve"], { REVSYNC_REALM: "prod" });
    expect(otherRealm.code).toBe(1);
    expect(otherRealm.stderr).toMatch(/was made for another tenant than this run would write to, so nothing was sent/);
    const otherAuth = await run(["apply", file, "--auto-approve"], { REVSYNC_AUTH_URL: "http://127.0.0.1:9" });
    expect(otherAuth.stderr).toContain(`auth_url: the plan was made for ${fx.emu.url}; this run resolves http://127.0.0.1:9`);
    expect(await journal()).toEqual([]);

    // Where it was made, it applies, and the banner names the target written to.
    const ok = await run(["apply", file, "--auto-approve"]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain(`Target: environment "demo", ${fx.emu.url}, realm demo, as alice.`);
  });

  it("a corrupted, hand-edited or schema-invalid plan is a clear error, exit 1, nothing sent", async () => {
    const file = join(fx.repo, "demo.plan.json");
    await run(["plan", "--out", file]);
    const saved = JSON.parse(readFileSync(file, "utf8"));
    await fx.emu.admin("DELETE", "requests");

    writeFileSync(file, readFileSync(file, "utf8").slice(0, 200));
    const cut = await run(["apply", file, "--auto-approve"]);
    expect(cut.stderr).toMatch(/is not a revsync plan: it is not valid JSON/);

    const edited = structuredClone(saved);
    const update = edited.changes.find((c: any) => c.action === "update");
    update.payload.item.manual_journal_contra_account = "MJ-EVIL-999";
    writeFileSync(file, JSON.stringify(edited));
    const tampered = await run(["apply", file, "--auto-approve"]);
    expect(tampered.stderr).toMatch(/was changed after revsync wrote it \(its checksum does not match\), so nothing was applied/);
    // show checks it as apply does: what it shows is what apply would act on.
    const shownTampered = await cli(["show", file]);
    expect(shownTampered.code).toBe(1);
    expect(shownTampered.stderr).toMatch(/was changed after revsync wrote it \(its checksum does not match\), so apply would refuse it/);
    // show applies nothing by definition: it never says "nothing was applied".
    expect(shownTampered.stderr).not.toContain("nothing was applied");

    const invalid = structuredClone(saved);
    invalid.changes[0].action = "delete";
    delete invalid.changes[1].payload;
    writeFileSync(file, JSON.stringify(invalid));
    const bad = await run(["apply", file, "--auto-approve"]);
    // What a tenant configuration's address may carry (the kinds' registry makes the plan's schema).
    expect(bad.stderr).toMatch(
      /is not a valid revsync plan, so nothing was applied:\n {2}changes\.0\.action: must be one of "update", "blocked", "not_in_git", "unsupported"\n {2}changes\.1\.payload: is required\n/,
    );

    // Everything the reviewer is shown is under the checksum: a zeroed summary with no impact, another
    // user or time, each without the checksum computed again, is refused by apply and show alike.
    const forged: string[] = [];
    for (const edit of [
      (p: any) => {
        for (const k of Object.keys(p.summary)) p.summary[k] = 0;
        delete p.impact;
      },
      (p: any) => (p.user = "carol"),
      (p: any) => (p.created_at = "2020-01-01T00:00:00.000Z"),
      (p: any) => p.notes.push("reviewed by the auditors"),
      (p: any) => (p.targets = ["ssp/Hardware SSP"]),
    ]) {
      const copy = structuredClone(saved);
      edit(copy);
      writeFileSync(file, JSON.stringify(copy));
      const applied = await run(["apply", file, "--auto-approve"]);
      const shown = await cli(["show", file]);
      forged.push(`${applied.code} ${shown.code} ${/checksum does not match/.test(applied.stderr)} ${/checksum does not match/.test(shown.stderr)}`);
      expect(applied.stdout).not.toMatch(/^Plan: /m);
      expect(shown.stdout).not.toContain("carol");
    }
    expect(forged).toEqual(Array(5).fill("1 1 true true"));

    // The checksum computed again over a forged summary: the summary is the changes counted, so it is
    // refused all the same.
    const recounted = structuredClone(saved);
    for (const k of Object.keys(recounted.summary)) recounted.summary[k] = 0;
    recounted.checksum = planChecksum(recounted);
    writeFileSync(file, JSON.stringify(recounted));
    const zeroed = await run(["apply", file, "--auto-approve"]);
    expect(zeroed.code).toBe(1);
    expect(zeroed.stderr).toMatch(
      /says its changes are 0 create, 0 update, 0 review, 0 approve, but they are \d+ create, \d+ update, \d+ review, \d+ approve, so nothing was applied/,
    );

    // A plan saved by an older revsync (its checksum of the binding and the changes alone): refused with
    // words that say so, not as an edited file.
    const older = structuredClone(saved);
    older.checksum = legacyPlanChecksum(older);
    writeFileSync(file, JSON.stringify(older));
    const old = await run(["apply", file, "--auto-approve"]);
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/was made by an older revsync, .*so nothing was applied: run plan again/);
    expect(old.stderr).not.toContain("checksum does not match");
    const oldShown = await cli(["show", file]);
    expect(oldShown.stderr).toMatch(/was made by an older revsync, .*so apply would refuse it: run plan again/);

    // The plan as saved, keys in another order: still the same plan.
    const reordered = Object.fromEntries(Object.entries(saved).reverse());
    writeFileSync(file, JSON.stringify(reordered));
    expect((await cli(["show", file])).code).toBe(0);

    for (const r of [cut, tampered, bad, zeroed, old]) {
      expect(r.code).toBe(1);
      expect(r.stderr).not.toMatch(/internal error|at .*\.js:\d+/);
    }
    expect(await journal()).toEqual([]);
  });
});

describe("a policy's version moved by a change to another batch", () => {
  it("bob reviews FY26-H2 after the plan: the approve of FY26-H1 is blocked, saying which batch moved, how, by whom", async () => {
    const file = join(fx.repo, "demo.plan.json");
    expect((await run(["plan", "--out", file])).code).toBe(0);
    const bob = await token(fx.emu.url, "bob");
    const res = await fetch(`${fx.emu.url}${SSP}/review/SSP-HW/FY26-H2`, { method: "PATCH", headers: { authorization: `Bearer ${bob}` } });
    expect(res.status).toBe(200);
    const r = await run(["apply", file, "--auto-approve"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /blocked approve {2}ssp\/Hardware SSP\/batch\/FY26-H1: blocked: ssp\/Hardware SSP changed in the service since the plan \(last changed by bob at \S+\): version_id 1 -> 2.* \(batch FY26-H2 file uploaded -> reviewed by bob at \S+Z\)/,
    );
    const approves = (await journal()).filter((j) => j.method === "PATCH" && j.path.includes("/approve/SSP-HW/"));
    expect(approves).toEqual([]);
  });
});

describe("no approve of values that differ from git", () => {
  it("one row removed from the values CSV: one blocked entry, no review or approve; apply leaves the batch reviewed", async () => {
    const csv = join(fx.repo, "policies", "ssp", "values", "hardware-fy26-h1.csv");
    const original = readFileSync(csv, "utf8");
    const lines = original.trimEnd().split("\n");
    writeFileSync(csv, `${lines.slice(0, -1).join("\n")}\n`);
    try {
      const plan = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      const h1 = plan.changes.filter((c: any) => c.address === "ssp/Hardware SSP/batch/FY26-H1");
      expect(h1).toHaveLength(1);
      expect(h1[0].action).toBe("blocked");
      expect(h1[0].reason).toMatch(/^the service's values differ from .*hardware-fy26-h1\.csv in 1 row, so revsync will not move this batch to approved/);
      expect(h1[0].diff).toEqual([{ path: "values[HW-1050|EUR|2026-01-01]", kind: "removed" }]);
      const text = (await run(["plan"])).stdout;
      expect(text).not.toContain("ssp/Hardware SSP/batch/FY26-H1 (approve)");

      const apply = await run(["apply", "--auto-approve"]);
      expect(apply.code).toBe(0);
      expect((await journal()).filter((j) => j.method === "PATCH" && j.path.includes("FY26-H1"))).toEqual([]);
      const state = await fx.emu.admin<any>("GET", "state");
      const hw = state.tenants[0].ssp.find((p: any) => p.compliance_name === "Hardware SSP");
      expect(hw.batches.find((b: any) => b.batch_name === "FY26-H1").status).toBe("reviewed");
    } finally {
      writeFileSync(csv, original);
    }
  });
});

describe("the tenant configuration PATCH names the signed-in user", () => {
  it("a static token that names nobody: without REVSYNC_USER apply stops before sending anything; with it, user_name is that user", async () => {
    // A service whose tokens are no JWTs: its token names nobody.
    await fx.emu.admin("POST", "settings", { opaque_tokens: true });
    const tok = await token(fx.emu.url);
    await fx.emu.admin("DELETE", "requests");
    const none = await run(["apply", "--auto-approve"], { REVSYNC_TOKEN: tok });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("the tenant configuration update names the user who makes it (user_name), and this sign-in gives none");
    expect(none.stderr).toContain("set REVSYNC_USER to your user id in the service");
    expect(await fx.emu.writes()).toEqual([]);
    // The emulator marks a PATCH whose body names dana (a fault that only tags the journal entry).
    await fx.emu.admin("POST", "faults", {
      faults: [{ kind: "latency", latency_ms: 0, method: "PATCH", path: "/tenant-configurations/", body_contains: '"user_name":"dana"' }],
    });
    const named = await run(["apply", "--auto-approve", "--target", "tenant-configuration/Default Tenant Configuration"], {
      REVSYNC_TOKEN: tok,
      REVSYNC_USER: "dana",
    });
    expect(named.code).toBe(0);
    expect(named.stderr).toContain(", as dana.");
    const patches = (await journal()).filter((j: any) => j.method === "PATCH");
    expect(patches.map((j: any) => j.fault)).toEqual(["latency"]);
  });
});

describe("one retry budget, through apply", () => {
  it("a create's answer dropped after commit, then every read refused past the read budget: one POST, 'outcome unknown'; the next apply finishes without a second POST", async () => {
    await fx.emu.admin("POST", "faults", {
      faults: [
        { kind: "drop", after_commit: true, method: "POST", path: "/policy/ssp", times: 1 },
        { kind: "status", status: 503, method: "GET", path: "/policy/ssp", query: "policy_name=Training Courses SSP", times: 10 },
      ],
    });
    const first = await run(["apply", "--auto-approve"]);
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/unknown\s+create\s+ssp\/Training Courses SSP: .*outcome unknown: .*run revsync plan to see/);
    const second = await run(["apply", "--auto-approve"]);
    expect(second.code).toBe(0);
    const posts = (await journal()).filter((j) => j.method === "POST" && j.path === SSP);
    expect(posts).toHaveLength(1);
    const final = await run(["plan", "--detailed-exitcode"]);
    expect(final.stdout + final.stderr).toContain("No changes.");
    expect(final.code).toBe(0);
  });

  it("a create turned away with a Retry-After past --timeout fails at once, saying so and naming the requests turned away; never created; the next apply creates it once", async () => {
    // A sustained 429 is sent again until the time limit (counted in process under virtual time, in
    // test/retry-budget.test.ts); here the service asks for 10 minutes, past a 5-minute limit, so
    // revsync stops at once instead of sleeping on it. Waits are not capped: the Retry-After is the point.
    await fx.emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", retry_after: 600, method: "POST", path: "/policy/ssp" }] });
    const target = ["--target", "ssp/Training Courses SSP"];
    const r = await run(["apply", "--auto-approve", "--timeout", "5m", ...target], { REVSYNC_MAX_RETRY_WAIT_MS: undefined });
    expect(r.code).toBe(1);
    expect((await journal()).filter((j) => j.status === 429).map((j) => `${j.method} ${j.path}`)).toEqual([`POST ${SSP}`]);
    expect(r.stdout).toMatch(
      /failed\s+create\s+ssp\/Training Courses SSP: POST \/apis\/policy-sets\/v1\/policy\/ssp failed \(429 rate limited\): not sent again within the run's time limit \(--timeout 5m\): the service's Retry-After holds every request for another 1[01]m(\d+s)?; the service turned away 1 request of this run with 429/,
    );
    let state = await fx.emu.admin<{ tenants: { ssp: { compliance_name: string }[] }[] }>("GET", "state");
    expect(state.tenants[0]?.ssp.filter((p) => p.compliance_name === "Training Courses SSP")).toEqual([]);

    await fx.emu.admin("DELETE", "faults");
    const again = await run(["apply", "--auto-approve", ...target]);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain("turned away");
    state = await fx.emu.admin<{ tenants: { ssp: { compliance_name: string }[] }[] }>("GET", "state");
    expect(state.tenants[0]?.ssp.filter((p) => p.compliance_name === "Training Courses SSP")).toHaveLength(1);
    expect((await journal()).filter((j) => j.method === "POST" && j.path === SSP).map((j) => j.status)).toEqual([429, 200]);
  });

  it("a 200 with an error array on a PATCH is a definite refusal: sent once, never again", async () => {
    await fx.emu.admin("POST", "faults", { faults: [{ kind: "error_array", method: "PATCH", path: "/tenant-configurations/" }] });
    const r = await run(["apply", "--auto-approve"]);
    expect(r.code).toBe(1);
    expect((await journal()).filter((j) => j.method === "PATCH" && j.path.includes("/tenant-configurations/"))).toHaveLength(1);
  });

  it("201 and 204 answers without a body are success", async () => {
    await fx.emu.admin("POST", "faults", {
      faults: [
        { kind: "success_status", status: 204, method: "PATCH", path: "/apis/" },
        { kind: "success_status", status: 201, method: "POST", path: "/apis/" },
      ],
    });
    const r = await run(["apply", "--auto-approve"]);
    expect(r.stdout).toContain("Apply complete: 7 done, 0 failed, 0 skipped.");
    expect((await run(["plan", "--detailed-exitcode"])).code).toBe(0);
  });
});

describe("approvals of more than one upload", () => {
  it("without a terminal, --all and several ids need --yes; nothing is sent without it", async () => {
    await fx.emu.admin("DELETE", "requests");
    const all = await run(["approvals", "reject", "--all", "--comment", "dup"]);
    expect(all.code).toBe(1);
    expect(all.stderr).toMatch(/reject of 5 uploads at once: without a terminal it needs --yes/);
    const two = await run(["approvals", "approve", "APR-0003", "APR-0004", "--comment", "ok"]);
    expect(two.code).toBe(1);
    expect((await journal()).filter((j) => j.path.includes("/oingest-approval/v1/action"))).toEqual([]);
    const yes = await run(["approvals", "approve", "APR-0003", "APR-0004", "--comment", "ok", "--yes"]);
    expect(yes.code).toBe(0);
    expect(yes.stdout).toContain("Approved: APR-0003, APR-0004.");
  });
});
