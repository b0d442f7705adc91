import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { api, cli, DEMO_ENV, removeDir, startEmu, tempRepo, token, updateBody, type Emu } from "../src/testing/helpers.js";

// A field git's file leaves out keeps its live value and is never a change, but the plan is the whole
// truth: plan and drift show what the service holds there, with who changed it, and "No changes" then
// never reads as "matches". On both emulator profiles.
const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const TENANT = "tenant-configuration/Default Tenant Configuration";

/** The demo tenant's configuration as the service holds it, every updatable field but prorate_method. */
const TENANT_FILE = `apiVersion: revsync/v1
kind: TenantConfiguration
metadata:
  name: Default Tenant Configuration
spec:
  ar_accounting: true
  can_delete: false
  carves_allocation: false
  create_revenue_schedules: true
  distribution_method: Days in Calendar Period
  is_user_defined: true
  journals_run_currency: USD
  lt_st_accounting: true
  manual_journal: true
  manual_journal_contra_account: MJ-CONTRA-000
  multi_currency_revenue_contracts: false
  ui_mode: Classic
`;

for (const profile of ["default", "literal"] as const) {
  describe(`fields the service holds that git leaves out (${profile} profile)`, () => {
    let emu: Emu;
    let repo: string;
    beforeAll(async () => {
      emu = await startEmu("demo", { profile });
      repo = tempRepo(emu.url, { "policies/tenant.yaml": TENANT_FILE });
    });
    afterAll(async () => {
      removeDir(repo);
      await emu.close();
    });
    beforeEach(async () => {
      await emu.reset();
      writeFileSync(join(repo, "policies", "tenant.yaml"), TENANT_FILE);
    });
    // The tenant configuration alone: git here has no SSP policy files (those would be "not in git").
    const run = (args: string[]) => cli(args[0] === "show" ? args : [...args, "--target", TENANT], { cwd: repo, env: DEMO_ENV });

    /** bob sets prorate_method in the service, the field git's file leaves out. */
    async function bobSetsProrate(): Promise<void> {
      const tok = await token(emu.url, "bob");
      const view = (await api(emu.url, tok, "GET", TC)).body.find((e: any) => e.compliance_name === "Default Tenant Configuration");
      expect((await api(emu.url, tok, "PATCH", `${TC}/${view.compliance_id}`, updateBody(view, { prorate_method: "Monthly" }, "bob"))).status).toBe(200);
    }

    it("plan shows the field and its value as information, never 'matches'; --detailed-exitcode stays 0", async () => {
      await bobSetsProrate();
      const text = await run(["plan", "--detailed-exitcode"]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(
        new RegExp(`${TENANT}: kept as the service holds it, not in git: prorate_method: "Monthly" \\(last changed by bob at \\d{4}-\\d\\d-\\d\\dT[\\d:]+Z\\)`),
      );
      expect(text.stdout).toContain(
        'No changes. 1 field the service holds is not in git (shown above); in every field git sets, environment "demo" matches the policy repo.',
      );
      expect(text.stdout).not.toMatch(/No changes\. Environment/);

      const json = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      expect(json.changes).toEqual([]);
      expect(json.kept_live).toEqual([{ address: TENANT, fields: { prorate_method: "Monthly" }, modified_by: "bob", modified_on: expect.any(String) }]);

      const md = (await run(["plan", "--format", "markdown"])).stdout;
      expect(md).toContain("**No changes.** 1 field the service holds is not in git (shown below)");
      expect(md).toContain('- `tenant-configuration/Default Tenant Configuration`: `prorate_method`: `"Monthly"` (last changed by bob at');
    });

    it("a saved plan keeps them: show prints them, and apply of it writes nothing", async () => {
      await bobSetsProrate();
      expect((await run(["plan", "--out", "p.json"])).code).toBe(0);
      const show = await run(["show", "p.json"]);
      expect(show.stdout).toContain(`${TENANT}: kept as the service holds it, not in git: prorate_method: "Monthly"`);
      expect(JSON.parse(readFileSync(join(repo, "p.json"), "utf8")).kept_live[0].fields).toEqual({ prorate_method: "Monthly" });
    });

    it("drift shows them too, and its exit stays 0 (no drift in the fields git sets)", async () => {
      await bobSetsProrate();
      const d = await run(["drift"]);
      expect(d.code).toBe(0);
      expect(d.stdout).toContain(`${TENANT}: kept as the service holds it, not in git: prorate_method: "Monthly" (last changed by bob`);
      expect(d.stdout).toContain(
        'No drift in the fields git sets. Environment "demo" matches the policy repo; 1 field the service holds is not in git (shown above).',
      );
      const json = JSON.parse((await run(["drift", "--format", "json"])).stdout);
      expect(json.kept_live).toEqual([{ address: TENANT, fields: { prorate_method: "Monthly" }, modified_by: "bob", modified_on: expect.any(String) }]);
      const md = (await run(["drift", "--format", "markdown"])).stdout;
      expect(md).toContain("**No drift** in the fields git sets");
      expect(md).toContain('`prorate_method`: `"Monthly"`');
    });

    it("quiet when git's file holds every field", async () => {
      writeFileSync(join(repo, "policies", "tenant.yaml"), `${TENANT_FILE}  prorate_method: Daily\n`);
      const plan = await run(["plan"]);
      expect(plan.stdout.trim()).toBe('No changes. Environment "demo" matches the policy repo.');
      expect(JSON.parse((await run(["plan", "--format", "json"])).stdout).kept_live).toBeUndefined();
      expect((await run(["drift"])).stdout.trim()).toBe('No drift. Environment "demo" matches the policy repo.');
    });
  });
}

describe("SSP policies and the quick start", () => {
  let emu: Emu;
  let repo: string;
  beforeAll(async () => {
    emu = await startEmu("demo");
    repo = tempRepo(emu.url);
  });
  afterAll(async () => {
    removeDir(repo);
    await emu.close();
  });

  it("the quick start's files hold every field: its plan shows nothing kept; a condition left out of git is shown", async () => {
    expect(JSON.parse((await cli(["plan", "--format", "json"], { cwd: repo, env: DEMO_ENV })).stdout).kept_live).toBeUndefined();
    const file = join(repo, "policies", "ssp", "hardware.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace(/ {2}when:\n( {4}- .*\n)+/, ""));
    const plan = JSON.parse((await cli(["plan", "--format", "json"], { cwd: repo, env: DEMO_ENV })).stdout);
    expect(plan.kept_live).toEqual([
      {
        address: "ssp/Hardware SSP",
        fields: {
          when: [
            { field_name: "product_family", operator: "equality", value: "Hardware" },
            { field_name: "legal_entity", operator: "in", value: "US01,DE01" },
          ],
        },
        modified_by: "alice",
        modified_on: "2026-01-01T00:00:00.000Z",
      },
    ]);
  });
});
