import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, DEMO_ENV, tempRepo, useEmulator } from "../src/testing/helpers.js";

// What a new user met on the way to many environments (issue 43), each now said plainly.

const fx = useEmulator({ clear: ["requests"] });
const repo = (files?: Record<string, string>): string => {
  const dir = tempRepo(fx.emu.url, files);
  fx.dirs.push(dir);
  return dir;
};
const run = (dir: string, args: string[], env: Record<string, string | undefined> = {}, more: { input?: string; stdinTty?: boolean } = {}) =>
  cli(args, { cwd: dir, env: { ...DEMO_ENV, ...env }, ...more });
const hardware = (dir: string): string => join(dir, "policies", "ssp", "hardware.yaml");

/** A tenant configuration file whose line `slipped` (1-based) is indented 3 spaces, the rest 2. */
function slipped(at: number): string {
  const lines = [
    "apiVersion: revsync/v1",
    "kind: TenantConfiguration",
    "metadata:",
    "  name: Default Tenant Configuration",
    "spec:",
    "  ar_accounting: true",
    "  can_delete: false",
    "  carves_allocation: true",
    "  create_revenue_schedules: true",
    "  distribution_method: Days in Calendar Period",
    "  is_user_defined: true",
    "  journals_run_currency: USD",
    "  lt_st_accounting: true",
    "  manual_journal: true",
    "  prorate_method: Daily",
    "  ui_mode: Classic",
  ];
  lines[at - 1] = ` ${lines[at - 1]}`;
  return `${lines.join("\n")}\n`;
}

describe("export", () => {
  it("--target of a batch exports that batch into its policy's file, the policy's own fields as they are", async () => {
    const dir = repo();
    const git = readFileSync(hardware(dir), "utf8")
      .replace("ceiling_percentage: 115", "ceiling_percentage: 116")
      .replace(/ {2}- name: FY25-H2\n(?: {4}.*\n)+/, "");
    writeFileSync(hardware(dir), git);
    expect((await run(dir, ["drift", "--target", "ssp/Hardware SSP"])).stdout).toMatch(/FY25-H2/);
    const r = await run(dir, ["export", "--target", "ssp/Hardware SSP/batch/FY25-H2"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("Nothing to export");
    const now = readFileSync(hardware(dir), "utf8");
    expect(now).toMatch(/- name: FY25-H2\n\s+status: approved/);
    expect(now).toContain("ceiling_percentage: 116");
  });

  it("a file the environment cannot read is a failure, never 'Nothing to export'", async () => {
    const dir = repo();
    writeFileSync(hardware(dir), readFileSync(hardware(dir), "utf8").replace("floor_percentage: 85", "floor_percentage: ${hw_floor}"));
    const r = await run(dir, ["export", "--target", "ssp/Hardware SSP"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("could not be read with this environment's variables");
    expect(r.stdout + r.stderr).not.toContain("Nothing to export: git's files already hold");
    expect(r.stderr).toContain("export left 1 policy it could not compare as it was");
  });
});

describe("validate says the first cause, at its line", () => {
  it("an indentation slip is named at its line, not as errors of the lines after it", async () => {
    const dir = repo({ "policies/tc.yaml": slipped(8) });
    const deeper = await run(dir, ["validate"]);
    expect(deeper.code).toBe(1);
    expect(deeper.stdout).toMatch(/^policies\/tc\.yaml:8:1: error: line 8 is indented 3 spaces, deeper than line 7 \(2\), which opens no block/m);
    expect(deeper.stdout).toContain("1 error in 1 file.");
    writeFileSync(join(dir, "policies/tc.yaml"), slipped(6));
    const first = await run(dir, ["validate"]);
    expect(first.stdout).toMatch(/^policies\/tc\.yaml:6:1: error: line 6 is indented 3 spaces, and line 7 after it in the same block 2/m);
    expect(first.stdout).toContain("1 error in 1 file.");
  });

  it("a misspelt key is the key's problem, not its variable's, whether the variable is set or not", async () => {
    const tc = (v: string) =>
      `apiVersion: revsync/v1\nkind: TenantConfiguration\nmetadata: { name: Default Tenant Configuration }\nspec:\n  carves_alocation: \${${v}}\n`;
    const dir = repo({ "policies/tc.yaml": tc("contra_account") });
    const set = await run(dir, ["validate"]);
    expect(set.stdout).toContain('policies/tc.yaml:5:3: error: spec.carves_alocation: unknown field "carves_alocation" (did you mean "carves_allocation"?)\n');
    writeFileSync(join(dir, "policies/tc.yaml"), tc("carves"));
    const unset = await run(dir, ["validate"]);
    expect(unset.stdout).toContain('spec.carves_alocation: unknown field "carves_alocation" (did you mean "carves_allocation"?)\n');
    expect(unset.stdout).toContain("undefined variable ${carves}");
  });

  it("a base_url that is no URL names the variable and the line that gave it", async () => {
    const dir = repo();
    const config = join(dir, "revsync.yaml");
    writeFileSync(config, readFileSync(config, "utf8").replace(/base_url: .*/, "base_url: ${MY_URL}"));
    const r = await run(dir, ["plan"], { MY_URL: "tenant.example.com" });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/revsync\.yaml:5:\d+: error: environments\.demo\.base_url \(from \$\{MY_URL\}\) is not a URL: "tenant\.example\.com"/);
  });
});

describe("signing in and writing", () => {
  it("a short wrong password is a refused sign-in; a short right one is refused only once the service accepted it, before anything else is sent", async () => {
    const dir = repo();
    const wrong = await run(dir, ["plan"], { REVSYNC_PASSWORD: "abc" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("sign-in refused: invalid user credentials");
    expect(wrong.stderr).toContain('Hint: check REVSYNC_CLIENT_ID, REVSYNC_CLIENT_SECRET, REVSYNC_USERNAME and REVSYNC_PASSWORD (environment "demo")');
    expect(wrong.stderr).not.toContain("cannot be kept out");
    const state = await fx.emu.admin<{ tenants: { users: Record<string, { password: string }> }[] }>("GET", "state");
    (state.tenants[0] as { users: Record<string, { password: string }> }).users.alice = { password: "abc", roles: ["Revenue Analyst"] } as never;
    await fx.emu.admin("POST", "reset", { state });
    await fx.emu.admin("DELETE", "requests");
    const right = await run(dir, ["plan"], { REVSYNC_PASSWORD: "abc" });
    expect(right.code).toBe(1);
    expect(right.stderr).toContain("REVSYNC_PASSWORD cannot be kept out of revsync's output: it is 3 characters long");
    expect(right.stderr).toContain("the service accepted the sign-in, and nothing else was sent");
    const sent = (await fx.emu.admin<{ path: string }[]>("GET", "requests")).map((e) => e.path);
    expect(sent).toEqual(["/auth/realms/demo/protocol/openid-connect/token"]);
  });

  it("apply asks whenever stdin is a terminal, whatever stderr is (2>&1 | tee apply.log)", async () => {
    const dir = repo();
    const r = await run(dir, ["apply", "--target", "tenant-configuration/Default Tenant Configuration"], {}, { input: "yes\n", stdinTty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("Do you want to perform these actions?");
    expect((await fx.emu.writes()).map((w) => w.method)).toEqual(["PATCH"]);
  });

  it("--out where no folder can be made fails at once, naming the path", async () => {
    const r = await run(repo(), ["plan", "--out", "/proc/nope/plan.json"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot write /proc/nope/plan.json");
  });

  it("ssp download of a manual upload's file id says what it is, and where a batch's file id is", async () => {
    const r = await run(repo(), ["ssp", "download", "UPL-0001"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /Hint: UPL-0001 is the file of the manual upload APR-0001 \(.*, revsync approvals list\), which the interface does not download; ssp download takes the file id of an SSP batch: revsync ssp batches lists them/,
    );
  });
});
