import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Profile } from "../src/emulator/profile.js";
import { planChecksum } from "../src/plan/model.js";
import { api, cli, DEMO_ENV, removeDir, startEmu, tempRepo, token, updateBody, type Emu } from "../src/testing/helpers.js";

// One matrix: every engine test runs against the emulator's default profile and against the literal
// reading of the spec (nulls, operator symbols, refusals as 200 with an error array, extra fields,
// other list orders). engine.<profile>.e2e.test.ts call it once per profile, so the two run in parallel.
export function engineSuite(profile: Profile): void {
  // Tests that do not depend on how the service answers (bad input, no terminal, rendering, signals)
  // run once, against the default profile; everything that reads or writes the service runs against both.
  const anyProfile = (name: string, fn: () => Promise<void>, timeout?: number): void => {
    if (profile === "default") it(name, fn, timeout);
  };
  let emu: Emu;
  let repo: string;
  const TC = "/apis/policy-sets/v1/policy/tenant-configurations";

  beforeAll(async () => {
    emu = await startEmu("demo", { profile });
  });
  afterAll(async () => emu.close());
  beforeEach(async () => {
    await emu.reset();
    if (repo) removeDir(repo);
    repo = tempRepo(emu.url);
  });

  /** "No changes": on the literal profile, which answers floor/ceiling as null, with the caveat and one
   *  note naming the fields and policies it could not compare (never a bare "matches"). */
  const expectNoChanges = (stdout: string): void => {
    if (profile === "default") expect(stdout.trim()).toBe('No changes. Environment "demo" matches the policy repo.');
    else {
      expect(stdout).toMatch(
        /^No changes\. Environment "demo" matches the policy repo in every field it shows, except the fields the service does not show \(see the notes?\)\.\n/,
      );
      expect(stdout).toMatch(
        /^Note: ssp\/Hardware SSP(, | and ).*: floor_percentage and ceiling_percentage not compared: the service shows no value \(null\) for them/m,
      );
      expect(stdout.match(/^Note: /gm)).toHaveLength(1);
    }
  };
  const noDrift =
    profile === "default"
      ? 'No drift. Environment "demo" matches the policy repo'
      : 'No drift in what the service shows. Environment "demo" matches the policy repo in every field it shows, except';

  const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: repo, env: { ...DEMO_ENV, ...env } });

  /** bob changes the tenant configuration through the API, outside revsync. */
  async function patchOutside(fields: Record<string, unknown>): Promise<void> {
    const t = await token(emu.url, "bob");
    const env = (await api(emu.url, t, "GET", TC)).body[0];
    const body = updateBody(env, fields, "bob");
    expect((await api(emu.url, t, "PATCH", `${TC}/${env.compliance_id}`, body)).status).toBe(200);
  }

  /** The emulator's stored state (never the literal profile's rendering of it). */
  const state = (): Promise<any> => emu.admin("GET", "state");

  /** The demo tenant as `apply --auto-approve` of the demo repo leaves it, the starting point of several
   *  tests: made by a real apply (its exit asserted) the first time a test needs it, then loaded as the
   *  emulator state that apply left, not applied again in each test only to reach it (~0.15 s each). The
   *  first test of the suite proves the apply itself. */
  let afterApply: unknown;
  async function applied(): Promise<void> {
    if (afterApply) {
      await emu.admin("POST", "reset", { state: afterApply });
      return;
    }
    expect((await run(["apply", "--auto-approve"])).code).toBe(0);
    afterApply = await state();
  }
  const journal = (): Promise<any[]> => emu.admin("GET", "requests");

  describe("plan and apply on the demo seed with policies/", () => {
    it("plan shows the expected changes; apply makes them; plan again is quiet and exits 0", async () => {
      const plan = await run(["plan", "--detailed-exitcode"]);
      expect(plan.code).toBe(2);
      expect(plan.stdout).toContain(" ~ tenant-configuration/Default Tenant Configuration (update)");
      expect(plan.stdout).toContain("      carves_allocation: false -> true");
      expect(plan.stdout).toContain('      manual_journal_contra_account: "MJ-CONTRA-000" -> "MJ-CONTRA-100"');
      expect(plan.stdout).toContain(" + ssp/Training Courses SSP (create)");
      expect(plan.stdout).toContain(" > ssp/Hardware SSP/batch/FY26-H2 (review)");
      expect(plan.stdout).toContain(">> ssp/Software Subscriptions SSP/batch/FY26-Q1 (approve)");
      expect(plan.stdout).toContain("Plan: 1 to create, 1 to update, 2 to review, 3 to approve.");
      const apply = await run(["apply", "--auto-approve"]);
      expect(apply.code).toBe(0);
      expect(apply.stdout).toContain("Apply complete: 7 done, 0 failed, 0 skipped.");
      const again = await run(["plan", "--detailed-exitcode"]);
      expectNoChanges(again.stdout);
      expect(again.code).toBe(0);
    });

    it("the JSON plan has the contract's shape", async () => {
      const r = await run(["plan", "--format", "json"]);
      const plan = JSON.parse(r.stdout);
      expect(plan).toMatchObject({
        format_version: "1",
        environment: "demo",
        created_at: expect.any(String),
        summary: { create: 1, update: 1, review: 2, approve: 3, unsupported: 0 },
      });
      const update = plan.changes.find((c: any) => c.action === "update");
      expect(update).toMatchObject({
        address: "tenant-configuration/Default Tenant Configuration",
        version_id: "1",
        last_modified_on: expect.any(Number),
        before: expect.any(Object),
        after: expect.any(Object),
      });
      expect(update.diff).toContainEqual({ path: "carves_allocation", kind: "changed", before: false, after: true });
    });

    anyProfile("markdown: marker, summary table, details per resource", async () => {
      const r = await run(["plan", "--format", "markdown"]);
      expect(r.stdout.startsWith("<!-- revsync-plan:demo -->\n### revsync plan for `demo`")).toBe(true);
      expect(r.stdout).toContain("| ~ update | 1 |");
      expect(r.stdout).toContain("<details><summary><code>+</code> <b>create</b> <code>ssp/Training Courses SSP</code></summary>");
    });

    it("--target limits plan and apply to an address and what lies below it", async () => {
      const r = await run(["plan", "--target", "ssp/Hardware SSP", "--format", "json"]);
      const plan = JSON.parse(r.stdout);
      expect(plan.changes.map((c: any) => c.address).sort()).toEqual(["ssp/Hardware SSP/batch/FY26-H1", "ssp/Hardware SSP/batch/FY26-H2"]);
      expect((await run(["apply", "--auto-approve", "--target", "ssp/Hardware SSP"])).code).toBe(0);
      const rest = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      expect(rest.changes.some((c: any) => c.address.startsWith("ssp/Hardware SSP"))).toBe(false);
      expect(rest.changes).toHaveLength(5);
    });
  });

  describe("drift", () => {
    it("a change made through the API outside revsync: exit 2, names the resource and field", async () => {
      await applied();
      expect((await run(["drift"])).code).toBe(0);
      await patchOutside({ ui_mode: "Modern" });
      const d = await run(["drift"]);
      expect(d.code).toBe(2);
      expect(d.stdout).toContain("changed         tenant-configuration/Default Tenant Configuration: 1 field differs from git: ui_mode");
      expect(d.stdout).toContain('      ui_mode: git "Classic", service "Modern"');
      const j = JSON.parse((await run(["drift", "--format", "json"])).stdout);
      expect(j.drift[0]).toMatchObject({ class: "changed", diff: [{ path: "ui_mode", before: "Classic", after: "Modern" }] });
    });

    it("a change someone made since: plan's update says who made it and when, in the words drift uses, in text, markdown and JSON", async () => {
      const t = await token(emu.url, "carol");
      const env = (await api(emu.url, t, "GET", TC)).body[0];
      expect((await api(emu.url, t, "PATCH", `${TC}/${env.compliance_id}`, updateBody(env, { manual_journal_contra_account: "HACK-1" }, "carol"))).status).toBe(
        200,
      );
      const d = await run(["drift"]);
      const who = /^ {6}(last modified by carol at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/m.exec(d.stdout)?.[1];
      expect(who, d.stdout).toBeDefined();
      const p = await run(["plan", "--target", "tenant-configuration/Default Tenant Configuration"]);
      // The entry: its fields (the demo repo also sets carves_allocation), then who changed it last.
      expect(p.stdout).toContain(
        `~ tenant-configuration/Default Tenant Configuration (update)\n      carves_allocation: false -> true\n      manual_journal_contra_account: "HACK-1" -> "MJ-CONTRA-100"\n      ${who}\n\n`,
      );
      const j = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      const update = j.changes.find((c: any) => c.action === "update");
      expect(update).toMatchObject({ modified_by: "carol", modified_on: expect.stringMatching(/^\d{4}-.*Z$/) });
      expect(who).toBe(`last modified by carol at ${update.modified_on.replace(".000Z", "Z")}`);
      const md = await run(["plan", "--format", "markdown"]);
      expect(md.stdout).toContain(`\n${who?.replace("last", "Last")}.\n`);
    });

    it("classes: unmanaged, missing, batch status and batch values; plan shows the changed value old -> new and blocks the approve", async () => {
      writeFileSync(
        join(repo, "policies", "ssp", "values", "hardware-fy26-h1.csv"),
        readFileSync(join(repo, "policies", "ssp", "values", "hardware-fy26-h1.csv"), "utf8").replace(
          "HW-1000,USD,Percent,93,103,113",
          "HW-1000,USD,Percent,93,104,113",
        ),
      );
      removeDir(join(repo, "policies", "ssp", "support-renewals.yaml"));
      const j = JSON.parse((await run(["drift", "--format", "json"])).stdout);
      const classes = (c: string) => j.drift.filter((d: any) => d.class === c).map((d: any) => d.address);
      expect(classes("unmanaged")).toEqual(["ssp/Support Renewals SSP"]);
      expect(classes("missing")).toEqual(["ssp/Training Courses SSP"]);
      expect(classes("batch_status")).toContain("ssp/Hardware SSP/batch/FY26-H2");
      expect(classes("batch_values")).toEqual(["ssp/Hardware SSP/batch/FY26-H1"]);
      const values = j.drift.find((d: any) => d.class === "batch_values");
      expect(values.message).toMatch(/1 changed, 0 only in git, 0 only in the service/);
      expect(values.diff).toEqual([{ path: "values[HW-1000|USD|2026-01-01].mid_point", kind: "changed", before: 104, after: 103 }]);
      // The reviewer sees the value itself, service -> git, and no approve of values nobody reviewed.
      const plan = await run(["plan"]);
      expect(plan.stdout).toContain(" x ssp/Hardware SSP/batch/FY26-H1 (blocked)");
      expect(plan.stdout).toContain("      values[HW-1000|USD|2026-01-01].mid_point: 103 -> 104");
      expect(plan.stdout).not.toContain("ssp/Hardware SSP/batch/FY26-H1 (approve)");
      // What drift calls unmanaged, plan shows as not in git.
      expect(plan.stdout).toMatch(/ \? ssp\/Support Renewals SSP \(not in git\)\n {6}reason: the service holds this SSP policy and git has no file for it/);
    });

    it("accepted drift combines: two ignore rules on one address, each for one field, together cover it", async () => {
      await applied();
      await patchOutside({ ui_mode: "Modern", prorate_method: "Monthly" });
      const cfg = join(repo, "revsync.yaml");
      writeFileSync(
        cfg,
        `${readFileSync(cfg, "utf8")}drift:\n  ignore:\n` +
          `    - { address: "tenant-configuration/*", fields: [ui_mode], reason: the UI team pilots Modern }\n` +
          `    - { address: "tenant-configuration/Default Tenant Configuration", fields: [prorate_method], reason: finance moved to monthly }\n`,
      );
      const d = await run(["drift"]);
      expect(d.stdout).toContain(noDrift);
      expect(d.stdout).toContain("(1 accepted difference ignored, drift.ignore of revsync.yaml).");
      expect(d.code).toBe(0);
      const j = JSON.parse((await run(["drift", "--format", "json"])).stdout);
      expect(j.ignored).toHaveLength(1);
      expect(j.ignored[0]).toMatchObject({ reason: "the UI team pilots Modern; finance moved to monthly" });
      expect(j.ignored[0].diff.map((x: any) => x.path).sort()).toEqual(["prorate_method", "ui_mode"]);
    });

    it("a batch's drift names the batch's own last change, not the policy's", async () => {
      // carol uploads a new batch of Hardware SSP: the policy was last changed by carol, now.
      await emu.admin("POST", "uploads", { type: "ssp", policy_name: "Hardware SSP", batch_name: "FY27-H1", uploaded_by: "carol" });
      const j = JSON.parse((await run(["drift", "--format", "json", "--target", "ssp/Hardware SSP"])).stdout);
      const entry = (addr: string) => j.drift.find((d: any) => d.address === addr);
      // FY26-H1 (reviewed in the service, approved in git) was last touched by alice when the tenant was seeded.
      expect(entry("ssp/Hardware SSP/batch/FY26-H1")).toMatchObject({ class: "batch_status", modified_by: "alice", modified_on: "2026-01-01T00:00:00.000Z" });
      expect(entry("ssp/Hardware SSP/batch/FY27-H1")).toMatchObject({ class: "unmanaged_batch", modified_by: "carol" });
      expect(entry("ssp/Hardware SSP/batch/FY27-H1").modified_on).not.toBe("2026-01-01T00:00:00.000Z");
      const text = await run(["drift", "--target", "ssp/Hardware SSP/batch/FY26-H1"]);
      expect(text.stdout).toContain("      last modified by alice at 2026-01-01T00:00:00Z");
    });

    it("--all-envs aggregates the exit code over environments", async () => {
      await applied();
      const cfg = readFileSync(join(repo, "revsync.yaml"), "utf8");
      writeFileSync(
        join(repo, "revsync.yaml"),
        `${cfg}  broken:\n    base_url: http://127.0.0.1:9\n    realm: demo\n    vars: { contra_account: MJ-CONTRA-100 }\n`,
      );
      const r = await run(["drift", "--all-envs"]);
      expect(r.stdout).toContain(noDrift);
      expect(r.stderr).toMatch(/broken: .*(connection|ECONNREFUSED)/);
      expect(r.code).toBe(1);
    });
  });

  describe("the plan is the whole truth", () => {
    it("a policy file removed from git, and one renamed (its hierarchy_no held by the old name): not in git and blocked, never 'No changes'; apply writes nothing", async () => {
      await applied();
      removeDir(join(repo, "policies", "ssp", "support-renewals.yaml"));
      const nothingElse = await run(["plan", "--detailed-exitcode"]);
      expect(nothingElse.stdout).toContain(" ? ssp/Support Renewals SSP (not in git)");
      expect(nothingElse.stdout).toContain("Plan: nothing to apply; 1 not in git (shown with the reason, not applied).");
      expect(nothingElse.stdout).not.toContain("No changes");
      expect(nothingElse.stderr).toContain("only entries that revsync does not apply remain (1 not in git, listed with their reasons): apply would do nothing");
      expect(nothingElse.code).toBe(0);
      // Renamed in git, file and metadata.name: the old policy stays live with the same place and conditions.
      const training = join(repo, "policies", "ssp", "training.yaml");
      writeFileSync(
        join(repo, "policies", "ssp", "training-renamed.yaml"),
        readFileSync(training, "utf8").replace("name: Training Courses SSP", "name: Training SSP"),
      );
      removeDir(training);
      const j = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      expect(j.changes.map((c: any) => `${c.action} ${c.address}`)).toEqual([
        "blocked ssp/Training SSP",
        "not_in_git ssp/Support Renewals SSP",
        "not_in_git ssp/Training Courses SSP",
      ]);
      expect(j.summary).toMatchObject({ create: 0, blocked: 1, not_in_git: 2 });
      expect(j.changes[0].reason).toMatch(
        /^hierarchy_no 50 is held by the active live policy "Training Courses SSP", which is not in git and has the same conditions: this looks like a rename/,
      );
      await emu.admin("DELETE", "requests");
      const apply = await run(["apply", "--auto-approve"]);
      expect(apply.stderr).toContain("Nothing that revsync can apply: each entry above is shown with the reason it is not applied.");
      expect(apply.code).toBe(0);
      expect(await emu.writes()).toEqual([]);
      expect((await run(["drift"])).code).toBe(2);
    });

    it("a batch git holds no values for is blocked, saying where to get them; with the values added it is approved", async () => {
      const sw = join(repo, "policies", "ssp", "software.yaml");
      writeFileSync(sw, readFileSync(sw, "utf8").replace("    values: values/software-fy26-q1.csv\n", ""));
      const blocked = await run(["plan", "--target", "ssp/Software Subscriptions SSP", "--format", "json"]);
      const [entry, ...rest] = JSON.parse(blocked.stdout).changes;
      expect(rest).toEqual([]);
      expect(entry).toMatchObject({ address: "ssp/Software Subscriptions SSP/batch/FY26-Q1", action: "blocked" });
      expect(entry.reason).toMatch(
        /^git holds no values for this batch, so revsync will not move it to approved \(values nobody reviewed are never reviewed or approved\): /,
      );
      // Follow the plan's advice: the download (a batch with a file id), else an export of the policy.
      const csv = join(repo, "policies", "ssp", "values", "software-subscriptions-ssp-fy26-q1.csv");
      if (profile === "default") {
        expect(entry.reason).toContain("revsync ssp download FILE-SSP-SW-1 --output policies/ssp/values/software-subscriptions-ssp-fy26-q1.csv gets them");
        expect((await run(["ssp", "download", "FILE-SSP-SW-1", "--output", csv])).code).toBe(0);
      } else {
        expect(entry.reason).toContain("revsync export --dir DIR --target 'ssp/Software Subscriptions SSP' writes them (with the policy's file) into DIR");
        expect((await run(["export", "--dir", join(repo, "exported"), "--target", "ssp/Software Subscriptions SSP"])).code).toBe(0);
        writeFileSync(csv, readFileSync(join(repo, "exported", "ssp", "values", "software-subscriptions-ssp-fy26-q1.csv")));
      }
      expect(entry.reason).toContain("then add `values: values/software-subscriptions-ssp-fy26-q1.csv` to this batch in policies/ssp/software.yaml");
      writeFileSync(
        sw,
        readFileSync(sw, "utf8").replace(
          "status: approved                 # uploaded: review, then approve\n",
          "$&    values: values/software-subscriptions-ssp-fy26-q1.csv\n",
        ),
      );
      const plan = await run(["plan", "--target", "ssp/Software Subscriptions SSP"]);
      expect(plan.stdout).toContain(">> ssp/Software Subscriptions SSP/batch/FY26-Q1 (approve)");
      expect(plan.stdout).toContain(
        "      values: 8 rows, 4 products, currencies EUR, USD, 2026-01-01 to 2026-03-31, as in policies/ssp/values/software-subscriptions-ssp-fy26-q1.csv",
      );
      expect((await run(["apply", "--auto-approve", "--target", "ssp/Software Subscriptions SSP"])).code).toBe(0);
      const batch = (await state()).tenants[0].ssp
        .find((p: any) => p.compliance_name === "Software Subscriptions SSP")
        .batches.find((b: any) => b.batch_name === "FY26-Q1");
      expect(batch.status).toBe("approved");
    });
  });

  describe("saved plans", () => {
    it("behind a service that ignores If-Match, a saved plan meets changes made since: each changed resource is blocked right before its first write, nothing sent for it; the rest applied", async () => {
      const file = join(repo, "demo.plan.json");
      expect((await run(["plan", "--out", file])).code).toBe(0);
      const saved = JSON.parse(readFileSync(file, "utf8"));
      const q1 = saved.changes.find((c: any) => c.action === "review" && c.address === "ssp/Software Subscriptions SSP/batch/FY26-Q1");
      expect(q1.payload).toMatchObject({ values_checksum: expect.stringMatching(/^sha256:/) });
      // Between the plan and the apply: bob changes the tenant configuration through the API, and the batch
      // FY26-Q1 is uploaded again with other values (a new file).
      await patchOutside({ ui_mode: "Modern" });
      const s = await state();
      const sw = s.tenants[0].ssp.find((p: any) => p.compliance_name === "Software Subscriptions SSP");
      const batch = sw.batches.find((b: any) => b.batch_name === "FY26-Q1");
      batch.ssp_values[0].mid_point += 7;
      batch.file_id = "FILE-SW-REUPLOAD";
      batch.updated_by = "carol";
      s.tenants[0].files["FILE-SW-REUPLOAD"] = s.tenants[0].files["FILE-SSP-SW-1"].replace(
        /^(SW-1000,USD,Percent,\d+,)(\d+)/m,
        (_m: string, a: string, b: string) => `${a}${Number(b) + 7}`,
      );
      await emu.admin("POST", "reset", { state: s });
      // The service no longer honours If-Match: only revsync's own read right before the write protects bob.
      await emu.admin("POST", "settings", { if_match: false });
      const r = await run(["apply", file, "--auto-approve"]);
      expect(r.stdout).toMatch(
        /blocked update {3}tenant-configuration\/Default Tenant Configuration: blocked: tenant-configuration\/Default Tenant Configuration changed in the service since the plan \(last changed by bob at \S+Z\): ui_mode "Classic" -> "Modern", version_id 1 -> 2(, last_modified_on \S+ -> \S+)?; nothing was sent for it/,
      );
      expect(r.stdout).toMatch(
        /blocked review {3}ssp\/Software Subscriptions SSP\/batch\/FY26-Q1: blocked: ssp\/Software Subscriptions SSP\/batch\/FY26-Q1 changed in the service since the plan \(batch last changed by carol at \S+\): (file_id "FILE-SSP-SW-1" -> "FILE-SW-REUPLOAD", a new upload nobody reviewed|its values are not the ones the plan showed)/,
      );
      expect(r.stdout).toContain(
        "skipped approve  ssp/Software Subscriptions SSP/batch/FY26-Q1: skipped: review of ssp/Software Subscriptions SSP/batch/FY26-Q1 failed",
      );
      expect(r.stdout).toContain("Apply finished with blocked writes: 4 done, 2 blocked, 0 failed, 1 skipped.");
      expect(r.code).toBe(1);
      const writes = (await journal()).filter((j) => j.method !== "GET" && j.path.startsWith("/apis/")).map((j) => j.path);
      expect(writes.filter((w) => w.includes("/tenant-configurations/") || w.includes("FY26-Q1"))).toEqual([]);
      expect(writes).toHaveLength(4);
      // bob's change survived, and FY26-Q1 is where it was.
      const after = await state();
      expect(after.tenants[0].tenantConfigurations[0].compliance_spec[0].ui_mode).toBe("Modern");
      const swAfter = after.tenants[0].ssp.find((p: any) => p.compliance_name === "Software Subscriptions SSP");
      expect(swAfter.batches.find((b: any) => b.batch_name === "FY26-Q1").status).toBe("file uploaded");
    });

    it("a fresh saved plan applies exactly; a plan of another environment or a newer format is refused", async () => {
      const file = join(repo, "demo.plan.json");
      await run(["plan", "--out", file]);
      const saved = JSON.parse(readFileSync(file, "utf8"));
      writeFileSync(join(repo, "other.plan.json"), JSON.stringify({ ...saved, environment: "production" }));
      const other = await run(["apply", join(repo, "other.plan.json"), "--auto-approve"]);
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/was changed after revsync wrote it/);
      writeFileSync(join(repo, "v2.plan.json"), JSON.stringify({ ...saved, format_version: "2" }));
      const v2 = await run(["apply", join(repo, "v2.plan.json"), "--auto-approve"]);
      expect(v2.code).toBe(1);
      expect(v2.stderr).toMatch(/plan format 2; this revsync reads format 1/);
      expect(await emu.writes()).toEqual([]);
      const ok = await run(["apply", file, "--auto-approve"]);
      expect(ok.code).toBe(0);
      expect((await emu.writes()).length).toBe(7);
    });

    anyProfile("without a terminal, apply needs --auto-approve and writes nothing", async () => {
      const r = await run(["apply"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/without a terminal to answer on \(stdin\) it needs --auto-approve/);
      expect(await emu.writes()).toEqual([]);
    });
  });

  describe("normalisation", () => {
    it("a reordered when list, data_identifiers or values file is no change", async () => {
      await applied();
      const hw = join(repo, "policies", "ssp", "hardware.yaml");
      writeFileSync(
        hw,
        readFileSync(hw, "utf8")
          .replace("data_identifiers: [product_id, currency_code]", "data_identifiers: [currency_code, product_id]")
          .replace(/ {4}- \{ field_name: product_family.*\n( {4}- \{ field_name: legal_entity.*\n)/, (m, second: string) => second + m.split("\n")[0] + "\n"),
      );
      expect(readFileSync(hw, "utf8")).toMatch(/legal_entity[\s\S]*product_family/);
      const csv = join(repo, "policies", "ssp", "values", "hardware-fy26-h1.csv");
      const [head, ...rows] = readFileSync(csv, "utf8").trim().split("\n");
      writeFileSync(csv, [head, ...rows.reverse()].join("\n") + "\n");
      const r = await run(["plan", "--detailed-exitcode"]);
      expectNoChanges(r.stdout);
      expect(r.code).toBe(0);
      expect((await run(["drift"])).code).toBe(0);
    });

    it("a change to an existing SSP policy is unsupported, with the reason", async () => {
      const ps = join(repo, "policies", "ssp", "professional-services.yaml");
      writeFileSync(ps, readFileSync(ps, "utf8").replace("unit_list_price * 0.92", "unit_list_price * 0.95"));
      const r = await run(["plan"]);
      expect(r.stdout).toContain(" ! ssp/Professional Services SSP (unsupported)");
      expect(r.stdout).toMatch(/reason: SSP policies have no update operation/);
      expect(r.stdout).toContain('expression: "unit_list_price * 0.92" -> "unit_list_price * 0.95"');
    });
  });

  describe("export", () => {
    it("export keeps every batch with its values: validate, plan --detailed-exitcode and drift exit 0 on day one; offline revsync test prices from the values", async () => {
      const dir = join(repo, "exported");
      mkdirSync(dir);
      writeFileSync(join(repo, "revsync.yaml"), readFileSync(join(repo, "revsync.yaml"), "utf8").replace("policies: policies", "policies: exported"));
      const e = await run(["export"]);
      expect(e.code).toBe(0);
      expect(e.stdout).toMatch(/wrote exported\/ssp\/hardware-ssp\.yaml/);
      // The schema line points into the repo (.revsync/schemas/), never into revsync's install.
      expect(readFileSync(join(dir, "ssp", "hardware-ssp.yaml"), "utf8")).toMatch(
        /^# yaml-language-server: \$schema=\.\.\/\.\.\/\.revsync\/schemas\/policy-file\.schema\.json\n/,
      );
      expect(existsSync(join(repo, ".revsync", "schemas", "policy-file.schema.json"))).toBe(true);
      // Every batch, file uploaded included, with its values beside the policy file.
      expect(e.stdout).toContain("wrote exported/ssp/values/hardware-ssp-fy26-h2.csv");
      expect(e.stdout).toContain("wrote exported/ssp/values/support-renewals-ssp-fy26-calc.csv");
      expect(readFileSync(join(dir, "ssp", "hardware-ssp.yaml"), "utf8")).toContain(
        "  - name: FY26-H2\n    status: file uploaded\n    values: values/hardware-ssp-fy26-h2.csv\n",
      );
      expect((await run(["validate"])).code).toBe(0);
      const p = await run(["plan", "--detailed-exitcode"]);
      expect(p.stdout.trim()).toBe('No changes. Environment "demo" matches the policy repo.');
      expect(p.code).toBe(0);
      const d = await run(["drift"]);
      expect(d.stdout.trim()).toBe('No drift. Environment "demo" matches the policy repo.');
      expect(d.code).toBe(0);
      // Offline, an upload policy's SSP comes from the values git now holds (FY25-H2, approved).
      mkdirSync(join(repo, "tests"));
      writeFileSync(
        join(repo, "tests", "hardware.yaml"),
        "apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: US appliance, 2025\n" +
          "    line: { product_id: HW-1000, product_family: Hardware, legal_entity: US01, currency_code: USD, date: 2025-08-01, unit_list_price: 1000 }\n" +
          // The exported FY25 row of HW-1000 USD is Percent, mid point 100: 100% of the list price.
          "    expect: { policy: Hardware SSP, ssp: 1000 }\n",
      );
      const t = await run(["test"]);
      expect({ code: t.code, out: t.stdout }).toMatchObject({ code: 0, out: expect.stringContaining("1 passed") });
    });
  });

  describe("failures and interruption", () => {
    const EDGE = `apiVersion: revsync/v1
kind: SspPolicy
metadata:
  name: Edge Devices SSP
spec:
  method: upload
  active: true
  hierarchy_no: 60
  data_identifiers: [product_id]
  floor_percentage: 85
  ceiling_percentage: 115
batches:
  - name: FY26-H1
    status: approved
    values: values/hardware-fy26-h1.csv
`;

    it("a create that fails: its review and approve are skipped, the rest applied, exit 1; the next apply finishes", async () => {
      writeFileSync(join(repo, "policies", "ssp", "edge.yaml"), EDGE);
      const plan = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      expect(plan.changes.filter((c: any) => c.address.startsWith("ssp/Edge Devices SSP")).map((c: any) => c.action)).toEqual(["create", "review", "approve"]);
      await emu.admin("POST", "faults", { faults: [{ kind: "status", status: 500, method: "POST", path: "/ssp", body_contains: "Edge Devices SSP" }] });
      const r = await run(["apply", "--auto-approve"]);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/failed {2}create {3}ssp\/Edge Devices SSP: POST .* failed \(500 server error\)/);
      expect(r.stdout).toContain("skipped review   ssp/Edge Devices SSP/batch/FY26-H1: skipped: create of ssp/Edge Devices SSP failed");
      expect(r.stdout).toContain("skipped approve  ssp/Edge Devices SSP/batch/FY26-H1: skipped: create of ssp/Edge Devices SSP failed");
      expect(r.stdout).toContain("Apply finished with failures: 7 done, 1 failed, 2 skipped.");
      const left = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      expect(left.changes.map((c: any) => `${c.action} ${c.address}`)).toEqual([
        "create ssp/Edge Devices SSP",
        "review ssp/Edge Devices SSP/batch/FY26-H1",
        "approve ssp/Edge Devices SSP/batch/FY26-H1",
      ]);
      await emu.admin("DELETE", "faults");
      const again = await run(["apply", "--auto-approve"]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain("Apply complete: 3 done, 0 failed, 0 skipped.");
      expect((await run(["plan", "--detailed-exitcode"])).code).toBe(0);
    });

    it("a tenant update and a batch approve whose answers were lost after commit: read back before anything else, the read-back confirms; one send each", async () => {
      await emu.admin("POST", "faults", {
        faults: [
          { kind: "drop", after_commit: true, method: "PATCH", path: "/tenant-configurations/", times: 1 },
          { kind: "drop", after_commit: true, method: "PATCH", path: "/ssp/approve/SSP-SW/", times: 1 },
        ],
      });
      const r = await run(["apply", "--auto-approve"]);
      expect(r.stdout).toContain("tenant-configuration/Default Tenant Configuration: updated (the answer was lost; confirmed by reading it back)");
      expect(r.stdout).toContain("ssp/Software Subscriptions SSP/batch/FY26-Q1: approved (the answer was lost; confirmed by reading it back)");
      expect(r.stdout).toContain("Apply complete: 5 done, 2 confirmed, 0 failed, 0 skipped.");
      expect(r.code).toBe(0);
      const journal: any[] = await emu.admin("GET", "requests");
      expect(journal.filter((j) => j.method === "PATCH" && j.path.includes("/tenant-configurations/"))).toHaveLength(1);
      expect(journal.filter((j) => j.method === "PATCH" && j.path.includes("/ssp/approve/SSP-SW/"))).toHaveLength(1);
      expect((await run(["plan", "--detailed-exitcode"])).code).toBe(0);
    });

    it("someone else's change during the one round trip of a tenant update: the refusal sends it back to its guard, which reads again, names bob and sends nothing more", async () => {
      // revsync reads the configuration right before its PATCH, then sends it; the emulator holds that
      // PATCH (alice's) until bob's change has landed, so its If-Match no longer holds. (A service without
      // If-Match would take it: the README says so; the guard before a resend is the test below.)
      await emu.admin("POST", "faults", {
        faults: [{ kind: "latency", latency_ms: 600_000, method: "PATCH", path: "/tenant-configurations/", body_contains: '"user_name":"alice"' }],
      });
      let outside: unknown;
      const r = await cli(["apply", "--auto-approve", "--concurrency", "1", "--verbose"], {
        cwd: repo,
        env: DEMO_ENV,
        when: {
          stderr: "tenant-configuration/Default Tenant Configuration: read again just now, unchanged since the plan; sending the update",
          act: () => (outside = patchOutside({ carves_allocation: false, ui_mode: "Modern" }).then(() => emu.admin("DELETE", "faults"))),
        },
      });
      await outside;
      const journal: any[] = await emu.admin("GET", "requests");
      const patches = journal.filter((j) => j.method === "PATCH" && j.path.includes("/tenant-configurations/"));
      if (profile === "default") {
        expect(r.stdout).toMatch(
          /blocked update {3}tenant-configuration\/Default Tenant Configuration: blocked: tenant-configuration\/Default Tenant Configuration changed in the service since the plan \(last changed by bob at \S+Z\): ui_mode "Classic" -> "Modern", version_id 1 -> 2/,
        );
        expect(patches).toHaveLength(2); // revsync's (refused) and bob's
      }
      expect(r.code).toBe(1);
      // bob's change survived.
      expect((await state()).tenants[0].tenantConfigurations[0].compliance_spec[0].ui_mode).toBe("Modern");
    });

    it("a tenant update turned away with 429 and a Retry-After, and bob's change lands during the wait (a service that ignores If-Match): the guard before the resend blocks it; bob's change survives", async () => {
      await emu.admin("POST", "settings", { if_match: false });
      // alice's PATCH is held, then turned away (429): bob's change lands while it is held, so before the
      // resend, whatever the wait. Letting it go leaves the 429 set, for a PATCH not there yet.
      const hers = { method: "PATCH", path: "/tenant-configurations/", body_contains: '"user_name":"alice"', times: 1 };
      const turnedAway = { kind: "rate_limit", retry_after: 1, ...hers };
      await emu.admin("POST", "faults", { faults: [{ kind: "latency", latency_ms: 600_000, ...hers }, turnedAway] });
      let outside: unknown;
      const r = await cli(["apply", "--auto-approve", "--concurrency", "1", "--verbose"], {
        cwd: repo,
        env: DEMO_ENV,
        when: {
          stderr: "tenant-configuration/Default Tenant Configuration: read again just now, unchanged since the plan; sending the update",
          act: () => (outside = patchOutside({ ui_mode: "Modern" }).then(() => emu.admin("POST", "faults", { faults: [turnedAway] }))),
        },
      });
      await outside;
      expect(r.stdout).toMatch(
        /blocked update {3}tenant-configuration\/Default Tenant Configuration: blocked: tenant-configuration\/Default Tenant Configuration changed in the service since the plan \(last changed by bob at \S+Z\): ui_mode "Classic" -> "Modern"/,
      );
      expect(r.code).toBe(1);
      const alices = (await journal()).filter((j) => j.method === "PATCH" && j.path.includes("/tenant-configurations/") && j.status !== 200);
      expect(alices.map((j) => j.status)).toEqual([429]);
      expect((await state()).tenants[0].tenantConfigurations[0].compliance_spec[0].ui_mode).toBe("Modern");
    });

    it("bob creates a policy of the same name and rules but other values between apply's guard and its POST: a conflict naming bob, its batch steps skipped, bob's batch stays unreviewed", async () => {
      writeFileSync(join(repo, "policies", "ssp", "edge.yaml"), EDGE);
      const plan = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      const create = plan.changes.find((c: any) => c.action === "create" && c.address === "ssp/Edge Devices SSP");
      const alices = create.payload.body;
      const bobs = structuredClone(alices);
      bobs.compliance_spec[0].batches[0].file_name = "bob-upload.csv";
      bobs.compliance_spec[0].batches[0].ssp_values[0].mid_point += 7;
      // The emulator holds alice's POST (only hers names her file) until bob's has landed.
      const mine = `"file_name":${JSON.stringify(alices.compliance_spec[0].batches[0].file_name)}`;
      await emu.admin("POST", "faults", { faults: [{ kind: "latency", latency_ms: 600_000, method: "POST", path: "/policy/ssp", body_contains: mine }] });
      let outside: Promise<{ status: number }> | undefined;
      const r = await cli(["apply", "--auto-approve", "--concurrency", "1", "--verbose", "--target", "ssp/Edge Devices SSP"], {
        cwd: repo,
        env: DEMO_ENV,
        when: {
          stderr: "ssp/Edge Devices SSP: read again just now, not in the service; sending the create",
          act: () =>
            (outside = token(emu.url, "bob")
              .then((t) => api(emu.url, t, "POST", "/apis/policy-sets/v1/policy/ssp", bobs))
              .then(async (res) => (await emu.admin("DELETE", "faults"), res))),
        },
      });
      expect((await outside)?.status).toBe(200);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/failed {2}create {3}ssp\/Edge Devices SSP: .*(exists in the service now \(created by bob at \S+Z\)|already exists)/);
      expect(r.stdout).not.toMatch(/confirmed by reading it back/);
      expect(r.stdout).toContain("skipped review   ssp/Edge Devices SSP/batch/FY26-H1: skipped: create of ssp/Edge Devices SSP failed");
      expect(r.stdout).toContain("skipped approve  ssp/Edge Devices SSP/batch/FY26-H1: skipped: create of ssp/Edge Devices SSP failed");
      const edge = (await state()).tenants[0].ssp.filter((x: any) => x.compliance_name === "Edge Devices SSP");
      expect(edge).toHaveLength(1);
      expect(edge[0].batches[0].status).toBe("file uploaded");
      expect((await journal()).filter((j) => j.method === "PATCH")).toEqual([]);
    });

    it("what is sent is what was shown: an edited payload with its checksum recomputed, and --target with a saved plan, send nothing; the same saved plan applied twice is 'already applied', exit 0, zero writes", async () => {
      const file = join(repo, "demo.plan.json");
      expect((await run(["plan", "--out", file])).code).toBe(0);
      const saved = JSON.parse(readFileSync(file, "utf8"));
      const edited = structuredClone(saved);
      edited.changes.find((c: any) => c.action === "update").payload.item.manual_journal_contra_account = "MJ-EVIL-999";
      edited.checksum = planChecksum(edited);
      const editedFile = join(repo, "edited.plan.json");
      writeFileSync(editedFile, JSON.stringify(edited));
      const e = await run(["apply", editedFile, "--auto-approve"]);
      expect(e.code).toBe(1);
      expect(e.stderr).toContain("the plan's writes are not what it shows, so nothing was sent");
      expect(e.stderr).toContain('manual_journal_contra_account "MJ-EVIL-999" is not the reviewed "MJ-CONTRA-100"');
      const t = await run(["apply", file, "--auto-approve", "--target", "ssp/Training Courses SSP"]);
      expect(t.code).toBe(1);
      expect(t.stderr).toMatch(/--target cannot narrow a saved plan/);
      expect(await emu.writes()).toEqual([]);

      expect((await run(["apply", file, "--auto-approve"])).code).toBe(0);
      await emu.admin("DELETE", "requests");
      const again = await run(["apply", file, "--auto-approve", "--format", "json"]);
      expect(again.code).toBe(0);
      const report = JSON.parse(again.stdout);
      expect(report.summary).toEqual({ done: 0, already: 7, confirmed: 0, blocked: 0, failed: 0, unknown: 0, skipped: 0, overwritten: 0, breached: 0 });
      expect(report.outcomes.map((o: any) => o.outcome)).toEqual(Array(7).fill("already"));
      for (const o of report.outcomes) expect(o.message).toMatch(/^already \S+ \(.*; nothing was sent\)$/);
      // In words: nothing was sent, and the closing line says so rather than "7 done".
      const words = await run(["apply", file, "--auto-approve"]);
      expect(words.stdout).toMatch(/^already update {3}tenant-configuration\/Default Tenant Configuration: already/m);
      expect(words.stdout).toContain("Apply complete: 0 done, 7 already, 0 failed, 0 skipped; nothing was sent.");
      expect(words.stdout).not.toContain("7 done");
      expect(await emu.writes()).toEqual([]);
    });

    // The run's time limit is the client's: how the service shapes its answers does not enter.
    anyProfile(
      "a read whose body trickles in (a byte a second) ends at --timeout 3s: exit 1, naming the request that timed out",
      async () => {
        await emu.admin("POST", "faults", { faults: [{ kind: "trickle", latency_ms: 1000, method: "GET", path: "/tenant-configurations" }] });
        const r = await run(["plan", "--timeout", "3s"]);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/GET \/apis\/policy-sets\/v1\/policy\/tenant-configurations .*(within the run's time limit \(--timeout 3s\))/);
      },
      30_000,
    );

    anyProfile("bad policy input: exit 1, nothing sent", async () => {
      writeFileSync(join(repo, "policies", "ssp", "bad.yaml"), "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Bad }\nspec: { method: nope }\n");
      const r = await run(["apply", "--auto-approve"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/policies\/ssp\/bad\.yaml:4:17: error: spec\.method: expected one of/);
      expect(r.stdout).toBe("");
      const journal: any[] = await emu.admin("GET", "requests");
      expect(journal).toEqual([]);
    });
  });
}
