import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedState } from "../src/emulator/seed.js";
import { cli, DEMO_ENV, removeDir, startEmu, tempRepo, type Emu } from "../src/testing/helpers.js";

// Liberal in what revsync reads (issue 12), through the real CLI against the literal profile, with a
// tenant holding values outside the documented lists.
let emu: Emu;
let repo: string;
beforeAll(async () => {
  emu = await startEmu("demo", { profile: "literal" });
  repo = tempRepo(emu.url);
});
afterAll(async () => {
  removeDir(repo);
  await emu.close();
});
const run = (args: string[], dir = repo) => cli(args, { cwd: dir, env: DEMO_ENV });

async function oddTenant(): Promise<void> {
  const state = seedState("demo");
  const t = state.tenants[0]!;
  const hw = t.ssp.find((p) => p.compliance_name === "Hardware SSP")!;
  hw.item.when = [...(hw.item.when ?? []), { field_name: "region", operator: "=", value: "EMEA" }];
  t.ssp.find((p) => p.compliance_name === "Professional Services SSP")!.item.when = [{ field_name: "x", operator: "=", value: "y" }];
  (t.tenantConfigurations[0]!.compliance_spec![0] as Record<string, unknown>).distribution_method = "Weekly";
  // A batch status the spec never names.
  t.ssp.find((p) => p.compliance_name === "Software Subscriptions SSP")!.batches.find((b) => b.batch_name === "FY26-Q2")!.status = "archived";
  await emu.admin("POST", "reset", { state });
}

describe("values outside the documented lists", () => {
  it("plan and drift read them as they are, warning once per value; --verbose names each place", async () => {
    await oddTenant();
    const plan = await run(["plan", "--format", "json"]);
    expect(plan.code).toBe(0);
    const warnings = plan.stderr.split("\n").filter((l) => l.startsWith("Warning:"));
    expect(warnings).toEqual([
      'Warning: the service answered distribution_method "Weekly", which is not one of the documented values; revsync reads it as it is',
      'Warning: the service answered operator "=", which is not one of the documented values; revsync reads it as it is',
    ]);
    // git's Hardware SSP has no region condition: a real difference, shown and compared as it is.
    expect(JSON.parse(plan.stdout).changes.find((c: any) => c.address === "ssp/Hardware SSP")?.action).toBe("unsupported");
    const verbose = await run(["drift", "--verbose"]);
    expect(verbose.stderr).toMatch(
      / {2}operator "=" at Hardware SSP: GET \/apis\/policy-sets\/v1\/policy\/ssp\?policy_name=Hardware\+SSP \/0\/compliance_spec\/0\/when\/\d+/,
    );
    expect(verbose.stderr).toMatch(/ {2}operator "=" at Professional Services SSP: GET \/apis\/policy-sets\/v1\/policy\/ssp /);
  });

  it("export leaves them out with a comment in place, says what it left out; validate passes; plan and drift show what it could not hold", async () => {
    await oddTenant();
    const dir = tempRepo(emu.url, {});
    try {
      const e = await run(["export"], dir);
      expect(e.code).toBe(0);
      expect(e.stderr).toContain("left out of the files");
      expect(e.stderr).toContain('tenant-configuration/Default Tenant Configuration: distribution_method (distribution_method "Weekly")');
      expect(e.stderr).toContain('ssp/Software Subscriptions SSP/batch/FY26-Q2 (status "archived")');
      const hw = readFileSync(join(dir, "policies", "ssp", "hardware-ssp.yaml"), "utf8");
      expect(hw).toContain('  # when: left out, the service holds a value a policy file may not (operator "="); it keeps its live value');
      expect(hw).toContain("  - name: FY26-H2\n    status: file uploaded\n    values: values/hardware-ssp-fy26-h2.csv\n");
      const sw = readFileSync(join(dir, "policies", "ssp", "software-subscriptions-ssp.yaml"), "utf8");
      expect(sw).toContain('# batch "FY26-Q2": not listed, its status in the service is "archived"');
      expect((await run(["validate"], dir)).code).toBe(0);
      // The batch export could not list is in the plan (not in git; apply would do nothing) and in drift.
      const plan = await run(["plan", "--detailed-exitcode"], dir);
      expect(plan.stdout).toContain(" ? ssp/Software Subscriptions SSP/batch/FY26-Q2 (not in git)");
      expect(plan.stdout).toContain("Plan: nothing to apply; 1 not in git (shown with the reason, not applied).");
      expect(plan.code).toBe(0);
      const drift = await run(["drift", "--format", "json"], dir);
      expect(drift.code).toBe(2);
      expect(JSON.parse(drift.stdout).drift.map((d: any) => `${d.class} ${d.address}`)).toEqual([
        "unmanaged_batch ssp/Software Subscriptions SSP/batch/FY26-Q2",
      ]);
    } finally {
      removeDir(dir);
    }
  });
});

describe("a value outside a documented list that git leaves alone", () => {
  it("is sent back as it is in the update body: a saved plan made over it applies", async () => {
    await oddTenant();
    const tc = join(repo, "policies", "tenant-configuration.yaml");
    const file = join(repo, "weekly.plan.json");
    const original = readFileSync(tc, "utf8");
    writeFileSync(tc, original.replace(/^ {2}distribution_method: .*\n/m, ""));
    try {
      expect((await run(["plan", "--out", file])).code).toBe(0);
      expect(JSON.parse(readFileSync(file, "utf8")).changes.find((c: any) => c.action === "update").payload.item.distribution_method).toBe("Weekly");
      const apply = await run(["apply", file, "--auto-approve"]);
      expect(apply.stdout).toMatch(/done {4}update {3}tenant-configuration\/Default Tenant Configuration: updated/);
    } finally {
      writeFileSync(tc, original);
    }
  });
});

describe("creating needs the create fields", () => {
  it("a new policy without floor/ceiling: an error at its file and line at plan time, nothing sent", async () => {
    await emu.reset();
    const file = join(repo, "policies", "ssp", "gadgets.yaml");
    writeFileSync(
      file,
      "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata:\n  name: Gadgets SSP\nspec:\n  method: formula\n  active: true\n  hierarchy_no: 70\n  data_identifiers: [product_id]\n  expression: unit_list_price\n",
    );
    try {
      expect((await run(["validate"])).code).toBe(0);
      await emu.admin("DELETE", "requests");
      const plan = await run(["plan"]);
      expect(plan.code).toBe(1);
      expect(plan.stderr).toContain(
        "policies/ssp/gadgets.yaml:6:3: ssp/Gadgets SSP does not exist in the service, and creating it needs floor_percentage, ceiling_percentage in spec",
      );
      const apply = await run(["apply", "--auto-approve"]);
      expect(apply.code).toBe(1);
      const writes = (await emu.admin<any[]>("GET", "requests")).filter((r) => r.method !== "GET" && r.path.startsWith("/apis/"));
      expect(writes).toEqual([]);
    } finally {
      removeDir(file);
    }
  });
});
