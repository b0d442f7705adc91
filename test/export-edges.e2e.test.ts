import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ajv } from "../scripts/schema-validators.mjs";
import { api, cli, DEMO_ENV, removeDir, ROOT, startEmu, token, updateBody, type Emu } from "../src/testing/helpers.js";

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
  it("dates are quoted in new files and in-place edits, so ajv-cli (YAML 1.1) reads them as text; plan after export is No changes", async () => {
    const dir = repo("{ contra_account: MJ-CONTRA-000 }", {});
    const e = await cli(["export"], { cwd: dir, env: DEMO_ENV });
    expect(e.code, e.stderr).toBe(0);
    const files = yamlFiles(join(dir, "policies"));
    const dated = files.filter((f) => /_date: /.test(readFileSync(f, "utf8")));
    expect(dated.length).toBeGreaterThan(0);
    for (const f of dated) expect(readFileSync(f, "utf8")).not.toMatch(/_date: \d/);
    // An in-place edit of a date: git's batch ends on another day than the service's.
    const hw = dated[0] as string;
    const before = readFileSync(hw, "utf8");
    writeFileSync(
      hw,
      before.replace(/(effective_end_date: )'(\d{4}-\d\d-\d\d)'/, "$1$2").replace(/(effective_end_date: )(\d{4})-/, (_, k, y) => `${k}${Number(y) - 1}-`),
    );
    expect(readFileSync(hw, "utf8")).not.toBe(before);
    expect((await cli(["export"], { cwd: dir, env: DEMO_ENV })).code).toBe(0);
    const after = readFileSync(hw, "utf8");
    expect(after).not.toMatch(/_date: \d/);
    const ends = (t: string): string[] => [...t.matchAll(/effective_end_date: ["'](\d{4}-\d\d-\d\d)["']\n/g)].map((m) => m[1] as string);
    expect(ends(after)).toEqual(ends(before));
    const checked = ajv(files.map((file) => ({ file, schema: join(ROOT, "schemas", "policy-file.schema.json"), valid: true })));
    expect(checked.results.filter((r) => !r.passed).map((r) => r.said)).toEqual([]);
    const p = await cli(["plan", "--detailed-exitcode"], { cwd: dir, env: DEMO_ENV });
    expect(p.code, p.stdout).toBe(0);
  });
});

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}
