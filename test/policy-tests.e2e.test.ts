import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { api, cli, DEMO_ENV, removeDir, ROOT, token, updateBody, useEmulatorRepo } from "./helpers.js";

// Policy tests, impact in the plan, who drifted, and accepted drift (issue 15), through the real CLI.
const EXAMPLE = join(ROOT, "examples", "policy-tests");

describe("revsync test", () => {
  it("the example's 29 cases pass, offline: no credentials, and a base URL that only CI defines", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-ptest-"));
    try {
      cpSync(EXAMPLE, dir, { recursive: true });
      const cfg = join(dir, "revsync.yaml");
      writeFileSync(cfg, readFileSync(cfg, "utf8").replace("base_url: http://127.0.0.1:4010", "base_url: ${SANDBOX_BASE_URL}"));
      const r = await cli(["test"], { cwd: dir, env: { REVSYNC_CLIENT_ID: undefined, REVSYNC_PASSWORD: undefined, SANDBOX_BASE_URL: undefined } });
      expect(r.stdout.trim()).toBe("Policy tests passed: 29 passed, 0 failed (against git's policies).");
      expect(r.code).toBe(0);
    } finally {
      removeDir(dir);
    }
  });

  it("failing cases: file:line, expected, got and why; JUnit for CI; exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-ptest-"));
    try {
      cpSync(EXAMPLE, dir, { recursive: true });
      writeFileSync(
        join(dir, "tests", "wrong.yaml"),
        `apiVersion: revsync/v1
kind: SspPolicyTest
cases:
  - name: Enterprise line expected at Hardware SSP
    line: { product_family: Hardware, legal_entity: US01, unit_list_price: 12000, product_id: HW-9000, currency_code: USD, date: 2026-03-01 }
    expect: { policy: Hardware SSP }
  - name: Software expected at Hardware SSP
    line: { product_family: Software, product_name: Office, region: EMEA, unit_list_price: 10, quantity: 10, order_date: 2026-02-01 }
    expect: { policy: Hardware SSP }
  - name: Wrong SSP
    line: { product_family: Hardware, legal_entity: US01, unit_list_price: 5000, product_id: HW-1000, currency_code: USD, date: 2026-02-01 }
    expect: { policy: Hardware SSP, ssp: 105 }
  - name: A date that cannot be compared
    line: { product_family: Other, product_name: Widget, region: EMEA, unit_list_price: 10, quantity: 10, order_date: soon }
    expect: { policy: Catch-all SSP }
  - name: Expected the inactive one
    line: { product_family: Other, product_name: Widget, region: EMEA, unit_list_price: 10, quantity: 10, order_date: 2026-02-01 }
    expect: { policy: Inactive Override SSP }
  - name: Cloud without a price
    line: { product_family: Software, product_name: Cloud CRM, region: EMEA }
    expect: { policy: Cloud Software SSP, ssp: 900 }
`,
      );
      const r = await cli(["test"], { cwd: dir });
      expect(r.code).toBe(1);
      const out = r.stdout;
      expect(out).toContain("FAIL tests/wrong.yaml:4 Enterprise line expected at Hardware SSP");
      expect(out).toContain("      why:      Enterprise Hardware SSP matched first (hierarchy_no 10)");
      expect(out).toContain("      why:      Hardware SSP's conditions hold too, but Enterprise Hardware SSP comes first (hierarchy_no 10 < 20)");
      expect(out).toContain(
        '      why:      Hardware SSP\'s condition product_family equality "Hardware" does not hold (the line has product_family "Software")',
      );
      expect(out).toContain("      why:      Hardware SSP gives SSP 104, expected 105");
      expect(out).toContain('      why:      Legacy SSP: order_date "soon" and "2025-01-01" cannot be ordered: both must be numbers, or both dates YYYY-MM-DD');
      expect(out).toContain("      why:      Inactive Override SSP is not active");
      expect(out).toContain('(the expression "unit_list_price * 0.9": unknown name "unit_list_price": the line has no numeric field of that name)');
      expect(out).toContain("Policy tests failed: 29 passed, 6 failed (against git's policies).");
      const junit = await cli(["test", "--format", "junit"], { cwd: dir });
      expect(junit.stdout).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="revsync policy tests" tests="35" failures="6">/);
      expect(junit.stdout).toContain('<testcase classname="tests/wrong.yaml" name="Wrong SSP" file="tests/wrong.yaml" line="10">');
      const json = JSON.parse((await cli(["test", "--format", "json"], { cwd: dir })).stdout);
      expect(json.summary).toEqual({ passed: 29, failed: 6 });
      // A file that is not a valid test file: exit 1, at its line.
      writeFileSync(join(dir, "tests", "bad.yaml"), "apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: x\n    line: {}\n    expect: { ssp: 1 }\n");
      const bad = await cli(["test"], { cwd: dir });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/tests\/bad\.yaml:6:13: error: cases\.0\.expect: missing required field "policy"/);
    } finally {
      removeDir(dir);
    }
  });
});

describe("against the service", () => {
  const fx = useEmulatorRepo();
  const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env } });

  function withTests(): void {
    cpSync(join(ROOT, "policy-tests"), join(fx.repo, "policy-tests"), { recursive: true });
    const cfg = join(fx.repo, "revsync.yaml");
    if (!readFileSync(cfg, "utf8").includes("tests:")) writeFileSync(cfg, `${readFileSync(cfg, "utf8")}tests: policy-tests\n`);
  }

  it("--live evaluates against the service's policies, read-only", async () => {
    withTests();
    const git = await run(["test"]);
    expect(git.code).toBe(0);
    const live = await run(["test", "--live"]);
    expect(live.code).toBe(1);
    // The service has not approved FY26-H1 yet, and has no Training Courses SSP.
    expect(live.stdout).toContain("Hardware SSP gives SSP no SSP, expected 103 (no approved batch of Hardware SSP holds a row for HW-1000 USD on 2026-03-01)");
    expect(live.stdout).toContain("Training Courses SSP is not a policy here");
    expect(await fx.emu.writes()).toEqual([]);
  });

  it("a hierarchy_no swap in git shows the re-routed cases in plan's text, JSON and markdown", async () => {
    withTests();
    writeFileSync(
      join(fx.repo, "policy-tests", "swap.yaml"),
      "apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: Support plan for services\n    line: { product_family: Services, product_name: Support Plan, unit_list_price: 2000, product_id: SUP-1000, currency_code: USD, date: 2026-03-01 }\n    expect: { policy: Professional Services SSP, ssp: 1840 }\n",
    );
    const text = await run(["plan"]);
    expect(text.stdout).toContain("Impact: 2 policy test case(s) change:");
    expect(text.stdout).toContain("EU training course: no policy -> Training Courses SSP 960");
    const sr = join(fx.repo, "policies", "ssp", "support-renewals.yaml");
    const original = readFileSync(sr, "utf8");
    writeFileSync(sr, original.replace("hierarchy_no: 40", "hierarchy_no: 25"));
    try {
      const swapped = await run(["plan"]);
      expect(swapped.stdout).toContain("  Support plan for services: Professional Services SSP 1,840 -> Support Renewals SSP 100   (policy-tests/swap.yaml:4)");
      const json = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      expect(json.impact).toContainEqual({
        name: "Support plan for services",
        file: "policy-tests/swap.yaml",
        line: 4,
        before: { policy: "Professional Services SSP", ssp: 1840 },
        // git approves FY26-CALC with the values it holds: SUP-1000 USD, mid point 100.
        after: { policy: "Support Renewals SSP", ssp: 100 },
      });
      const md = (await run(["plan", "--format", "markdown"])).stdout;
      expect(md).toContain("#### Impact: 3 policy test case(s) change");
      expect(md).toContain("| Support plan for services | Professional Services SSP, SSP 1,840 | Support Renewals SSP, SSP 100 |");
    } finally {
      writeFileSync(sr, original);
      removeDir(join(fx.repo, "policy-tests", "swap.yaml"));
    }
  });

  it("drift names who changed what and when; drift.ignore lists accepted drift apart, until it expires", async () => {
    const t = await token(fx.emu.url, "bob");
    const env = (await api(fx.emu.url, t, "GET", "/apis/policy-sets/v1/policy/tenant-configurations")).body[0];
    await api(fx.emu.url, t, "PATCH", `/apis/policy-sets/v1/policy/tenant-configurations/${env.compliance_id}`, updateBody(env, { ui_mode: "Modern" }, "bob"));
    const drift = await run(["drift", "--target", "tenant-configuration/Default Tenant Configuration"]);
    expect(drift.code).toBe(2);
    expect(drift.stdout).toMatch(/ {6}last modified by bob at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
    const json = JSON.parse((await run(["drift", "--format", "json", "--target", "tenant-configuration/Default Tenant Configuration"])).stdout);
    expect(json.drift[0]).toMatchObject({ modified_by: "bob", modified_on: expect.stringMatching(/Z$/) });
    expect((await run(["drift", "--format", "markdown"])).stdout).toMatch(
      /\| changed \| `tenant-configuration\/Default Tenant Configuration` \| .* \| by bob at \d{4}-/,
    );

    const cfg = join(fx.repo, "revsync.yaml");
    const original = readFileSync(cfg, "utf8");
    const rule = (until: string) =>
      `${original}drift:\n  ignore:\n    - address: "tenant-configuration/*"\n      fields: [ui_mode, carves_allocation, manual_journal_contra_account]\n      reason: the UI team pilots Modern\n      until: "${until}"\n    - address: "ssp/*"\n      reason: batches move in the UI this quarter\n      until: "2999-12-31"\n    - address: ssp/Nope\n      reason: a typo\n`;
    try {
      writeFileSync(cfg, rule("2999-12-31"));
      const ok = await run(["drift"]);
      expect(ok.code).toBe(0);
      expect(ok.stdout.trim()).toMatch(
        /^No drift\. Environment "demo" matches the policy repo \(\d+ accepted differences? ignored, drift\.ignore of revsync\.yaml\)\.$/,
      );
      const ignored = JSON.parse((await run(["drift", "--format", "json"])).stdout).ignored;
      const tc = ignored.find((i: any) => i.address.startsWith("tenant-configuration/"));
      expect(tc.reason).toBe("the UI team pilots Modern");
      expect(tc.diff.map((d: any) => d.path).sort()).toEqual(["carves_allocation", "manual_journal_contra_account", "ui_mode"]);
      // plan is not affected by drift.ignore
      expect((await run(["plan", "--detailed-exitcode"])).code).toBe(2);
      const validate = await run(["validate"]);
      expect(validate.stdout).toMatch(/revsync\.yaml:\d+:\d+: warning: drift\.ignore\[2\]: "ssp\/Nope" matches no address in git/);

      writeFileSync(cfg, rule("2020-01-01"));
      const expired = await run(["drift"]);
      expect(expired.code).toBe(2);
      expect(expired.stdout).toContain("tenant-configuration/Default Tenant Configuration");
      expect((await run(["validate"])).stdout).toMatch(/warning: drift\.ignore\[0\] \(tenant-configuration\/\*\) expired on 2020-01-01: it applies no more/);
    } finally {
      writeFileSync(cfg, original);
    }
  });
});
