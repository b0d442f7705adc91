import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
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
