import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PROFILES, type Profile } from "../src/emulator/profile.js";
import { planChecksum } from "../src/plan/model.js";
import { api, cli, DEMO_ENV, removeDir, startEmu, tempRepo, token, updateBody, type Emu } from "../src/testing/helpers.js";

// Apply tells the truth (what an attacker's review and a new user's trial found): a saved plan is held
// to what git asks for now; a write the service processed but answered 503 or 429 is confirmed, never
// "already … nothing was sent"; a change someone made in the round trip of revsync's write is never
// "done"; and an apply from a tree whose policy files are not committed says so on the console.

const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const TENANT = "tenant-configuration/Default Tenant Configuration";
const FAST = { REVSYNC_MAX_RETRY_WAIT_MS: "5" };

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

/** The emulator as the interface promises the service (no If-Match to rely on), and the project's policy
 *  repo aimed at it. */
function useService(profile: Profile = "default"): { emu: Emu; repo: string } {
  const fx = {} as { emu: Emu; repo: string };
  beforeAll(async () => {
    fx.emu = await startEmu("demo", { profile, honourIfMatch: false });
    fx.repo = tempRepo(fx.emu.url);
    dirs.push(fx.repo);
  });
  afterAll(async () => fx.emu.close());
  beforeEach(async () => {
    await fx.emu.reset();
    await fx.emu.admin("DELETE", "faults");
  });
  return fx;
}

const runIn = (dir: string, args: string[], opts: Parameters<typeof cli>[1] = {}) =>
  cli(args, { cwd: dir, ...opts, env: { ...DEMO_ENV, ...FAST, ...opts.env } });
const tenantOf = async (emu: Emu): Promise<any> => (await emu.admin<any>("GET", "state")).tenants[0].tenantConfigurations[0];
const evidenceOf = (dir: string): any => {
  const folder = join(dir, "ev");
  const [file] = readdirSync(folder).filter((f) => f.endsWith(".json"));
  return JSON.parse(readFileSync(join(folder, file ?? ""), "utf8"));
};

describe("a saved plan is held to what git asks for now", () => {
  const fx = useService();
  const run = (args: string[], opts: Parameters<typeof cli>[1] = {}) => runIn(fx.repo, args, opts);
  /** Edits a policy file of the repo for one test; undone after it. */
  const edits: [string, string][] = [];
  const edit = (file: string, change: (text: string) => string): void => {
    const path = join(fx.repo, "policies", file);
    const text = readFileSync(path, "utf8");
    edits.push([path, text]);
    writeFileSync(path, change(text));
  };
  beforeEach(() => {
    for (const [path, text] of edits.splice(0).reverse()) writeFileSync(path, text);
  });

  it("a forged plan (the contra account set in after, payload and diff, its checksum computed again): refused, naming the field, nothing sent", async () => {
    const file = join(fx.repo, "plan.json");
    expect((await run(["plan", "--target", TENANT, "--out", file, "--quiet"])).code).toBe(0);
    const plan = JSON.parse(readFileSync(file, "utf8"));
    const c = plan.changes[0];
    c.after.manual_journal_contra_account = "MJ-ATTACKER-999";
    c.payload.item.manual_journal_contra_account = "MJ-ATTACKER-999";
    c.diff.find((d: any) => d.path === "manual_journal_contra_account").after = "MJ-ATTACKER-999";
    delete plan.checksum;
    plan.checksum = planChecksum(plan);
    const forged = join(fx.repo, "forged.json");
    writeFileSync(forged, JSON.stringify(plan, null, 2));
    await fx.emu.admin("DELETE", "requests");

    const r = await run(["apply", forged, "--auto-approve"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `the plan's writes are not what git asks for now, so nothing was sent:\n  ${TENANT} (update): manual_journal_contra_account: the plan writes "MJ-ATTACKER-999", git asks for "MJ-CONTRA-100"\n`,
    );
    expect(r.stdout).not.toMatch(/done|Apply complete/);
    expect(await fx.emu.writes()).toEqual([]);
    expect((await tenantOf(fx.emu)).compliance_spec[0].manual_journal_contra_account).toBe("MJ-CONTRA-000");

    // The plan as revsync wrote it, right after plan --out: applied.
    const ok = await run(["apply", file, "--auto-approve"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("Apply complete: 1 done, 0 failed, 0 skipped.");
    expect((await tenantOf(fx.emu)).compliance_spec[0].manual_journal_contra_account).toBe("MJ-CONTRA-100");
  });

  it("git changed after the plan: every write that is not git's now is named (a field, a create's field, a batch's status and values, a file gone), nothing sent; a targeted plan is held only for its targets", async () => {
    const file = join(fx.repo, "whole.json");
    const targeted = join(fx.repo, "targeted.json");
    expect((await run(["plan", "--out", file, "--quiet"])).code).toBe(0);
    expect((await run(["plan", "--target", TENANT, "--out", targeted, "--quiet"])).code).toBe(0);
    edit("tenant-configuration.yaml", (t) => t.replace("ui_mode: Classic", "ui_mode: Modern"));
    edit("ssp/training.yaml", (t) => t.replace("floor_percentage: 85", "floor_percentage: 80"));
    edit("ssp/hardware.yaml", (t) => t.replace("status: reviewed                 # uploaded", "status: file uploaded           # uploaded"));
    edit("ssp/values/hardware-fy26-h1.csv", (t) => t.replace("HW-1000,USD,Percent,93,103,113", "HW-1000,USD,Percent,93,104,113"));
    edit("ssp/software.yaml", () => "");
    await fx.emu.admin("DELETE", "requests");

    const r = await run(["apply", file, "--auto-approve"]);
    expect(r.code).toBe(1);
    const listed = r.stderr.split("\n").filter((l) => l.startsWith("  "));
    expect(listed).toEqual([
      `  ${TENANT} (update): ui_mode: the plan writes "Classic", git asks for "Modern"`,
      "  ssp/Training Courses SSP (create): floor_percentage: the plan writes 85, git asks for 80",
      '  ssp/Hardware SSP/batch/FY26-H2 (review): status: the plan reviews the batch, git asks for "file uploaded"',
      "  ssp/Software Subscriptions SSP/batch/FY26-Q1 (review): git no longer asks for it (no policy file of the repo names it now)",
      expect.stringMatching(
        /^ {2}ssp\/Hardware SSP\/batch\/FY26-H1 \(approve\): values: the plan moves values sha256:(\w+) forward, git's policies\/ssp\/values\/hardware-fy26-h1\.csv holds sha256:(?!\1)\w+$/,
      ),
      "  ssp/Software Subscriptions SSP/batch/FY26-Q1 (approve): git no longer asks for it (no policy file of the repo names it now)",
    ]);
    expect(r.stderr).toContain("Hint: a saved plan is applied only while the policy files ask for what it writes: run revsync plan again");
    expect(await fx.emu.writes()).toEqual([]);

    // The plan made with --target holds only the tenant configuration: the SSP files changed around it
    // are no part of it. Its own field changed in git: refused; put back, applied.
    const held = await run(["apply", targeted, "--auto-approve"]);
    expect(held.code).toBe(1);
    expect(held.stderr.split("\n").filter((l) => l.startsWith("  "))).toEqual([
      `  ${TENANT} (update): ui_mode: the plan writes "Classic", git asks for "Modern"`,
    ]);
    edits.splice(0, 1).forEach(([path, text]) => writeFileSync(path, text));
    const applied = await run(["apply", targeted, "--auto-approve"]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain("Apply complete: 1 done, 0 failed, 0 skipped.");
  });

  it("a create with its batch: git's values file changed after the plan, the create and the batch's steps are refused; as planned, applied", async () => {
    const values =
      "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\nED-1,USD,Amount,90,100,110,2026-01-01,2026-12-31\n";
    const dir = tempRepo(fx.emu.url, {
      "policies/edge.yaml": `apiVersion: revsync/v1
kind: SspPolicy
metadata: { name: Edge SSP }
spec: { method: upload, active: true, hierarchy_no: 80, data_identifiers: [product_id], floor_percentage: 85, ceiling_percentage: 115, when: [{ field_name: product_family, operator: equality, value: Edge }] }
batches:
  - { name: B1, status: approved, values: edge-b1.csv }
`,
      "policies/edge-b1.csv": values,
    });
    dirs.push(dir);
    expect((await runIn(dir, ["plan", "--target", "ssp/Edge SSP", "--out", "p.json", "--quiet"])).code).toBe(0);
    writeFileSync(join(dir, "policies", "edge-b1.csv"), values.replace("90,100,110", "90,100,120"));
    await fx.emu.admin("DELETE", "requests");
    const r = await runIn(dir, ["apply", "p.json", "--auto-approve"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ {2}ssp\/Edge SSP \(create\): batch B1: values_checksum: the plan writes "sha256:(\w+)", git asks for "sha256:(?!\1)\w+"$/m);
    expect(r.stderr).toMatch(/^ {2}ssp\/Edge SSP\/batch\/B1 \(review\): values: the plan moves values sha256:\w+ forward, git's \S*edge-b1\.csv holds/m);
    expect(r.stderr).toMatch(/^ {2}ssp\/Edge SSP\/batch\/B1 \(approve\): values: /m);
    expect(await fx.emu.writes()).toEqual([]);
    writeFileSync(join(dir, "policies", "edge-b1.csv"), values);
    const ok = await runIn(dir, ["apply", "p.json", "--auto-approve"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("Apply complete: 3 done, 0 failed, 0 skipped.");
  });
});

describe("an apply from a tree whose policy files are not committed", () => {
  const fx = useService();

  it("warns on stderr naming each file (changed, untracked); a clean tree says nothing; a saved plan is held to the files as they are", async () => {
    const dir = tempRepo(fx.emu.url);
    dirs.push(dir);
    const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" }).trim();
    git("init", "-q");
    git("add", "-A");
    git("-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-qm", "policies");
    const head = git("rev-parse", "HEAD").slice(0, 12);

    expect((await runIn(dir, ["plan", "--target", TENANT, "--out", "p.json", "--quiet"])).code).toBe(0);
    const clean = await runIn(dir, ["apply", "p.json", "--auto-approve"]);
    expect(clean.code).toBe(0);
    expect(clean.stderr).not.toMatch(/Warning: the policy files differ/);

    await fx.emu.reset();
    const tc = join(dir, "policies", "tenant-configuration.yaml");
    writeFileSync(tc, readFileSync(tc, "utf8").replace("ui_mode: Classic", "ui_mode: Modern"));
    writeFileSync(join(dir, "policies", "ssp", "values", "spare.csv"), "product_id\n");
    writeFileSync(join(dir, "notes.txt"), "not a policy file\n");
    const stale = await runIn(dir, ["apply", "p.json", "--auto-approve"]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(
      `Warning: the policy files differ from commit ${head}: policies/ssp/values/spare.csv (untracked), policies/tenant-configuration.yaml (modified); this apply holds the saved plan to them as they are, not as committed\n`,
    );
    expect(stale.stderr).toContain(`${TENANT} (update): ui_mode: the plan writes "Classic", git asks for "Modern"`);
    expect(stale.stderr).not.toContain("notes.txt");

    // Planned now from the same tree: said the same way, before anything is sent.
    git("add", "policies/ssp/values/spare.csv");
    const fresh = await runIn(dir, ["apply", "--auto-approve", "--target", TENANT]);
    expect(fresh.code).toBe(0);
    expect(fresh.stderr).toMatch(
      new RegExp(
        `^Warning: the policy files differ from commit ${head}: policies/ssp/values/spare\\.csv \\(added\\), policies/tenant-configuration\\.yaml \\(modified\\); this apply plans from them as they are, not as committed$`,
        "m",
      ),
    );
    expect((await tenantOf(fx.emu)).compliance_spec[0].ui_mode).toBe("Modern");
  });
});

describe.each(PROFILES)("profile %s: what apply says of its writes is what happened", (profile) => {
  const fx = useService(profile);
  const run = (args: string[], opts: Parameters<typeof cli>[1] = {}) => runIn(fx.repo, args, opts);
  beforeEach(() => rmSync(join(fx.repo, "ev"), { recursive: true, force: true }));

  // A 429 slows the run's governor down for a second: once, on the default profile (its answer is the
  // same on both).
  it.each(profile === "default" ? [503, 429] : [503])(
    "a tenant PATCH the service processed but answered %i: confirmed (read back), never 'already … nothing was sent'; the closing line, JSON and evidence agree",
    async (status) => {
      await fx.emu.admin("POST", "faults", { kind: "success_status", status, method: "PATCH", path: "tenant-configurations", times: 1 });
      const r = await run(["apply", "--auto-approve", "--target", TENANT, "--evidence", "ev"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^confirmed update {3}${TENANT}: updated \\(the service answered ${status}; confirmed by reading it back\\)$`, "m"));
      expect(r.stdout).toContain("Apply complete: 0 done, 1 confirmed, 0 failed, 0 skipped.");
      expect(r.stdout).not.toMatch(/already|nothing was sent/);
      const rec = evidenceOf(fx.repo);
      expect(rec.summary).toMatchObject({ done: 0, already: 0, confirmed: 1 });
      expect(rec.changes.find((c: any) => c.action === "update")).toMatchObject({
        outcome: "confirmed",
        requests: expect.arrayContaining([expect.objectContaining({ method: "PATCH", status })]),
      });
      await fx.emu.reset();
      await fx.emu.admin("POST", "faults", { kind: "success_status", status, method: "PATCH", path: "tenant-configurations", times: 1 });
      const json = JSON.parse((await run(["apply", "--auto-approve", "--target", TENANT, "--format", "json"])).stdout);
      expect(json.summary).toMatchObject({ done: 0, already: 0, confirmed: 1 });
    },
  );

  it("an SSP create the service processed but answered 503: confirmed, and its policy's steps go on", async () => {
    await fx.emu.admin("POST", "faults", { kind: "success_status", status: 503, method: "POST", path: "/policy/ssp", times: 1 });
    const r = await run(["apply", "--auto-approve", "--target", "ssp/Training Courses SSP"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^confirmed create {3}ssp\/Training Courses SSP: created \(the service answered 503; confirmed by reading it back\)$/m);
    expect(r.stdout).toContain("Apply complete: 0 done, 1 confirmed, 0 failed, 0 skipped.");
    const policies = (await fx.emu.admin<any>("GET", "state")).tenants[0].ssp.filter((p: any) => p.compliance_name === "Training Courses SSP");
    expect(policies).toHaveLength(1);
  });

  it("bob saves the configuration in the round trip of revsync's PATCH (no If-Match): version_id moved by 2 over revsync's one write, and with no earlier write of the run to learn the service's step from, apply says it could not tell (the spec promises no step of 1)", async () => {
    // revsync's PATCH (the only body holding git's contra account) is held before the service processes
    // it, until bob's, all 14 fields as the service's UI sends them, has gone through.
    await fx.emu.admin("POST", "faults", {
      kind: "latency",
      latency_ms: 600_000,
      method: "PATCH",
      path: "tenant-configurations",
      body_contains: "MJ-CONTRA-100",
    });
    let bob: Promise<void> | undefined;
    const r = await run(["apply", "--auto-approve", "--target", TENANT, "--verbose", "--format", "json", "--evidence", "ev"], {
      when: {
        stderr: "unchanged since the plan; sending the update",
        act: () =>
          (bob = (async () => {
            const tok = await token(fx.emu.url, "bob");
            const view = (await api(fx.emu.url, tok, "GET", TC)).body.find((e: any) => e.compliance_id === "TC-0001");
            const res = await api(fx.emu.url, tok, "PATCH", `${TC}/TC-0001`, updateBody(view, { ui_mode: "Modern" }, "bob"));
            expect(res.status).toBe(200);
            await fx.emu.admin("DELETE", "faults");
          })()),
      },
    });
    await bob;
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.outcomes).toEqual([
      expect.objectContaining({
        address: TENANT,
        status: "done",
        outcome: "done",
        message:
          "updated (version_id went from 1 to 3 over revsync's one write; whether someone else wrote meanwhile could not be told: the service's version_id steps are not known (the spec promises none, and this run made no earlier write to learn them from); the fields it sent hold)",
      }),
    ]);
    const rec = evidenceOf(fx.repo);
    expect(rec.changes.find((c: any) => c.action === "update")).toMatchObject({ outcome: "done", why: report.outcomes[0].message });
    // What the service holds: revsync's values at version 3; bob's ui_mode is gone, as the words warn.
    const tc = await tenantOf(fx.emu);
    expect({ version: tc.version_id, ui_mode: tc.compliance_spec[0].ui_mode }).toEqual({ version: "3", ui_mode: "Classic" });
  });
});
