import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fileValidator } from "../src/schema/ajv.js";
import { api, cli, DEMO_ENV, fleetState, removeDir, startEmu, tempRepo, token, updateBody, type Emu } from "../src/testing/helpers.js";
import { commitAll } from "../src/testing/git-commit.js";

// Promotion (promote_from) end to end: one emulator in this process serving three tenants (realms
// sandbox, uat and production under /tenants/<realm>), each the demo tenant as seeded or as the project's
// policies applied leave it; a policy repo of the project's policies, in git.
let emu: Emu;
let repo: string;
let seeded: unknown;
let applied: unknown;
const TENANT = "tenant-configuration/Default Tenant Configuration";

const env = (name: string, from?: string): string =>
  `  ${name}:\n    base_url: \${EMU}/tenants/${name}\n    auth_url: \${EMU}\n    realm: ${name}\n    vars: { contra_account: MJ-CONTRA-100 }\n${from ? `    promote_from: ${from}\n` : ""}`;
const CONFIG = `version: 1\npolicies: policies\nenvironments:\n${env("sandbox")}${env("production", "sandbox")}`;
const CHAIN = `version: 1\npolicies: policies\nenvironments:\n${env("sandbox")}${env("uat", "sandbox")}${env("production", "uat")}`;
// Holds once Hardware SSP's batch FY26-H1 is approved (as the policies applied leave a tenant).
const CASES =
  'apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: US appliance\n    line: { product_family: Hardware, legal_entity: US01, product_id: HW-1000, currency_code: USD, date: "2026-03-01", unit_list_price: 1000 }\n    expect: { policy: Hardware SSP, ssp: 1030 }\n';

const run = (args: string[], extra: Record<string, string> = {}) => cli(args, { cwd: repo, env: { ...DEMO_ENV, EMU: emu.url, ...extra } });
const git = (...args: string[]) => spawnSync("git", ["-c", "user.name=ci", "-c", "user.email=ci@example.com", ...args], { cwd: repo, encoding: "utf8" });
const commit = (message: string): string => commitAll(repo, message);
/** The tenants' state: each realm as seeded or applied. */
const tenants = (of: Record<string, unknown>) => emu.admin("POST", "reset", { state: fleetState(Object.values(of), Object.keys(of)) });
/** What was written to one realm's service (the journal of the emulator). */
const writesTo = async (realm: string) =>
  (await emu.admin<{ method: string; path: string }[]>("GET", "requests")).filter((r) => r.method !== "GET" && r.path.startsWith(`/tenants/${realm}/apis/`));
/** Someone changes the sandbox tenant configuration's contra account outside git. */
async function hotfixSandbox(): Promise<void> {
  const base = `${emu.url}/tenants/sandbox`;
  const bob = await token(emu.url, "bob", "sandbox");
  const tc = (await api(base, bob, "GET", "/apis/policy-sets/v1/policy/tenant-configurations")).body[0];
  const body = updateBody(tc, { manual_journal_contra_account: "MJ-HOTFIX" }, "bob");
  expect((await api(base, bob, "PATCH", `/apis/policy-sets/v1/policy/tenant-configurations/${tc.compliance_id}`, body)).status).toBe(200);
}

beforeAll(async () => {
  emu = await startEmu("demo");
  repo = tempRepo(emu.url);
  expect((await run(["apply", "--auto-approve", "--quiet"])).code).toBe(0);
  applied = (await emu.admin<{ tenants: unknown[] }>("GET", "state")).tenants[0];
  await emu.reset();
  seeded = (await emu.admin<{ tenants: unknown[] }>("GET", "state")).tenants[0];
  writeFileSync(join(repo, "revsync.yaml"), CONFIG);
  expect(git("init", "--quiet", "-b", "main").status).toBe(0);
  commit("policies");
});
afterAll(async () => {
  removeDir(repo);
  await emu.close();
});
beforeEach(async () => {
  writeFileSync(join(repo, "revsync.yaml"), CONFIG);
  removeDir(join(repo, "tests"));
  await emu.admin("DELETE", "requests");
});

describe("promote_from: production receives what sandbox holds", () => {
  it("a change applied to neither: every write of production is blocked (not yet in sandbox, naming the fields), plan exits 2, apply writes nothing and exits 1; a batch uploaded with other values than git's is blocked and exits 2 too", async () => {
    await tenants({ sandbox: seeded, production: seeded });
    const plan = await run(["plan", "--env", "production", "--detailed-exitcode"]);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/^Promotion from sandbox \(\S+\/tenants\/sandbox, realm sandbox\), read \S+ at commit [0-9a-f]{12}: 0 promoted, 7 blocked/);
    expect(plan.stdout).toContain(
      `x ${TENANT} (update, blocked)\n      reason: not yet in sandbox: carves_allocation is still false; manual_journal_contra_account is still "MJ-CONTRA-000"; apply it to sandbox first`,
    );
    expect(plan.stdout).toContain('reason: not yet in sandbox: no SSP policy "Training Courses SSP"');
    expect(plan.stdout).toContain('reason: not yet in sandbox: batch "FY26-H1" is reviewed there, not yet approved');
    expect(plan.stdout).toContain("blocked for promotion (the update it would be)");
    // A batch's review and approve, both blocked, name the write each would be.
    expect(plan.stdout).toMatch(/x ssp\/\S[^\n]*\/batch\/\S+ \(review, blocked\)\n/);
    expect(plan.stdout).toMatch(/x ssp\/\S[^\n]*\/batch\/\S+ \(approve, blocked\)\n/);
    expect(plan.stdout).toContain("Plan: nothing to apply; 7 blocked");
    const apply = await run(["apply", "--env", "production", "--auto-approve"]);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain("7 writes of this plan are blocked for promotion from sandbox, and nothing was sent for them:");
    expect(apply.stderr).toContain("Hint: apply to sandbox first and run its tests there");
    expect(await writesTo("production")).toEqual([]);
    // A batch uploaded with other values than git's is blocked whatever the source holds, and someone must
    // act (upload it again): --detailed-exitcode counts it (exit 2), with or without promote_from.
    const csv = join(repo, "policies", "ssp", "values", "hardware-fy26-h1.csv");
    const values = readFileSync(csv, "utf8");
    writeFileSync(
      csv,
      values.replace(/^(HW-1000,USD,Percent,\d+,)(\d+)/m, (_m, row: string, mid: string) => `${row}${Number(mid) + 1}`),
    );
    writeFileSync(join(repo, "revsync.yaml"), CONFIG.replace("    promote_from: sandbox\n", ""));
    const upload = await run(["plan", "--env", "production", "--target", "ssp/Hardware SSP/batch/FY26-H1", "--detailed-exitcode"]);
    writeFileSync(csv, values);
    expect(upload.stdout).toMatch(/x ssp\/Hardware SSP\/batch\/FY26-H1 \(blocked\)\n\s+reason: .*values/);
    expect(upload.stdout).toContain("Plan: nothing to apply; 1 blocked");
    expect(upload.code, upload.stderr).toBe(2);
  });

  it("applied to sandbox, then promoted: the plan names the source, the commit and what sandbox holds in every format; apply writes it, read as the source's own user; the evidence keeps it and verify holds it", async () => {
    await tenants({ sandbox: applied, production: seeded });
    mkdirSync(join(repo, "tests"));
    writeFileSync(join(repo, "tests", "cases.yaml"), CASES);
    const head = commit("a policy test");
    // Each environment its own credentials: sandbox is read as bob, production as alice.
    const own = { REVSYNC_SANDBOX_USERNAME: "bob", REVSYNC_SANDBOX_PASSWORD: "bob-password" };
    const saved = await run(["plan", "--env", "production", "--out", "plan.json", "--detailed-exitcode", "--quiet"], own);
    expect(saved.code, saved.stderr).toBe(2);
    const plan = JSON.parse(readFileSync(join(repo, "plan.json"), "utf8"));
    expect(fileValidator("plan.schema.json")(plan)).toBe(true);
    expect(plan.user).toBe("alice");
    expect(plan.promotion).toMatchObject({
      from: "sandbox",
      realm: "sandbox",
      user: "bob",
      commit: head,
      promoted: 7,
      blocked: 0,
      tests: { cases: 1, failed: [] },
    });
    expect(plan.promotion.compared_checksum).toMatch(/^sha256:[0-9a-f]{64}$/);
    const tc = plan.changes.find((c: { address: string }) => c.address === TENANT);
    expect(tc).toMatchObject({ action: "update", promotion: { status: "promoted", from: "sandbox", compared: { carves_allocation: true } } });
    const approve = plan.changes.find((c: { address: string; action: string }) => c.action === "approve" && c.address.endsWith("FY26-H1"));
    expect(approve.promotion.compared).toEqual({ status: "approved", values_checksum: approve.payload.values_checksum });
    const text = await run(["show", "plan.json"]);
    expect(text.stdout).toContain("Policy tests pass live in sandbox (1 case).");
    expect(text.stdout).toContain('promoted from sandbox: sandbox holds carves_allocation true, manual_journal_contra_account "MJ-CONTRA-100"');
    const md = (await run(["show", "plan.json", "--format", "markdown"])).stdout;
    expect(md).toContain("#### Promotion from `sandbox`");
    expect(md).toMatch(/\| `tenant-configuration\/Default Tenant Configuration` \(update\) \| \*\*promoted\*\* \| carves&#95;allocation true/);
    const readsOfSandbox = async () =>
      (await emu.admin<{ method: string; path: string }[]>("GET", "requests")).filter((r) => r.method === "GET" && r.path.startsWith("/tenants/sandbox/apis/"))
        .length;
    const before = await readsOfSandbox();
    const apply = await run(["apply", "plan.json", "--auto-approve", "--evidence", "evidence"], own);
    expect(apply.code, apply.stderr).toBe(0);
    expect((await writesTo("production")).length).toBe(7);
    // Each write was checked against sandbox right before it was sent (read, never written).
    expect((await readsOfSandbox()) - before).toBeGreaterThanOrEqual(7);
    expect((await writesTo("sandbox")).length).toBe(0);
    const [file] = readdirSync(join(repo, "evidence"));
    const record = JSON.parse(readFileSync(join(repo, "evidence", file ?? ""), "utf8"));
    expect(record.promotion).toEqual(plan.promotion);
    expect(record.promotion_tests_at_apply).toEqual({ cases: 1, contracts: 0, failed: [] });
    expect(record.changes.find((c: { address: string }) => c.address === TENANT).promotion.status).toBe("promoted");
    expect((await run(["evidence", "verify", "evidence"])).code).toBe(0);
    expect((await run(["plan", "--env", "production", "--detailed-exitcode"])).stdout).toContain("No changes.");
    removeDir(join(repo, "evidence"));
    removeDir(join(repo, "plan.json"));
  });

  it("sandbox changed by someone else afterwards: plan blocks the write (differs in sandbox, naming the field and both values); a plan saved before is refused at the write, the rest lands, exit 1", async () => {
    await tenants({ sandbox: applied, production: seeded });
    expect((await run(["plan", "--env", "production", "--out", "plan.json", "--quiet"])).code).toBe(0);
    await hotfixSandbox();
    const plan = JSON.parse((await run(["plan", "--env", "production", "--format", "json"])).stdout);
    const tc = plan.changes.find((c: { address: string }) => c.address === TENANT);
    expect(tc).toMatchObject({
      action: "blocked",
      promotion: { status: "blocked", action: "update", differs: [{ field: "manual_journal_contra_account", source: "MJ-HOTFIX", git: "MJ-CONTRA-100" }] },
    });
    expect(tc.reason).toMatch(
      /^differs in sandbox: manual_journal_contra_account \(sandbox holds "MJ-HOTFIX", git "MJ-CONTRA-100"\); someone changed sandbox since/,
    );
    expect(plan.promotion).toMatchObject({ promoted: 6, blocked: 1 });
    // The plan saved before the change: each write is checked against sandbox right before it is sent.
    const apply = await run(["apply", "plan.json", "--auto-approve"]);
    expect(apply.code).toBe(1);
    expect(apply.stdout).toMatch(
      /blocked\s+update\s+tenant-configuration\/Default Tenant Configuration: blocked: tenant-configuration\/Default Tenant Configuration is not promoted from sandbox any more \(read right before the write\): differs in sandbox: manual_journal_contra_account \(sandbox holds "MJ-HOTFIX"/,
    );
    const written = await writesTo("production");
    expect(written.some((w) => w.path.includes("tenant-configurations"))).toBe(false);
    expect(written.length).toBe(6);
    removeDir(join(repo, "plan.json"));
  });

  it("failing live tests: nothing is promoted, each failing case named; validate and plan refuse a cycle and an unknown source at revsync.yaml:line:col", async () => {
    await tenants({ sandbox: applied, production: seeded });
    mkdirSync(join(repo, "tests"));
    writeFileSync(join(repo, "tests", "cases.yaml"), CASES.replace("ssp: 1030", "ssp: 1031"));
    const plan = await run(["plan", "--env", "production", "--detailed-exitcode"]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain("0 promoted, 7 blocked");
    expect(plan.stdout).toContain(
      'Policy tests fail live in sandbox (1 failure), so nothing is promoted: case "US appliance" (tests/cases.yaml:4): Hardware SSP gives SSP 1,030, expected 1,031.',
    );
    expect(plan.stdout).toContain(
      'reason: the policy tests fail live in sandbox (as revsync test --live --env sandbox runs them): case "US appliance" (tests/cases.yaml:4)',
    );
    writeFileSync(join(repo, "revsync.yaml"), CHAIN.replace("promote_from: sandbox", "promote_from: production"));
    const cycle = await run(["validate"]);
    expect(cycle.code).toBe(1);
    expect(cycle.stdout).toMatch(/revsync\.yaml:14:19: .*environments\.uat\.promote_from: promotion goes round in a cycle \(uat -> production -> uat\)/);
    writeFileSync(join(repo, "revsync.yaml"), CONFIG.replace("promote_from: sandbox", "promote_from: sandbx"));
    const unknown = await run(["plan", "--env", "production"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/revsync\.yaml:14:19: .*"sandbx" is not an environment of revsync\.yaml \(did you mean sandbox\?\)/);
    expect(await writesTo("production")).toEqual([]);
  });

  it("a three-stage chain sandbox -> uat -> production: each environment promotes from its own source", async () => {
    writeFileSync(join(repo, "revsync.yaml"), CHAIN);
    await tenants({ sandbox: applied, uat: seeded, production: seeded });
    const before = await run(["plan", "--env", "production"]);
    expect(before.stdout).toContain("Promotion from uat");
    expect(before.stdout).toContain("not yet in uat: carves_allocation is still false");
    const uat = await run(["apply", "--env", "uat", "--auto-approve", "--quiet"]);
    expect(uat.code, uat.stderr).toBe(0);
    const after = await run(["plan", "--env", "production", "--format", "json"]);
    expect(JSON.parse(after.stdout).promotion).toMatchObject({ from: "uat", promoted: 7, blocked: 0 });
  });

  it("evidence verify flags a record of a promote_from environment without its promotion facts", async () => {
    await tenants({ sandbox: applied, production: seeded });
    // revsync.yaml at the commit names sandbox as production's source; the working tree drops it.
    writeFileSync(join(repo, "revsync.yaml"), CONFIG.replace("    promote_from: sandbox\n", ""));
    expect((await run(["apply", "--env", "production", "--auto-approve", "--evidence", "evidence", "--quiet"])).code).toBe(0);
    writeFileSync(join(repo, "revsync.yaml"), CONFIG);
    const verify = await run(["evidence", "verify", "evidence"]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(
      /environment production receives its changes from sandbox \(promote_from in revsync\.yaml at commit [0-9a-f]{12}\), and this record holds no promotion facts/,
    );
    removeDir(join(repo, "evidence"));
  });
  it("a rollback by revert: git revert, plan, apply through sandbox to production; the plan says what the interface cannot undo", async () => {
    await tenants({ sandbox: applied, production: applied });
    const tc = join(repo, "policies", "tenant-configuration.yaml");
    const hw = join(repo, "policies", "ssp", "hardware.yaml");
    writeFileSync(tc, readFileSync(tc, "utf8").replace("prorate_method: Daily", "prorate_method: Monthly"));
    writeFileSync(hw, readFileSync(hw, "utf8").replace("status: reviewed                 # uploaded", "status: approved                 # uploaded"));
    writeFileSync(
      join(repo, "policies", "ssp", "rollback.yaml"),
      "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Webinar SSP }\nspec: { method: formula, active: true, hierarchy_no: 90, data_identifiers: [product_id], floor_percentage: 85, ceiling_percentage: 115, expression: unit_list_price * 0.5, when: [{ field_name: product_family, operator: equality, value: Webinar }] }\n",
    );
    commit("monthly proration, webinars, FY26-H2 approved");
    for (const name of ["sandbox", "production"]) expect((await run(["apply", "--env", name, "--auto-approve", "--quiet"])).code).toBe(0);
    expect(git("revert", "--no-edit", "HEAD").status).toBe(0);
    const back = await run(["plan", "--env", "sandbox"]);
    expect(back.stdout).toContain('prorate_method: "Monthly" -> "Daily"');
    expect(back.stdout).toMatch(/\? ssp\/Webinar SSP \(not in git\)/);
    expect(back.stdout).toContain("reason: a batch cannot move back from approved to reviewed");
    expect((await run(["apply", "--env", "sandbox", "--auto-approve", "--quiet"])).code).toBe(0);
    const prod = JSON.parse((await run(["plan", "--env", "production", "--format", "json"])).stdout);
    expect(prod.summary).toMatchObject({ update: 1, not_in_git: 1, unsupported: 1, blocked: 0 });
    expect(prod.changes[0]).toMatchObject({ address: TENANT, action: "update", promotion: { status: "promoted", compared: { prorate_method: "Daily" } } });
    expect((await run(["apply", "--env", "production", "--auto-approve", "--quiet"])).code).toBe(0);
    // What the interface cannot undo stays in the plan, as information: it asks nothing of apply.
    const left = await run(["plan", "--env", "production", "--detailed-exitcode"]);
    expect(left.code).toBe(0);
    expect(left.stdout).toContain("Plan: nothing to apply; 1 not in git, 1 unsupported");
    expect(git("reset", "--quiet", "--hard", "HEAD~2").status).toBe(0);
  });

  it("a field sandbox shows no value for (null) is not held there: production's write of it is blocked, not promoted unseen", async () => {
    const hidden = JSON.parse(JSON.stringify(applied));
    hidden.tenantConfigurations[0].compliance_spec[0].manual_journal_contra_account = null;
    await tenants({ sandbox: hidden, production: seeded });
    const plan = JSON.parse((await run(["plan", "--env", "production", "--target", TENANT, "--format", "json"])).stdout);
    expect(plan.changes[0]).toMatchObject({
      address: TENANT,
      action: "blocked",
      promotion: { status: "blocked", not_shown: ["manual_journal_contra_account"] },
    });
    expect(plan.changes[0].reason).toMatch(/^not yet in sandbox: manual_journal_contra_account is not shown there \(null\)/);
  });

  it("production's value from another file than sandbox's (a twin scoped to production) is blocked, not promoted by what sandbox's own file asks", async () => {
    await tenants({ sandbox: applied, production: seeded });
    const tc = join(repo, "policies", "tenant-configuration.yaml");
    const was = readFileSync(tc, "utf8");
    const scoped = (envs: string) => was.replace("  name: Default Tenant Configuration", `  name: Default Tenant Configuration\n  environments: [${envs}]`);
    writeFileSync(tc, scoped("sandbox"));
    writeFileSync(join(repo, "policies", "tc-production.yaml"), scoped("production").replace("${contra_account}", "MJ-UNTESTED"));
    const plan = JSON.parse((await run(["plan", "--env", "production", "--target", TENANT, "--format", "json"])).stdout);
    writeFileSync(tc, was);
    removeDir(join(repo, "policies", "tc-production.yaml"));
    expect(plan.changes[0]).toMatchObject({ address: TENANT, action: "blocked", promotion: { status: "blocked" } });
    expect(plan.changes[0].reason).toMatch(
      /^differs in sandbox: file \(sandbox holds "policies\/tenant-configuration\.yaml:\d+", git "policies\/tc-production\.yaml:\d+"\)/,
    );
  });

  it("a saved plan promoted from one sandbox tenant is refused once revsync.yaml points sandbox at another: what was reviewed is not what would be checked and recorded", async () => {
    await tenants({ sandbox: applied, uat: applied, production: seeded });
    expect((await run(["plan", "--env", "production", "--out", "plan.json", "--quiet"])).code).toBe(0);
    writeFileSync(join(repo, "revsync.yaml"), CONFIG.replace("tenants/sandbox", "tenants/uat").replace("realm: sandbox", "realm: uat"));
    const apply = await run(["apply", "plan.json", "--auto-approve"]);
    removeDir(join(repo, "plan.json"));
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(/was promoted from "sandbox" at \S+\/tenants\/sandbox, realm sandbox, and "sandbox" is now \S+\/tenants\/uat, realm uat/);
    expect(await writesTo("production")).toEqual([]);
  });
});
