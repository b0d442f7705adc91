import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, cli, DEMO_ENV, removeDir, sspCreateBody, startEmu, token, type Emu } from "../src/testing/helpers.js";

// The service keeps two active SSP policies in one place of the hierarchy (hierarchy_no is only an order
// of evaluation): export writes both, and the repo it writes reads back clean, a warning and no error.
const SSP = "/apis/policy-sets/v1/policy/ssp";
const WARNING =
  /^policies\/ssp\/hardware-ssp\.yaml:\d+:\d+: warning: hierarchy_no 10 is also held by the active policy "Gateways SSP" \(policies\/ssp\/gateways-ssp\.yaml\): the interface does not say which of the two prices an order line/m;

describe.each(["default", "literal"] as const)("two live SSP policies with one hierarchy_no (%s profile)", (profile) => {
  let emu: Emu;
  let parent: string;
  beforeAll(async () => {
    emu = await startEmu("demo", { profile });
    parent = mkdtempSync(join(tmpdir(), "revsync-dup-hierarchy-"));
  });
  afterAll(async () => {
    removeDir(parent);
    await emu.close();
  });

  it("export, then validate (a warning at file:line, exit 0), plan --detailed-exitcode and drift exit 0; the not-in-git hint leads there too", async () => {
    const made = await api(emu.url, await token(emu.url), "POST", SSP, sspCreateBody("Gateways SSP", { hierarchy_no: 10 }));
    expect(made.status).toBe(200);
    expect((await cli(["init", "repo", "--realm", "demo"], { cwd: parent })).code).toBe(0);
    const dir = join(parent, "repo");
    const run = (args: string[]) => cli(args, { cwd: dir, env: { ...DEMO_ENV, SANDBOX_BASE_URL: emu.url } });
    expect((await run(["export"])).code).toBe(0);

    const clean = async (): Promise<void> => {
      const v = await run(["validate"]);
      expect(v.stderr + v.stdout).toMatch(WARNING);
      expect(v.stderr + v.stdout).not.toMatch(/: error: /);
      expect(v.code).toBe(0);
      const p = await run(["plan", "--detailed-exitcode"]);
      expect(p.stdout.trim()).toBe('No changes. Environment "sandbox" matches the policy repo.');
      expect(p.code).toBe(0);
      expect((await run(["drift"])).code).toBe(0);
    };
    await clean();

    // Without Gateways SSP's file, plan lists it as not in git and says how to add it: that command,
    // run as printed with DIR the policies folder, makes the same clean repo.
    rmSync(join(dir, "policies", "ssp", "gateways-ssp.yaml"));
    const p = await run(["plan"]);
    const hint = /revsync export --dir DIR --target 'ssp\/Gateways SSP' writes one/.exec(p.stdout);
    expect(hint).not.toBeNull();
    // The reviewer sees that it shares Hardware SSP's place, and which one the policy tests take.
    expect(p.stdout.replace(/\s+/g, " ")).toContain(
      'It is active at hierarchy_no 10, the place of "Hardware SSP" in git: the interface does not say which prices an order line first, and policy tests take "Gateways SSP" (ties go by name)',
    );
    expect((await run(["export", "--dir", "policies", "--target", "ssp/Gateways SSP"])).code).toBe(0);
    await clean();
  });

  it("an active and an inactive create at one place: planned, applied without 'overwritten', then no changes", async () => {
    const dir = join(parent, "repo");
    const run = (args: string[]) => cli(args, { cwd: dir, env: { ...DEMO_ENV, SANDBOX_BASE_URL: emu.url } });
    const file = (name: string, active: boolean) =>
      `apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: ${name} }\nspec: { method: formula, active: ${active}, hierarchy_no: 82, data_identifiers: [product_id], floor_percentage: 80, ceiling_percentage: 120, expression: "unit_list_price * 0.9", when: [{ field_name: region, operator: equality, value: R82 }] }\n`;
    writeFileSync(join(dir, "policies", "ssp", "p82.yaml"), file("Place 82 Active", true));
    writeFileSync(join(dir, "policies", "ssp", "q82.yaml"), file("Place 82 Inactive", false));
    const planned = JSON.parse((await run(["plan", "--format", "json"])).stdout);
    expect(
      planned.changes
        .filter((c: { action: string }) => c.action === "create")
        .map((c: { address: string }) => c.address)
        .sort(),
    ).toEqual(["ssp/Place 82 Active", "ssp/Place 82 Inactive"]);
    const applied = await run(["apply", "--auto-approve"]);
    expect(applied.stdout + applied.stderr).not.toMatch(/overwritten|blocked/);
    expect(applied.code).toBe(0);
    const again = await run(["plan", "--detailed-exitcode"]);
    expect(again.code).toBe(0);
  });
});
