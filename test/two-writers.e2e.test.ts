import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { api, cli, DEMO_ENV, removeDir, sspCreateBody, startEmu, token, updateBody, type Emu } from "../src/testing/helpers.js";

// Two applies at once against one environment, as a team meets them (a retried pipeline, a laptop during
// a CI run), against the emulator run as the interface promises the service (--ignore-if-match: no
// If-Match to rely on). The lock's git backend is tested for real: a bare repository on disk as the
// remote, reached through file://, and `revsync apply` as real processes where two processes are the point.

let emu: Emu;
const dirs: string[] = [];
const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const SSP = "/apis/policy-sets/v1/policy/ssp";

beforeAll(async () => {
  emu = await startEmu("demo", { honourIfMatch: false });
});
afterAll(async () => {
  for (const d of dirs) removeDir(d);
  await emu.close();
});
beforeEach(async () => {
  await emu.reset();
  await emu.admin("DELETE", "faults");
});

const tenantYaml = (spec: string) => `apiVersion: revsync/v1
kind: TenantConfiguration
metadata: { name: Default Tenant Configuration }
spec: { ${spec} }
`;
const sspYaml = (name: string, hierarchyNo: number, extra = "", method = "formula") => `apiVersion: revsync/v1
kind: SspPolicy
metadata: { name: ${name} }
spec:
  method: ${method}
  active: true
  hierarchy_no: ${hierarchyNo}
  data_identifiers: [product_id]
  floor_percentage: 85
  ceiling_percentage: 115
${method === "formula" ? "  expression: unit_list_price * 0.8\n" : ""}  when: [{ field_name: product_family, operator: equality, value: ${name.replace(/\W/g, "")} }]
${extra}`;

/** A policy repo of its own, aimed at the emulator; `lock` goes into its environment as written. */
function repo(files: Record<string, string>, lock?: string, dir = mkdtempSync(join(tmpdir(), "revsync-two-"))): string {
  if (!dirs.includes(dir)) dirs.push(dir);
  writeFileSync(
    join(dir, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: ${emu.url}\n    realm: demo\n${lock ? `    lock: ${lock}\n` : ""}`,
  );
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, "policies", name, ".."), { recursive: true });
    writeFileSync(join(dir, "policies", name), text);
  }
  return dir;
}

const run = (dir: string, args: string[], opts: Parameters<typeof cli>[1] = {}) => cli(args, { cwd: dir, ...opts, env: { ...DEMO_ENV, ...opts.env } });
const state = async (): Promise<any> => emu.admin("GET", "state");
const liveTc = async (): Promise<Record<string, unknown>> => (await state()).tenants[0].tenantConfigurations[0].compliance_spec[0];
async function asBob(method: string, path: string, body: unknown): Promise<void> {
  const bob = await token(emu.url, "bob");
  const b = typeof body === "function" ? body((await api(emu.url, bob, "GET", TC)).body[0]) : body;
  const res = await api(emu.url, bob, method, path, b);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}
function evidenceOf(dir: string): any {
  const folder = join(dir, "evidence");
  const [file] = readdirSync(folder).filter((f) => f.endsWith(".json"));
  return JSON.parse(readFileSync(join(folder, file ?? ""), "utf8"));
}

describe("a write that knows when it was undone", () => {
  it("bob's write lands right after revsync's tenant update: 'overwritten … by bob at …', exit 1, the same outcome in JSON and evidence, never done", async () => {
    const dir = repo({ "tc.yaml": tenantYaml("ui_mode: Modern") });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    // Bob's screen shows the configuration as it was before revsync's write; he saves it, with a change of
    // his own, while the read right after revsync's PATCH is held a while.
    const bobsView = (await api(emu.url, await token(emu.url, "bob"), "GET", TC)).body[0];
    await emu.admin("POST", "faults", { kind: "latency", latency_ms: 800, method: "GET", path: "/tenant-configurations" });
    let bob: unknown;
    const r = await run(dir, ["apply", "p.json", "--auto-approve", "--format", "json", "--verbose", "--evidence", "evidence"], {
      when: {
        stderr: (e) => /PATCH \S*tenant-configurations\/\S+ 200/.test(e),
        act: () => (bob = asBob("PATCH", `${TC}/TC-0001`, updateBody(bobsView, { carves_allocation: true }, "bob"))),
      },
    });
    await bob;
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    const [entry] = report.outcomes;
    expect(entry).toMatchObject({ action: "update", status: "failed", outcome: "overwritten" });
    // Every field the body carried is compared: git's, which bob's stale screen put back, and one git does
    // not set.
    expect(entry.message).toMatch(
      /^overwritten after revsync's write by bob at \d{4}-\S+Z: (?=.*ui_mode "Modern" -> "Classic")(?=.*carves_allocation false -> true)/,
    );
    expect(report.summary).toEqual({ done: 0, already: 0, confirmed: 0, blocked: 0, failed: 0, unknown: 0, skipped: 0, overwritten: 1 });
    const rec = evidenceOf(dir);
    expect(rec.summary).toMatchObject({ ...report.summary, not_applied: expect.any(Number) });
    expect(rec.changes.find((c: any) => c.action === "update")).toMatchObject({
      outcome: "overwritten",
      why: entry.message,
      requests: expect.arrayContaining([expect.objectContaining({ method: "PATCH", body: expect.objectContaining({ user_name: "alice" }) })]),
    });
    expect((await liveTc()).ui_mode).toBe("Classic");
  });

  it("a second live policy at the create's hierarchy_no right after it: overwritten, exit 1; the same plan again is blocked, never 'already'", async () => {
    const dir = repo({ "a.yaml": sspYaml("Race A", 70) });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    await emu.admin("POST", "faults", { kind: "latency", latency_ms: 800, method: "GET", path: "/policy/ssp" });
    let bob: unknown;
    const r = await run(dir, ["apply", "p.json", "--auto-approve", "--verbose"], {
      when: { stderr: (e) => /POST \S*\/policy\/ssp 20\d/.test(e), act: () => (bob = asBob("POST", SSP, sspCreateBody("Bob's Policy", { hierarchy_no: 70 }))) },
    });
    await bob;
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^overwritten create {3}ssp\/Race A: overwritten after revsync's write by bob at \S+Z: the active policy "Bob's Policy" holds hierarchy_no 70 too/m,
    );
    expect(r.stdout).toContain("Apply finished with failures: 0 done, 0 failed, 0 skipped, 1 overwritten.");
    await emu.admin("DELETE", "faults");
    const again = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(
      /^blocked create {3}ssp\/Race A: blocked: ssp\/Race A is in the service as git has it, but hierarchy_no 70 is held now by .*Bob's Policy/m,
    );
  });
});

describe("retries are idempotent", () => {
  const values =
    "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\nED-1,USD,Amount,90,100,110,2026-01-01,2026-12-31\n";

  it("a saved plan creating an upload policy with a batch: applied again after it landed, each entry 'already', nothing sent, exit 0; after it landed in part, the rest is done", async () => {
    const dir = repo({
      "edge.yaml": sspYaml("Edge SSP", 80, "batches:\n  - { name: B1, status: approved, values: edge-b1.csv }\n", "upload"),
      "edge-b1.csv": values,
    });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    // The approve refused once: the create and review landed, the approve did not.
    await emu.admin("POST", "faults", { kind: "error_array", method: "PATCH", path: "/ssp/approve/", times: 1 });
    const first = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain("Apply finished with failures: 2 done, 1 failed, 0 skipped.");
    const partly = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(partly.stdout).toMatch(/^already create {3}ssp\/Edge SSP: already applied/m);
    expect(partly.stdout).toMatch(/^already review {3}ssp\/Edge SSP\/batch\/B1: already reviewed/m);
    expect(partly.stdout).toContain("Apply complete: 1 done, 2 already, 0 failed, 0 skipped.");
    expect(partly.code).toBe(0);
    await emu.admin("DELETE", "requests");
    const whole = await run(dir, ["apply", "p.json", "--auto-approve", "--format", "json"]);
    expect(whole.code).toBe(0);
    expect(JSON.parse(whole.stdout).outcomes.map((o: any) => o.outcome)).toEqual(["already", "already", "already"]);
    expect(await emu.writes()).toEqual([]);
  });
});

describe("one count", () => {
  it("a run that ends done, failed and unknown: the closing line counts what the evidence record counts, by the same names; a blocked re-apply's JSON has its blocked key", async () => {
    const dir = repo({});
    for (const f of readdirSync(join(process.cwd(), "policies"), { recursive: true }) as string[]) {
      const from = join(process.cwd(), "policies", f);
      if (f.endsWith(".yaml") || f.endsWith(".csv")) {
        mkdirSync(join(dir, "policies", f, ".."), { recursive: true });
        writeFileSync(join(dir, "policies", f), readFileSync(from));
      }
    }
    writeFileSync(join(dir, "revsync.yaml"), `${readFileSync(join(dir, "revsync.yaml"), "utf8")}    vars: { contra_account: MJ-CONTRA-100 }\n`);
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    await emu.admin("POST", "faults", {
      faults: [
        // The create lands and its answer is lost; reading it back fails: unknown.
        { kind: "drop", after_commit: true, method: "POST", path: "/policy/ssp" },
        { kind: "status", status: 503, method: "GET", query: "policy_name=Training" },
        // A batch's guard cannot read its policy: failed, nothing sent.
        { kind: "status", status: 503, method: "GET", query: "policy_name=Hardware" },
      ],
    });
    const r = await run(dir, ["apply", "p.json", "--auto-approve", "--concurrency", "1", "--evidence", "evidence"]);
    expect(r.code).toBe(1);
    const line = /^Apply finished with failures: (.*)\.$/m.exec(r.stdout)?.[1] ?? "";
    const counted = Object.fromEntries(line.split(", ").map((p) => [p.split(" ")[1], Number(p.split(" ")[0])]));
    const { not_applied: _, ...summary } = evidenceOf(dir).summary;
    expect(counted).toEqual({ done: 4, failed: 2, unknown: 1, skipped: 0 });
    expect(Object.fromEntries(Object.entries(summary).filter(([, n]) => n))).toEqual(Object.fromEntries(Object.entries(counted).filter(([, n]) => n)));

    // Bob changes the tenant configuration: the same plan again blocks its update, and its JSON says so.
    await emu.admin("DELETE", "faults");
    await asBob("PATCH", `${TC}/TC-0001`, (env: unknown) => updateBody(env, { ui_mode: "Modern" }, "bob"));
    const blocked = await run(dir, ["apply", "p.json", "--auto-approve", "--format", "json"]);
    expect(blocked.code).toBe(1);
    expect(JSON.parse(blocked.stdout).summary).toMatchObject({ blocked: 1, overwritten: 0, unknown: 0 });
  });
});
