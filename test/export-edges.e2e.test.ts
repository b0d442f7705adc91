import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { datedExport, yamlFiles } from "../src/testing/dated-export.js";
import { api, cli, DEMO_ENV, removeDir, startEmu, token, updateBody, type Emu } from "../src/testing/helpers.js";

// What export says when it leaves something as it was, through the real CLI against the emulator.
const TC = "/apis/policy-sets/v1/policy/tenant-configurations";

let emu: Emu;
const dirs: string[] = [];
beforeAll(async () => {
  emu = await startEmu("demo");
});
afterAll(async () => {
  for (const d of dirs) removeDir(d);
  await emu.close();
});
beforeEach(async () => emu.reset());

/** A policy repo of one environment, aimed at the emulator, with `vars` and `files` as given. */
function repo(vars: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-export-"));
  dirs.push(dir);
  writeFileSync(
    join(dir, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: ${emu.url}\n    realm: demo\n    vars: ${vars}\n`,
  );
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, "policies", name, ".."), { recursive: true });
    writeFileSync(join(dir, "policies", name), text);
  }
  return dir;
}

async function asBob(change: Record<string, unknown>): Promise<void> {
  const bob = await token(emu.url, "bob");
  const live = (await api(emu.url, bob, "GET", TC)).body[0];
  const res = await api(emu.url, bob, "PATCH", `${TC}/TC-0001`, updateBody(live, change, "bob"));
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

describe("export's refusals say their real reason", () => {
  it("one environment, a value from a process variable the service changed: export names the process variable, not another environment", async () => {
    const dir = repo('{ contra_account: "${CONTRA}" }', {
      "tc.yaml":
        "apiVersion: revsync/v1\nkind: TenantConfiguration\nmetadata: { name: Default Tenant Configuration }\nspec:\n  manual_journal_contra_account: ${contra_account}\n",
    });
    const env = { ...DEMO_ENV, CONTRA: "MJ-CONTRA-000" };
    expect((await cli(["plan", "--detailed-exitcode"], { cwd: dir, env })).code).toBe(0);
    await asBob({ manual_journal_contra_account: "MJ-BOB-1" });
    const e = await cli(["export"], { cwd: dir, env });
    expect(e.code).toBe(1);
    expect(e.stderr).toContain(
      "manual_journal_contra_account comes from ${contra_account}, which environments.demo.vars of revsync.yaml takes from ${CONTRA} of the process environment",
    );
    expect(e.stderr).toContain("export left 1 value that comes from a process variable as it was (listed above)");
    expect(e.stderr).not.toMatch(/another environment|other environments/);
  });
});

describe("what export writes reads the same in every YAML reader", () => {
  it("dates are quoted in new files and in-place edits, so a reader of YAML 1.1 reads them as text (ajv-cli reads these files in schemas.tools.test.ts); plan after export is No changes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-export-"));
    dirs.push(dir);
    const { dated, firstExport, before, after } = await datedExport(dir, emu.url);
    expect(dated.length).toBeGreaterThan(0);
    for (const text of firstExport) expect(text).not.toMatch(/_date: \d/);
    expect(after).not.toMatch(/_date: \d/);
    const ends = (t: string): string[] => [...t.matchAll(/effective_end_date: ["'](\d{4}-\d\d-\d\d)["']\n/g)].map((m) => m[1] as string);
    expect(ends(after)).toEqual(ends(before));
    const p = await cli(["plan", "--detailed-exitcode"], { cwd: dir, env: DEMO_ENV });
    expect(p.code, p.stdout).toBe(0);
  });
});

describe("names too long for a file name", () => {
  it("a batch named 'Q' x 250 and a policy of 300 characters: short unique file names, the names whole in the YAML, every file reported; plan after is No changes", async () => {
    const state: any = await emu.admin("GET", "state");
    const ssp = state.tenants[0].ssp;
    const hw = ssp.find((p: any) => p.compliance_name === "Hardware SSP");
    const batch = hw.batches.find((b: any) => b.status === "approved");
    hw.batches.push({ ...structuredClone(batch), batch_name: "Q".repeat(250), name: "Q".repeat(250) });
    const long = `${"Long Policy ".repeat(25)}End`; // 303 characters
    const copy = structuredClone(ssp.find((p: any) => p.compliance_name === "Software Subscriptions SSP"));
    copy.compliance_name = long;
    copy.item.name = long;
    copy.compliance_id = "SSP-LONG-ID";
    copy.item.hierarchy_no = 77;
    ssp.push(copy);
    await emu.admin("POST", "reset", { state });
    const dir = repo("{ contra_account: MJ-CONTRA-000 }", {});
    const e = await cli(["export"], { cwd: dir, env: DEMO_ENV });
    expect(e.stderr).toBe("");
    expect(e.code).toBe(0);
    const files = yamlFiles(join(dir, "policies"));
    const csvs = readdirSync(join(dir, "policies", "ssp", "values"));
    // Every file written is reported, the tenant configuration's too.
    const reported = [...e.stdout.matchAll(/^wrote (\S+)/gm)].map((m) => m[1] as string).filter((f) => !f.startsWith(".revsync/"));
    expect(reported.sort()).toEqual([...files.map((f) => f.slice(dir.length + 1)), ...csvs.map((c) => `policies/ssp/values/${c}`)].sort());
    expect(files.map((f) => f.slice(dir.length + 1))).toContain("policies/default-tenant-configuration.yaml");
    for (const name of [...files.map((f) => f.split("/").pop() as string), ...csvs]) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
    const longFile = files.find((f) => readFileSync(f, "utf8").includes(long)) as string;
    expect(longFile).toMatch(/\/ssp\/long-policy-long-policy-[a-z-]+-[0-9a-f]{8}\.yaml$/);
    expect(readFileSync(join(dir, "policies", "ssp", "hardware-ssp.yaml"), "utf8")).toContain(`- name: ${"Q".repeat(250)}\n`);
    const qValues = /values: (values\/hardware-ssp-q+-[0-9a-f]{8}\.csv)\n/.exec(readFileSync(join(dir, "policies", "ssp", "hardware-ssp.yaml"), "utf8"));
    expect(qValues?.[1]).toBeDefined();
    expect(csvs).toContain((qValues?.[1] as string).slice("values/".length));
    const p = await cli(["plan", "--detailed-exitcode"], { cwd: dir, env: DEMO_ENV });
    expect(p.stdout).toMatch(/^No changes\./);
    expect(p.code).toBe(0);
  });

  it("every path is checked before anything is written: a policy file whose values cannot be written is held back with them, the rest written and reported", async () => {
    const dir = repo("{ contra_account: MJ-CONTRA-000 }", {});
    const outside = mkdtempSync(join(tmpdir(), "revsync-outside-"));
    dirs.push(outside);
    mkdirSync(join(dir, "policies", "ssp"), { recursive: true });
    symlinkSync(outside, join(dir, "policies", "ssp", "values"));
    const e = await cli(["export"], { cwd: dir, env: DEMO_ENV });
    expect(e.code).toBe(1);
    expect(e.stderr).toMatch(
      /policies\/ssp\/values is a symbolic link to \S+, outside the policy repo: nothing is written through it \(policies\/ssp\/values\/hardware-ssp-fy26-h1\.csv not written\) \(values of ssp\/Hardware SSP\)/,
    );
    expect(e.stderr).toContain("policies/ssp/hardware-ssp.yaml not written (ssp/Hardware SSP): it goes with policies/ssp/values/");
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(dir, "policies", "ssp", "hardware-ssp.yaml"))).toBe(false);
    // What has no values files is written, and reported.
    expect(e.stdout).toContain("wrote policies/default-tenant-configuration.yaml\n");
    expect(existsSync(join(dir, "policies", "default-tenant-configuration.yaml"))).toBe(true);
    expect(e.stderr).toMatch(/export left 6 files outside the folder, 3 files held back with them as they were \(listed above\); the rest was written/);
  });
});
