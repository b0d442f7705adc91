import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { valuesToCsv } from "../src/ssp/csv.js";
import { cli, removeDir, startEmu, type Emu } from "../src/testing/helpers.js";

// Many environments, many tenants (issue 43): each environment signs in with its own credentials, a
// policy can be of some environments only, and export --all-envs adopts every environment at once.

/** Two tenants on two emulators, each with its own client and user, as two onboardings give them. */
const SANDBOX = { client: "revsync-sbx", secret: "sbx-client-secret", user: "sam", password: "sam-password-1" };
const PRODUCTION = { client: "revsync-prod", secret: "prod-client-secret", user: "pat", password: "pat-password-2" };
const CREDENTIALS = {
  // The shared ones sign in nowhere: each environment's own win.
  REVSYNC_CLIENT_ID: "revsync",
  REVSYNC_CLIENT_SECRET: "demo-secret",
  REVSYNC_USERNAME: "alice",
  REVSYNC_PASSWORD: "alice-password",
  REVSYNC_SANDBOX_CLIENT_ID: SANDBOX.client,
  REVSYNC_SANDBOX_CLIENT_SECRET: SANDBOX.secret,
  REVSYNC_SANDBOX_USERNAME: SANDBOX.user,
  REVSYNC_SANDBOX_PASSWORD: SANDBOX.password,
  REVSYNC_PRODUCTION_CLIENT_ID: PRODUCTION.client,
  REVSYNC_PRODUCTION_CLIENT_SECRET: PRODUCTION.secret,
  REVSYNC_PRODUCTION_USERNAME: PRODUCTION.user,
  REVSYNC_PRODUCTION_PASSWORD: PRODUCTION.password,
};

type Tenant = Record<string, any>;
const fx = { dirs: [] as string[] } as { sandbox: Emu; production: Emu; dirs: string[] };

/** The demo tenant, signed in to only by `who`, changed by `change`. */
async function seed(emu: Emu, who: typeof SANDBOX, change: (t: Tenant) => void = () => undefined): Promise<void> {
  await emu.reset();
  const state = await emu.admin<{ tenants: Tenant[] }>("GET", "state");
  const t = state.tenants[0] as Tenant;
  t.clients = { [who.client]: who.secret };
  t.users = { [who.user]: { password: who.password, roles: ["Revenue Analyst", "Revenue Approver"] } };
  change(t);
  await emu.admin("POST", "reset", { state });
  await emu.admin("DELETE", "requests");
}

/** Production differs from sandbox as tenants do: a setting, a floor, a list, a batch's status and
 *  values, a policy and a batch only one of them holds. */
function production(t: Tenant): void {
  const item = t.tenantConfigurations[0].compliance_spec[0];
  item.carves_allocation = true;
  item.manual_journal_contra_account = "MJ-CONTRA-PRD";
  const policy = (name: string) => t.ssp.find((p: Tenant) => p.compliance_name === name);
  policy("Hardware SSP").item.floor_percentage = 80;
  policy("Professional Services SSP").item.when = [{ field_name: "product_family", operator: "equality", value: "Services-EU" }];
  t.ssp = t.ssp.filter((p: Tenant) => p.compliance_name !== "Support Renewals SSP");
  const hw = policy("Hardware SSP");
  const h2 = hw.batches.find((b: Tenant) => b.name === "FY26-H2");
  h2.status = "reviewed";
  const h1 = hw.batches.find((b: Tenant) => b.name === "FY26-H1");
  h1.ssp_values[0].mid_point += 3;
  h1.ssp_values[0].above_mid_point += 3;
  t.files[h1.file_id] = valuesToCsv(h1.ssp_values);
  const sw = policy("Software Subscriptions SSP");
  sw.batches = sw.batches.filter((b: Tenant) => b.name !== "FY26-Q1");
}

/** A policy repo of two environments, sandbox and production, each aimed at its emulator. */
function repo(extra = "", files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-envs-"));
  fx.dirs.push(dir);
  const env = (name: string, url: string, more = ""): string =>
    `  ${name}:\n    base_url: ${url}\n    auth_url: ${url}\n    realm: demo\n    vars:\n      contra_account: MJ-CONTRA-000\n${more}`;
  writeFileSync(
    join(dir, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n${env("sandbox", fx.sandbox.url)}${env("production", fx.production.url, extra)}`,
  );
  mkdirSync(join(dir, "policies"), { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const run = (dir: string, args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: dir, env: { ...CREDENTIALS, ...env } });

/** The token requests an emulator received: whose client and user each carried, and what it answered. */
async function tokenRequests(emu: Emu): Promise<{ client?: string; user?: string; status: number }[]> {
  const journal = await emu.admin<{ path: string; client?: string; user?: string; status: number }[]>("GET", "requests");
  return journal.filter((e) => e.path.endsWith("/token")).map(({ client, user, status }) => ({ client, user, status }));
}

beforeAll(async () => {
  [fx.sandbox, fx.production] = await Promise.all([startEmu("demo"), startEmu("demo")]);
});
afterAll(async () => {
  for (const d of fx.dirs) removeDir(d);
  await Promise.all([fx.sandbox.close(), fx.production.close()]);
});
beforeEach(async () => {
  await seed(fx.sandbox, SANDBOX);
  await seed(fx.production, PRODUCTION, production);
});

describe("each environment signs in with its own credentials", () => {
  it("credentials: { prefix } names other variables; a prefix two environments would share, or a policy reading one, is refused", async () => {
    const own = repo("    credentials: { prefix: REVSYNC_ACME_PROD }\n");
    const env = { REVSYNC_PRODUCTION_CLIENT_ID: undefined, REVSYNC_PRODUCTION_CLIENT_SECRET: undefined, REVSYNC_PRODUCTION_USERNAME: undefined };
    const acme = {
      REVSYNC_ACME_PROD_CLIENT_ID: PRODUCTION.client,
      REVSYNC_ACME_PROD_CLIENT_SECRET: PRODUCTION.secret,
      REVSYNC_ACME_PROD_USERNAME: PRODUCTION.user,
    };
    const plan = await run(own, ["plan", "--env", "production"], { ...env, ...acme, REVSYNC_ACME_PROD_PASSWORD: PRODUCTION.password });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('environment "production"');
    expect(await tokenRequests(fx.production)).toEqual([{ client: PRODUCTION.client, user: PRODUCTION.user, status: 200 }]);
    const clash = repo("    credentials: { prefix: REVSYNC_SANDBOX }\n");
    const v = await run(clash, ["validate"]);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toMatch(
      /revsync\.yaml:\d+:\d+: error: environments\.production: its own credentials would be read from REVSYNC_SANDBOX_…, and REVSYNC_SANDBOX_CLIENT_ID is also a variable of environment "sandbox"/,
    );
    const reads = repo(
      "      secret: ${REVSYNC_PRODUCTION_PASSWORD}\n      other: ${REVSYNC_ACME_PROD_TOKEN}\n    credentials: { prefix: REVSYNC_ACME_PROD }\n",
    );
    const r = await run(reads, ["validate"]);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain("environments.production.vars.secret: ${REVSYNC_PRODUCTION_PASSWORD} is one of revsync's own sign-in variables");
    expect(r.stdout + r.stderr).toContain("${REVSYNC_ACME_PROD_TOKEN} is one of revsync's own sign-in variables");
    // A prefix outside revsync's own names would read another tool's secret (GITHUB_TOKEN) as a sign-in
    // and send it to the service: refused where it is written, nothing read or sent.
    const github = repo("    credentials: { prefix: GITHUB }\n");
    const before = (await tokenRequests(fx.production)).length;
    const g = await run(github, ["plan", "--env", "production"], { ...env, GITHUB_TOKEN: "ghs_not-for-the-service" });
    expect(g.code).toBe(1);
    expect(g.stdout + g.stderr).toMatch(/revsync\.yaml:\d+:\d+: error: environments\.production\.credentials\.prefix/);
    expect(g.stdout + g.stderr).not.toContain("ghs_not-for-the-service");
    expect(await tokenRequests(fx.production)).toHaveLength(before);
  });
});

const read = (dir: string, file: string): string => readFileSync(join(dir, file), "utf8");
const noChanges = async (dir: string): Promise<void> => {
  for (const env of ["sandbox", "production"]) {
    const plan = await run(dir, ["plan", "--env", env, "--detailed-exitcode"]);
    expect({ env, code: plan.code, out: plan.stdout + plan.stderr }).toMatchObject({ env, code: 0 });
    expect(plan.stdout).toContain("No changes");
  }
};

describe("export --all-envs adopts every environment into one set of files", () => {
  it("fresh: equal fields as they are, differing ones ${VAR}s, what one holds scoped; every plan says No changes; each tenant's sign-in got its own credentials only", async () => {
    const dir = repo();
    const dry = await run(dir, ["export", "--all-envs", "--dry-run"]);
    expect(dry.stdout).toMatch(/^would write policies\/ssp\/hardware-ssp\.yaml/m);
    expect(readdirSync(join(dir, "policies"))).toEqual([]);
    const r = await run(dir, ["export", "--all-envs"]);
    expect(r.code, r.stderr).toBe(0);
    const config = read(dir, "revsync.yaml");
    expect(config).toMatch(/sandbox:[\s\S]*hardware_ssp_floor_percentage: 85[\s\S]*production:[\s\S]*hardware_ssp_floor_percentage: 80/);
    expect(config).toMatch(/production:[\s\S]*hardware_ssp_fy26_h2_status: reviewed/);
    const hw = read(dir, "policies/ssp/hardware-ssp.yaml");
    expect(hw).toContain("floor_percentage: ${hardware_ssp_floor_percentage}");
    expect(hw).toContain("ceiling_percentage: 115");
    expect(hw).toContain("values: ${hardware_ssp_fy26_h1_values}");
    expect(readdirSync(join(dir, "policies/ssp/values")).filter((f) => f.startsWith("hardware-ssp-fy26-h1"))).toEqual([
      "hardware-ssp-fy26-h1-production.csv",
      "hardware-ssp-fy26-h1-sandbox.csv",
    ]);
    expect(read(dir, "policies/ssp/support-renewals-ssp.yaml")).toContain("environments: [ sandbox ]");
    expect(read(dir, "policies/ssp/software-subscriptions-ssp.yaml")).toMatch(/- name: FY26-Q1\n(?: {4}.*\n)*? {4}environments: \[ sandbox \]/);
    // A list cannot be a ${VAR}: one document for each environment.
    expect(read(dir, "policies/ssp/professional-services-ssp.yaml").match(/^kind: SspPolicy$/gm)).toHaveLength(2);
    expect((await run(dir, ["validate"])).code).toBe(0);
    await noChanges(dir);
    const again = await run(dir, ["export", "--all-envs"]);
    expect(again.stdout).toContain("Nothing to export");
    const drift = await run(dir, ["drift", "--all-envs"]);
    expect(drift.code, drift.stderr).toBe(0);
    // Every sign-in of these runs over both environments carried the tenant's own client and user only.
    const sandbox = await tokenRequests(fx.sandbox);
    const prod = await tokenRequests(fx.production);
    expect(sandbox.length).toBeGreaterThanOrEqual(4);
    expect(prod.length).toBeGreaterThanOrEqual(4);
    expect(new Set(sandbox.map((x) => JSON.stringify(x)))).toEqual(new Set([JSON.stringify({ client: SANDBOX.client, user: SANDBOX.user, status: 200 })]));
    expect(new Set(prod.map((x) => JSON.stringify(x)))).toEqual(new Set([JSON.stringify({ client: PRODUCTION.client, user: PRODUCTION.user, status: 200 })]));
  });

  it("in place, over one environment's export: differing literals become ${VAR}s, scopes narrow to the holders, comments stay", async () => {
    // The repo of one environment, sandbox, then production added to it.
    const dir = repo();
    const both = read(dir, "revsync.yaml");
    writeFileSync(join(dir, "revsync.yaml"), both.replace(/ {2}production:[\s\S]*$/, ""));
    expect((await run(dir, ["export", "--env", "sandbox"])).code).toBe(0);
    writeFileSync(join(dir, "revsync.yaml"), both);
    const file = join(dir, "policies/ssp/hardware-ssp.yaml");
    writeFileSync(file, read(dir, "policies/ssp/hardware-ssp.yaml").replace("ceiling_percentage: 115", "ceiling_percentage: 115 # agreed with finance"));
    const r = await run(dir, ["export", "--all-envs"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const hw = read(dir, "policies/ssp/hardware-ssp.yaml");
    expect(hw).toContain("ceiling_percentage: 115 # agreed with finance");
    expect(hw).toMatch(/floor_percentage: "?\$\{hardware_ssp_floor_percentage\}"?/);
    expect(read(dir, "policies/ssp/support-renewals-ssp.yaml")).toMatch(/environments: \[ ?sandbox ?\]/);
    expect((await run(dir, ["validate"])).code).toBe(0);
    await noChanges(dir);
    // Production moves on: a floor that was equal differs now, a status that differed is equal again.
    const state = await fx.production.admin<{ tenants: Tenant[] }>("GET", "state");
    const t = state.tenants[0] as Tenant;
    t.ssp.find((p: Tenant) => p.compliance_name === "Software Subscriptions SSP").item.floor_percentage = 78;
    await fx.production.admin("POST", "reset", { state });
    const moved = await run(dir, ["export", "--all-envs"]);
    expect(moved.code, moved.stdout + moved.stderr).toBe(0);
    expect(read(dir, "policies/ssp/software-subscriptions-ssp.yaml")).toMatch(/floor_percentage: "?\$\{software_subscriptions_ssp_floor_percentage\}"?/);
    expect(read(dir, "revsync.yaml")).toMatch(/production:[\s\S]*software_subscriptions_ssp_floor_percentage: 78/);
    await noChanges(dir);
    expect((await run(dir, ["export", "--all-envs"])).stdout).toContain("Nothing to export");
  });
});

describe("a policy of some environments only", () => {
  it("is neither planned nor reported missing elsewhere; validate names an environment revsync.yaml lacks", async () => {
    const policy = (envs: string) =>
      `apiVersion: revsync/v1\nkind: SspPolicy\nmetadata:\n  name: Pilot SSP\n  environments: ${envs}\nspec: { method: formula, active: true, hierarchy_no: 95, data_identifiers: [product_id], floor_percentage: 90, ceiling_percentage: 110, expression: "unit_list_price * 0.9" }\n`;
    const dir = repo("", { "policies/pilot.yaml": policy("[sandbox]") });
    const sandbox = await run(dir, ["plan", "--env", "sandbox", "--target", "ssp/Pilot SSP"]);
    expect(sandbox.stdout).toContain("+ ssp/Pilot SSP");
    const prod = await run(dir, ["drift", "--env", "production"]);
    expect(prod.stdout + prod.stderr).not.toContain("Pilot SSP");
    const planProd = await run(dir, ["plan", "--env", "production", "--format", "json"]);
    expect(planProd.stdout).not.toContain("Pilot SSP");
    writeFileSync(join(dir, "policies/pilot.yaml"), policy("[sandbox, prodution]"));
    const v = await run(dir, ["validate"]);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toMatch(
      /policies\/pilot\.yaml:5:\d+: error: metadata\.environments: no environment "prodution" in revsync\.yaml \(did you mean production\?\)/,
    );
    expect(existsSync(join(dir, "policies/pilot.yaml"))).toBe(true);
  });
});
