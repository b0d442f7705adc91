import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, cli, DEMO_ENV, multiEnvState, removeDir, ROOT, startEmu, tempRepo, token, updateBody, type Emu } from "../src/testing/helpers.js";
import { markdownText } from "../src/report/escape.js";

// What export writes into git, and what plan, drift and markdown report, keep the truth (issue 27):
// through the real CLI against the emulator, on both answer profiles where the profile is the point.
const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
/** The literal profile's nulls, one note for every policy and both fields (not two notes a policy). */
const NULLS =
  "ssp/Hardware SSP, ssp/Professional Services SSP, ssp/Software Subscriptions SSP and ssp/Support Renewals SSP: floor_percentage and ceiling_percentage not compared: the service shows no value (null) for them in any, so git's values could be neither checked nor changed";

describe("the literal profile (the service answers floor/ceiling as null)", () => {
  let emu: Emu;
  let repo: string;
  beforeAll(async () => {
    emu = await startEmu("demo", { profile: "literal" });
    repo = tempRepo(emu.url);
    rmSync(join(repo, "policies", "ssp", "training.yaml")); // a policy the service lacks: plan would create it
  });
  afterAll(async () => {
    removeDir(repo);
    await emu.close();
  });
  const run = (args: string[]) => cli(args, { cwd: repo, env: DEMO_ENV });

  it("export in place keeps git's floor/ceiling; plan, drift and both markdowns name the field they could not compare", async () => {
    const e = await run(["export"]);
    expect(e.code).toBe(0);
    const hw = readFileSync(join(repo, "policies", "ssp", "hardware.yaml"), "utf8");
    expect(hw).toContain("  floor_percentage: 85\n");
    expect(hw).toContain("  ceiling_percentage: 115\n");
    expect(hw).not.toContain("left out");
    expect(e.stdout).toContain(`Note: ${NULLS}`);
    expect((await run(["validate"])).code).toBe(0);
    const p = await run(["plan", "--detailed-exitcode"]);
    expect(p.code).toBe(0);
    expect(p.stdout).toMatch(
      /^No changes\. Environment "demo" matches the policy repo in every field it shows, except the fields the service does not show \(see the note\)/,
    );
    expect(p.stdout.match(/^Note: /gm)).toEqual(["Note: "]);
    expect(p.stdout).toContain(`Note: ${NULLS}`);
    const again = await run(["export"]);
    expect(again.stdout).toMatch(/^Nothing to export: git's files already hold what the service holds, in every field the service shows/m);
    expect(again.stdout).not.toMatch(/^(wrote|updated) /m);

    // git's floor changes: the service cannot show it, so nothing says "matches" without naming it.
    writeFileSync(join(repo, "policies", "ssp", "hardware.yaml"), hw.replace("floor_percentage: 85", "floor_percentage: 80"));
    const md = await run(["plan", "--format", "markdown"]);
    expect(md.stdout).toContain(`> Note: ${markdownText(NULLS)}`);
    expect(md.stdout).not.toContain("The service matches the policy repo.");
    const d = await run(["drift"]);
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(/^No drift in what the service shows\./);
    expect(d.stdout).toContain(`Note: ${NULLS}`);
    const dmd = await run(["drift", "--format", "markdown"]);
    expect(dmd.stdout).toContain(`> Note: ${markdownText(NULLS)}`);
    expect(dmd.stdout).not.toContain("**No drift.**");
    expect(JSON.parse((await run(["drift", "--format", "json"])).stdout).notes).toEqual([NULLS]);
  });
});

describe("the default profile", () => {
  let emu: Emu;
  beforeAll(async () => {
    emu = await startEmu("demo");
  });
  afterAll(async () => emu.close());

  it("export edits as an editor would: through a symlink with its mode; a YAML error skipped with its place (exit 1); --dry-run lists the schemas; a second export writes nothing", async () => {
    await emu.reset();
    const repo = tempRepo(emu.url);
    const run = (args: string[]) => cli(args, { cwd: repo, env: DEMO_ENV });
    try {
      rmSync(join(repo, "policies", "ssp", "training.yaml"));
      mkdirSync(join(repo, "shared"));
      const target = join(repo, "shared", "hardware.yaml");
      const link = join(repo, "policies", "ssp", "hardware.yaml");
      renameSync(link, target);
      symlinkSync("../../shared/hardware.yaml", link);
      chmodSync(target, 0o600);
      const broken = "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata:\n  name: Broken SSP\nspec:\n  method: [upload\n";
      writeFileSync(join(repo, "policies", "ssp", "broken.yaml"), broken);
      const before = readFileSync(target, "utf8");

      const dry = await run(["export", "--dry-run"]);
      expect(dry.code).toBe(1);
      expect(dry.stdout).toContain("would update policies/ssp/hardware.yaml");
      // The files name ../../schemas/ in their first line: nothing refers to .revsync/schemas/, so export
      // neither writes nor announces it.
      expect(dry.stdout).not.toContain(".revsync/schemas");
      expect(dry.stdout).toMatch(/would set environments\.demo\.vars\.contra_account in revsync\.yaml: "MJ-CONTRA-100" -> "MJ-CONTRA-000"/);
      expect(dry.stderr).toMatch(/policies\/ssp\/broken\.yaml:\d+:\d+: .+: not updated/);
      expect(readFileSync(target, "utf8")).toBe(before);
      expect(existsSync(join(repo, ".revsync"))).toBe(false);

      // Once the file it updates names .revsync/schemas/ (relative to where the link stands, as an editor
      // reads it), export writes the schemas there and says so.
      writeFileSync(
        target,
        before.replace(/^# yaml-language-server: \$schema=\S+/, "# yaml-language-server: $schema=../../.revsync/schemas/policy-file.schema.json"),
      );
      const e = await run(["export"]);
      expect(e.code).toBe(1);
      expect(e.stderr).toMatch(/policies\/ssp\/broken\.yaml:\d+:\d+: .+: not updated \(fix the YAML, then export again\)/);
      expect(e.stderr).not.toMatch(/internal error|cannot be stringified/);
      expect(e.stdout).toContain("wrote .revsync/schemas/policy-file.schema.json");
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(statSync(target).mode & 0o777).toBe(0o600);
      expect(readFileSync(target, "utf8")).not.toBe(before);
      expect(readFileSync(join(repo, "policies", "ssp", "broken.yaml"), "utf8")).toBe(broken);
      // The tenant file keeps its ${contra_account}; this environment's vars take the service's value.
      expect(readFileSync(join(repo, "policies", "tenant-configuration.yaml"), "utf8")).toContain("manual_journal_contra_account: ${contra_account}");
      expect(readFileSync(join(repo, "revsync.yaml"), "utf8")).toContain("contra_account: MJ-CONTRA-000");

      rmSync(join(repo, "policies", "ssp", "broken.yaml"));
      const again = await run(["export"]);
      expect(again.code).toBe(0);
      expect(again.stdout.trim()).toBe("Nothing to export: git's files already hold what the service holds.");
      expect((await run(["plan", "--detailed-exitcode"])).code).toBe(0);

      // A variable that this environment's vars take from the process environment is no environment's
      // own: the field is refused, named.
      const cfg = readFileSync(join(repo, "revsync.yaml"), "utf8");
      writeFileSync(join(repo, "revsync.yaml"), cfg.replace("contra_account: MJ-CONTRA-000", "contra_account: ${CONTRA}"));
      const tcFile = readFileSync(join(repo, "policies", "tenant-configuration.yaml"), "utf8");
      const shared = await cli(["export"], { cwd: repo, env: { ...DEMO_ENV, CONTRA: "MJ-CONTRA-100" } });
      expect(shared.code).toBe(1);
      expect(shared.stderr).toContain(
        "tenant-configuration/Default Tenant Configuration: manual_journal_contra_account comes from ${contra_account}, which environments.demo.vars of revsync.yaml takes from ${CONTRA} of the process environment",
      );
      expect(readFileSync(join(repo, "policies", "tenant-configuration.yaml"), "utf8")).toBe(tcFile);
      writeFileSync(join(repo, "revsync.yaml"), cfg);

      // A target exported into a folder outside the repo is written there.
      const outside = mkdtempSync(join(tmpdir(), "revsync-outside-"));
      try {
        const o = await run(["export", "--dir", outside, "--target", "ssp/Hardware SSP"]);
        expect(o.code).toBe(0);
        expect(o.stdout).not.toContain("Nothing to export");
        expect(existsSync(join(outside, "ssp", "hardware-ssp.yaml"))).toBe(true);
      } finally {
        removeDir(outside);
      }
    } finally {
      removeDir(repo);
    }
  }, 90_000);

  it("a new upload policy: the create lists the batch it sends, whose review starts from file uploaded", async () => {
    await emu.reset();
    const repo = tempRepo(emu.url);
    try {
      cpSync(join(ROOT, "examples", "multi-env", "policies", "ssp", "values", "edge-fy26-h1.csv"), join(repo, "policies", "ssp", "values", "edge-fy26-h1.csv"));
      writeFileSync(
        join(repo, "policies", "ssp", "edge.yaml"),
        "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Edge Devices SSP }\nspec:\n  method: upload\n  active: true\n  hierarchy_no: 60\n  data_identifiers: [product_id]\n  floor_percentage: 85\n  ceiling_percentage: 115\nbatches:\n  - name: FY26-H1\n    status: reviewed\n    values: values/edge-fy26-h1.csv\n",
      );
      const r = await cli(["plan", "--target", "ssp/Edge Devices SSP"], { cwd: repo, env: DEMO_ENV });
      expect(r.stdout).toMatch(/ \+ ssp\/Edge Devices SSP \(create\)\n(.*\n)* {6}batches: \[\{"batch_name":"FY26-H1","status":"file uploaded"/);
      expect(r.stdout).toContain('      status: "file uploaded" -> "reviewed"');
      expect(r.stdout).not.toContain("null -> ");
    } finally {
      removeDir(repo);
    }
  });
});

describe("examples/multi-env", () => {
  let emu: Emu;
  let work: string;
  beforeAll(async () => {
    emu = await startEmu("demo");
    await emu.admin("POST", "reset", { state: multiEnvState(await emu.admin("GET", "state")) });
    work = mkdtempSync(join(tmpdir(), "revsync-multi-"));
    cpSync(join(ROOT, "examples", "multi-env"), work, { recursive: true });
  });
  afterAll(async () => {
    removeDir(work);
    await emu.close();
  });
  const env = {
    ...DEMO_ENV,
    SANDBOX_BASE_URL: "",
    SANDBOX_AUTH_URL: "",
    PRODUCTION_BASE_URL: "",
    PRODUCTION_AUTH_URL: "",
  };
  const run = (args: string[]) =>
    cli(args, {
      cwd: work,
      env: { ...env, SANDBOX_BASE_URL: emu.url, SANDBOX_AUTH_URL: emu.url, PRODUCTION_BASE_URL: `${emu.url}/tenants/acme`, PRODUCTION_AUTH_URL: emu.url },
    });

  it("after another user changes sandbox's contra account, export --env sandbox leaves production's plan at 0", async () => {
    expect((await run(["apply", "--env", "sandbox", "--auto-approve"])).code).toBe(0);
    expect((await run(["apply", "--env", "production", "--auto-approve"])).code).toBe(0);
    expect((await run(["plan", "--env", "production", "--detailed-exitcode"])).code).toBe(0);
    const t = await token(emu.url, "bob", "acme-sandbox");
    const tc = (await api(emu.url, t, "GET", TC)).body[0];
    expect(
      (await api(emu.url, t, "PATCH", `${TC}/${tc.compliance_id}`, updateBody(tc, { manual_journal_contra_account: "MJ-CONTRA-SBX2" }, "bob"))).status,
    ).toBe(200);

    const dry = await run(["export", "--env", "sandbox", "--dry-run"]);
    expect(dry.stdout).toContain('would set environments.sandbox.vars.contra_account in revsync.yaml: "MJ-CONTRA-SBX" -> "MJ-CONTRA-SBX2"');
    const e = await run(["export", "--env", "sandbox"]);
    expect(e.code).toBe(0);
    expect(readFileSync(join(work, "policies", "tenant-configuration.yaml"), "utf8")).toContain("manual_journal_contra_account: ${contra_account}");
    const cfg = readFileSync(join(work, "revsync.yaml"), "utf8");
    expect(cfg).toContain("contra_account: MJ-CONTRA-SBX2");
    expect(cfg).toContain("contra_account: MJ-CONTRA-100");
    expect((await run(["plan", "--env", "production", "--detailed-exitcode"])).code).toBe(0);
    expect((await run(["plan", "--env", "sandbox", "--detailed-exitcode"])).code).toBe(0);
  }, 90_000);

  it("a literal value of the shared files that one environment's service changed is refused, named, never written: the other environment's plan stays", async () => {
    // Both environments applied (the test above); now someone turns carves_allocation off in production.
    const t = await token(emu.url, "bob", "acme");
    const base = `${emu.url}/tenants/acme`;
    const tc = (await api(base, t, "GET", TC)).body[0];
    expect((await api(base, t, "PATCH", `${TC}/${tc.compliance_id}`, updateBody(tc, { carves_allocation: false }, "bob"))).status).toBe(200);
    const before = readFileSync(join(work, "policies", "tenant-configuration.yaml"), "utf8");
    const sandboxPlan = (await run(["plan", "--env", "sandbox", "--format", "json"])).stdout;

    const dry = await run(["export", "--env", "production", "--dry-run"]);
    expect(dry.code).toBe(1);
    const e = await run(["export", "--env", "production"]);
    expect(e.code).toBe(1);
    expect(e.stderr).toMatch(
      /tenant-configuration\/Default Tenant Configuration: carves_allocation is true in git, the service holds false; environment sandbox reads this file too, so export would change its plan: not exported/,
    );
    expect(readFileSync(join(work, "policies", "tenant-configuration.yaml"), "utf8")).toBe(before);
    // Sandbox's plan is what it was; production's still shows the change made outside git.
    const strip = (p: string) => JSON.stringify({ ...JSON.parse(p), created_at: "", checksum: "" });
    expect(strip((await run(["plan", "--env", "sandbox", "--format", "json"])).stdout)).toBe(strip(sandboxPlan));
    expect((await run(["plan", "--env", "production", "--detailed-exitcode"])).code).toBe(2);
  }, 90_000);
});
