import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROFILES } from "../src/emulator/profile.js";
import { cli, DEMO_ENV, removeDir, useEmulatorRepo, type Emu } from "../src/testing/helpers.js";

// What is written is exactly what was reviewed, to the resource that was reviewed (issue 41): a name the
// service holds twice addresses nothing; the batch a review moved is the one compared; a body is whole;
// the plan's environment is the environment; a version that moves by ten is not someone else's write; a
// null in a text field passes; a name that looks like git's is named. Against the emulator, in process;
// its request journal shows that nothing unreviewed was sent.

const HW = "ssp/Hardware SSP";
const row = (product: string, currency: string) => ({
  product_id: product,
  currency_code: currency,
  value_type: "Percent",
  below_mid_point: 1,
  mid_point: 999,
  above_mid_point: 1000,
  effective_start_date: "2026-01-01",
  effective_end_date: "2026-06-30",
});

/** The emulator's state, changed by `edit`, loaded whole (the tokens go with it). */
async function edited(emu: Emu, edit: (tenant: any) => void): Promise<void> {
  const state = await emu.admin<any>("GET", "state");
  edit(state.tenants[0]);
  await emu.admin("POST", "reset", { state });
}

describe.each(PROFILES)("names the service holds twice, against the emulator's %s profile", (profile) => {
  const fx = useEmulatorRepo({ profile, freshRepo: true });
  const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env } });

  it("a second batch FY26-H1 (every row 1/999/1000, listed first): plan, drift and export name both copies; apply sends nothing to the batch", async () => {
    const rows = ["HW-1000", "HW-1010"].flatMap((p) => ["USD", "EUR"].map((c) => row(p, c)));
    await fx.emu.admin("POST", "uploads", {
      type: "ssp",
      policy_name: "Hardware SSP",
      batch_name: "FY26-H1",
      duplicate: "first",
      values: rows,
      uploaded_by: "carol",
    });
    const plan = await run(["plan", "--format", "json"]);
    expect(plan.code, plan.stderr).toBe(0);
    const entries = JSON.parse(plan.stdout).changes.filter((c: any) => c.address === `${HW}/batch/FY26-H1`);
    expect(entries.map((c: any) => c.action)).toEqual(["blocked"]);
    expect(entries[0].reason).toMatch(/^the service holds 2 batches of "Hardware SSP" named "FY26-H1": \(1\) file_id .*; \(2\) file_id .*writes to none/);
    expect(entries[0].reason).toMatch(/status "file uploaded", .* \(last changed by carol at/);
    const drift = await run(["drift"]);
    expect(drift.code).toBe(2);
    expect(drift.stdout).toMatch(/^duplicate +ssp\/Hardware SSP\/batch\/FY26-H1: the service holds 2 batches/m);

    await fx.emu.admin("DELETE", "requests");
    await run(["apply", "--auto-approve"]);
    const journal = await fx.emu.admin<{ method: string; path: string }[]>("GET", "requests");
    expect(journal.filter((e) => e.method === "PATCH" && e.path.includes("/FY26-H1"))).toEqual([]);

    const exported = await run(["export", "--dir", "out"]);
    expect(exported.code).toBe(1);
    expect(exported.stderr).toContain('Error: batch "FY26-H1" of SSP policy "Hardware SSP" (file_id');
    expect(exported.stderr).toContain("not exported, the service holds its name more than once");
    expect(readFileSync(join(fx.repo, "out", "ssp", "hardware-ssp.yaml"), "utf8")).not.toContain("FY26-H1");
  });

  it("a second tenant configuration and a second SSP policy of git's names (hierarchy 5, unit_list_price * 3): blocked, drift, export refuses each copy by name, nothing written", async () => {
    await edited(fx.emu, (t) => {
      t.tenantConfigurations.push({ ...structuredClone(t.tenantConfigurations[0]), compliance_id: "TC-0002" });
      const sw = t.ssp.find((p: any) => p.compliance_name === "Software Subscriptions SSP");
      t.ssp.unshift({
        ...structuredClone(sw),
        compliance_id: "SSP-DUP",
        item: { ...sw.item, method: "formula", expression: "unit_list_price * 3", hierarchy_no: 5 },
        batches: [],
      });
    });
    const plan = await run(["plan", "--format", "json", "--detailed-exitcode"]);
    expect(plan.code).toBe(2);
    const changes = JSON.parse(plan.stdout).changes;
    const at = (a: string) => changes.filter((c: any) => c.address === a || c.address.startsWith(`${a}/`)).map((c: any) => c.action);
    expect(at("tenant-configuration/Default Tenant Configuration")).toEqual(["blocked"]);
    expect(at("ssp/Software Subscriptions SSP")).toEqual(expect.arrayContaining(["blocked"]));
    expect(at("ssp/Software Subscriptions SSP").filter((a: string) => a !== "blocked")).toEqual([]);
    const sw = changes.find((c: any) => c.address === "ssp/Software Subscriptions SSP");
    expect(sw.reason).toContain('compliance_id "SSP-DUP", active, hierarchy_no 5, method "formula", expression "unit_list_price * 3"');

    const drift = await run(["drift", "--format", "json"]);
    expect(
      JSON.parse(drift.stdout)
        .drift.filter((d: any) => d.class === "duplicate")
        .map((d: any) => d.address),
    ).toEqual(["tenant-configuration/Default Tenant Configuration", "ssp/Software Subscriptions SSP"]);
    await fx.emu.admin("DELETE", "requests");
    await run(["apply", "--auto-approve"]);
    const writes = await fx.emu.writes();
    expect(writes.filter((w) => w.path.includes("tenant-configurations") || w.path.includes("SSP-SW") || w.path.includes("SSP-DUP"))).toEqual([]);

    const exported = await run(["export", "--dir", "all"]);
    expect(exported.code).toBe(1);
    for (const copy of [
      'tenant configuration "Default Tenant Configuration" (compliance_id "TC-0001")',
      'tenant configuration "Default Tenant Configuration" (compliance_id "TC-0002")',
      'SSP policy "Software Subscriptions SSP" (compliance_id "SSP-DUP")',
    ])
      expect(exported.stderr).toContain(`Error: ${copy}: not exported`);
    // What it wrote validates (no two files of one name).
    const config = join(fx.repo, "revsync.yaml");
    writeFileSync(config, readFileSync(config, "utf8").replace("policies: policies", "policies: all"));
    expect((await run(["validate"])).code).toBe(0);
  });
});

describe("the batch that moved is the one compared", () => {
  const fx = useEmulatorRepo({ profile: "literal" });
  it("someone else's upload of a second FY26-H2 lands between the guard's read and the review: the review is not done but breached, and the record says so", async () => {
    const rows = ["HW-1000"].map((p) => row(p, "USD"));
    // A service that does not honour If-Match (the spec does not promise it): the upload's version bump
    // does not turn the review away.
    await fx.emu.admin("POST", "settings", { if_match: false });
    await fx.emu.admin("POST", "faults", {
      kind: "upload",
      method: "PATCH",
      path: "/review/",
      times: 1,
      upload: { type: "ssp", policy_name: "Hardware SSP", batch_name: "FY26-H2", duplicate: "first", values: rows, uploaded_by: "carol" },
    });
    const r = await cli(["apply", "--auto-approve", "--target", `${HW}/batch/FY26-H2`, "--evidence", "ev"], { cwd: fx.repo, env: DEMO_ENV });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^breached review +ssp\/Hardware SSP\/batch\/FY26-H2: the review of batch "FY26-H2" of "Hardware SSP" landed, but the service holds 2 batches of that name now .* the batch that moved may not be the one reviewed/m,
    );
    expect(r.stdout).toContain("A batch other than the one reviewed, or other values, may have moved (named above)");
    const verify = await cli(["evidence", "verify", "ev"], { cwd: fx.repo });
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain("ssp/Hardware SSP/batch/FY26-H2: what the service shows moved is not what was reviewed (the review of batch");
    expect(verify.stdout).not.toContain("in breach of four eyes");
  });
});

describe("bodies are whole; nulls in text fields pass; a version that moves by ten", () => {
  const fx = useEmulatorRepo({ freshRepo: true });
  const run = (args: string[]) => cli(args, { cwd: fx.repo, env: DEMO_ENV });
  const tc = join("policies", "tenant-configuration.yaml");
  const without = (field: string) => writeFileSync(join(fx.repo, tc), readFileSync(join(fx.repo, tc), "utf8").replace(new RegExp(`\\n  ${field}: .*`), ""));

  it("the service leaves ui_mode out and git does not set it: the plan blocks the update naming the field, and apply sends no PATCH", async () => {
    without("ui_mode");
    await edited(fx.emu, (t) => delete t.tenantConfigurations[0].compliance_spec[0].ui_mode);
    const plan = await run(["plan"]);
    expect(plan.stdout).toMatch(
      /x tenant-configuration\/Default Tenant Configuration \(blocked\)\n +reason: the update body \(spec 4\.2\) would not be whole: compliance_spec\.0\.ui_mode is required|ui_mode is required/,
    );
    expect(plan.stdout).toContain("set it in policies/tenant-configuration.yaml");
    await fx.emu.admin("DELETE", "requests");
    await run(["apply", "--auto-approve"]);
    expect((await fx.emu.writes()).filter((w) => w.method === "PATCH" && w.path.includes("tenant-configurations"))).toEqual([]);
  });

  it("prorate_method null in the service: plan, drift and export go on (not compared, said); git's value goes with an update, and the plan says so", async () => {
    await edited(fx.emu, (t) => (t.tenantConfigurations[0].compliance_spec[0].prorate_method = null));
    const plan = await run(["plan"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('note: the update also sends prorate_method "Daily" as git sets it: the service shows no value (null) to compare');
    const drift = await run(["drift"]);
    expect(drift.stderr).not.toContain("unexpected answer");
    expect(drift.stdout).toContain("tenant-configuration/Default Tenant Configuration: prorate_method not compared: the service shows no value (null)");
    expect((await run(["export", "--dir", "ex"])).stderr).not.toContain("unexpected answer");
    const applied = await run(["apply", "--auto-approve", "--target", "tenant-configuration/Default Tenant Configuration"]);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const state = await fx.emu.admin<any>("GET", "state");
    expect(state.tenants[0].tenantConfigurations[0].compliance_spec[0].prorate_method).toBe("Daily");
    // A tenant configuration field of the wrong type is named as one (not as an SSP policy).
    await edited(fx.emu, (t) => (t.tenantConfigurations[0].compliance_spec[0].ui_mode = 7));
    expect((await run(["plan"])).stderr).toContain('unexpected answer for tenant configuration "Default Tenant Configuration"');
  });

  it("the service's answer leaves out the envelope's unique_key, which the update body requires: the plan blocks the update naming it, nothing is sent (never an empty GUID)", async () => {
    await edited(fx.emu, (t) => delete t.tenantConfigurations[0].unique_key);
    const plan = await run(["plan"]);
    expect(plan.stdout).toMatch(
      /x tenant-configuration\/Default Tenant Configuration \(blocked\)\n +reason: the update body \(spec 4\.2\) would not be whole: unique_key is required/,
    );
    await fx.emu.admin("DELETE", "requests");
    await run(["apply", "--auto-approve", "--target", "tenant-configuration/Default Tenant Configuration"]);
    expect((await fx.emu.writes()).map((w) => `${w.method} ${w.path}`)).toEqual([]);
  });

  it('an id a URL takes for a step up the path ("." and ".."): the update and the batch steps are blocked, nothing is sent to another path', async () => {
    // Without the rule, PATCH …/tenant-configurations/. went to …/tenant-configurations/ (the collection),
    // and PATCH …/ssp/review/../FY26-H2 to …/ssp/FY26-H2: a URL removes dot segments.
    await edited(fx.emu, (t) => {
      t.tenantConfigurations[0].compliance_id = ".";
      t.ssp.find((p: any) => p.compliance_name === "Hardware SSP").compliance_id = "..";
    });
    const plan = await run(["plan"]);
    expect(plan.stdout).toMatch(/x tenant-configuration\/Default Tenant Configuration \(blocked\)\n +reason: its compliance_id "\.", which the update's path/);
    expect(plan.stdout).toMatch(
      /x ssp\/Hardware SSP\/batch\/FY26-H2 \(blocked\)\n +reason: its policy's compliance_id "\.\.", which the review and approve path/,
    );
    await fx.emu.admin("DELETE", "requests");
    const applied = await run(["apply", "--auto-approve", "--target", "tenant-configuration/Default Tenant Configuration", "--target", HW]);
    expect(applied.stderr).toContain("Plan: nothing to apply; 3 blocked");
    expect((await fx.emu.writes()).map((w) => `${w.method} ${w.path}`)).toEqual([]);
  });

  it("a service whose version_id moves by 10 per write: the first update is done, with 'could not tell'; the next, by the same step, is done without a word", async () => {
    await edited(fx.emu, (t) =>
      t.tenantConfigurations.push({
        ...structuredClone(t.tenantConfigurations[0]),
        compliance_id: "TC-0002",
        compliance_name: "Second Configuration",
        unique_key: "uk-2",
      }),
    );
    await fx.emu.admin("POST", "settings", { version_step: 10 });
    const second = readFileSync(join(fx.repo, tc), "utf8").replace("name: Default Tenant Configuration", "name: Second Configuration");
    writeFileSync(join(fx.repo, "policies", "second.yaml"), second);
    const applied = await run([
      "apply",
      "--auto-approve",
      "--concurrency",
      "1",
      "--target",
      "tenant-configuration/Default Tenant Configuration",
      "--target",
      "tenant-configuration/Second Configuration",
    ]);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const lines = applied.stdout.split("\n").filter((l) => / update /.test(l));
    expect(lines).toHaveLength(2);
    expect(lines.filter((l) => l.includes("could not be told"))).toHaveLength(1);
    expect(lines.every((l) => l.startsWith("done"))).toBe(true);
  });
});

describe("the plan's environment is the environment; credentials are never in revsync.yaml; look-alike names", () => {
  const fx = useEmulatorRepo({ freshRepo: true });
  const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env } });

  it("a plan saved for sandbox, applied with REVSYNC_ENV=production or --env production: refused, nothing sent; --env and REVSYNC_ENV naming two is refused too", async () => {
    const config = join(fx.repo, "revsync.yaml");
    writeFileSync(
      config,
      readFileSync(config, "utf8").replace("  demo:", "  sandbox:") +
        `  production:\n    base_url: ${fx.emu.url}\n    auth_url: ${fx.emu.url}\n    realm: demo\n    vars: { contra_account: MJ-CONTRA-100 }\n`,
    );
    expect((await run(["plan", "--env", "sandbox", "--out", "p.json"])).code).toBe(0);
    await fx.emu.admin("DELETE", "requests");
    const byVar = await run(["apply", "p.json", "--auto-approve"], { REVSYNC_ENV: "production" });
    expect(byVar.code).toBe(1);
    expect(byVar.stderr).toContain('the plan p.json is for environment "sandbox", not "production" (REVSYNC_ENV="production"): nothing was sent');
    const byFlag = await run(["apply", "p.json", "--auto-approve", "--env", "production"]);
    expect(byFlag.stderr).toContain('not "production" (--env "production")');
    const both = await run(["plan", "--env", "sandbox"], { REVSYNC_ENV: "production" });
    expect(both.stderr).toContain('--env "sandbox" and REVSYNC_ENV="production" name two environments: nothing was sent');
    expect(await fx.emu.admin("GET", "requests")).toEqual([]);
  });

  it("validate refuses a token written as the user of lock.remote, and user:pass@; an ssh login is no credential", async () => {
    const config = join(fx.repo, "revsync.yaml");
    const base = readFileSync(config, "utf8");
    for (const [remote, bad] of [
      ["https://ghp_abcdefghijklmnop@github.com/acme/policies.git", "user name"],
      ["https://ci:hunter2@git.example.com/p.git", "password"],
      ["https://github.com/acme/policies.git?access_token=ghp_abcdefghijklmnop", "query"],
      ["git@github.com:acme/policies.git", ""],
      ["ssh://git@github.com/acme/policies.git", ""],
    ] as const) {
      writeFileSync(config, `${base}lock: { remote: '${remote}' }\n`);
      const v = await run(["validate"]);
      expect([v.code, v.stdout + v.stderr].join(" "), remote).toMatch(bad ? new RegExp(`^1 .*lock\\.remote: it holds a ${bad}`, "s") : /^0 /);
      expect(v.stdout + v.stderr).not.toMatch(/hunter2|ghp_abcdefghijklmnop/);
    }
  });

  it("a live policy whose name differs from git's only by case, a trailing space, a zero-width or a look-alike letter: plan and drift warn, naming both", async () => {
    await edited(fx.emu, (t) => {
      const hw = t.ssp.find((p: any) => p.compliance_name === "Professional Services SSP");
      hw.compliance_name = "Training Courses SSP\u200b";
      hw.item.name = hw.compliance_name;
    });
    const plan = await run(["plan"]);
    expect(plan.stdout).toContain(
      'Warning: "ssp/Training Courses SSP" in git and "ssp/Training Courses SSP\\u200b" in the service look alike (they differ only in case, spaces, characters that cannot be seen, how a letter is written or letters that look alike)',
    );
    const drift = await run(["drift", "--format", "json"]);
    expect(JSON.parse(drift.stdout).look_alike).toEqual([{ git: "ssp/Training Courses SSP", service: "ssp/Training Courses SSP\u200b" }]);
    // A character Unicode says is ignored when shown, a letter (the Hangul filler), not a format character:
    // nothing a reader sees, so the warning names it, written as an escape (the others: src/look-alike.test.ts).
    await edited(fx.emu, (t) => {
      const p = t.ssp.find((p: any) => p.compliance_name.startsWith("Training Courses SSP"));
      p.compliance_name = "Training Courses SSP\u3164";
      p.item.name = p.compliance_name;
    });
    expect((await run(["plan"])).stdout).toContain('"ssp/Training Courses SSP" in git and "ssp/Training Courses SSP\\u3164" in the service look alike');
  });
});

describe("export around a refused link", () => {
  const fx = useEmulatorRepo({ freshRepo: true });
  it("a policy file that is a link out of the repo: export names it, writes no second file for what it may hold, exit 1", async () => {
    const outside = join(tmpdir(), `revsync-outside-${process.pid}`);
    mkdirSync(outside, { recursive: true });
    try {
      const file = join(fx.repo, "policies", "tenant-configuration.yaml");
      writeFileSync(join(outside, "tc.yaml"), readFileSync(file, "utf8"));
      removeDir(file);
      symlinkSync(join(outside, "tc.yaml"), file);
      const r = await cli(["export"], { cwd: fx.repo, env: DEMO_ENV });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/policies\/tenant-configuration\.yaml.*(outside|out of) the policy repo/);
      expect(r.stderr).toContain(
        "not written (tenant-configuration/Default Tenant Configuration): a policy file of the folder could not be read (above), and it may hold this policy",
      );
      expect(() => readFileSync(join(fx.repo, "policies", "default-tenant-configuration-2.yaml"))).toThrow();
      expect(() => readFileSync(join(fx.repo, "policies", "default-tenant-configuration.yaml"))).toThrow();
    } finally {
      removeDir(outside);
    }
  });
});
