import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { seedState } from "../src/emulator/seed.js";
import { junitProblemsOf } from "./junit-schema.js";
import { api, cli, DEMO_ENV, removeDir, ROOT, token, updateBody, useEmulatorRepo } from "../src/testing/helpers.js";

// Policy tests, impact in the plan, who drifted, and accepted drift (issue 15), through the real CLI.
const EXAMPLE = join(ROOT, "examples", "policy-tests");

/** A small check that a text is well-formed XML (what a CI report reader needs): one root, tags that
 *  nest and close, quoted attributes, and no raw & or < in text. */
function wellFormedXml(text: string): boolean {
  const body = text.replace(/^<\?xml[^?]*\?>\n/, "");
  const stack: string[] = [];
  let roots = 0;
  const re = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/g;
  for (const m of body.matchAll(re)) {
    if (m[6]) return false;
    if (m[5] !== undefined) {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(m[5]) || (!stack.length && m[5].trim())) return false;
      continue;
    }
    const [, close, name, , selfClose] = m;
    if (close) {
      if (stack.pop() !== name) return false;
    } else {
      if (!stack.length) roots++;
      if (!selfClose) stack.push(name as string);
    }
  }
  return stack.length === 0 && roots === 1;
}

describe("revsync test", () => {
  it("the example's 35 cases pass, offline: no credentials, a base URL only CI defines, no --env with two environments", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-ptest-"));
    try {
      cpSync(EXAMPLE, dir, { recursive: true });
      // Cases only: the example's contracts are test/allocation.e2e.test.ts's (and their rule texts are
      // mapped in the example's one environment only).
      removeDir(join(dir, "tests", "contracts.yaml"));
      const cfg = join(dir, "revsync.yaml");
      // A second environment: offline, git's policies need no service, so none has to be chosen.
      writeFileSync(
        cfg,
        `${readFileSync(cfg, "utf8").replace("base_url: http://127.0.0.1:4010", "base_url: ${SANDBOX_BASE_URL}")}  production:\n    base_url: \${PRODUCTION_BASE_URL}\n    realm: acme\n`,
      );
      const env = { REVSYNC_CLIENT_ID: undefined, REVSYNC_PASSWORD: undefined, SANDBOX_BASE_URL: undefined };
      const r = await cli(["test"], { cwd: dir, env });
      expect(r.stdout.trim()).toBe("Policy tests passed: 35 passed, 0 failed (against git's policies).");
      expect(r.code).toBe(0);
      const json = JSON.parse((await cli(["test", "--format", "json"], { cwd: dir, env })).stdout);
      const got = (name: string) => json.cases.find((c: any) => c.name === name)?.got;
      // The service's MM/DD/YYYY order document gives the SSP the ISO line gives (a Percent row: 104% of 5000).
      expect(got("A hardware order document (the same SSP as the ISO line of cases.yaml)")).toEqual({ policy: "Hardware SSP", ssp: 5200 });
      expect(got("Hardware below the enterprise price")).toEqual({ policy: "Hardware SSP", ssp: 5200 });
      // FY26-Q10 beats FY26-Q9 where its range holds the date (approved last); Amount rows are the SSP.
      expect(got("Gateway in November, where FY26-Q9 and FY26-Q10 both hold (Q10 was approved last)")).toEqual({ policy: "Gateways SSP", ssp: 480 });
      expect(got("Gateway in August, before FY26-Q10's range")).toEqual({ policy: "Gateways SSP", ssp: 450 });
    } finally {
      removeDir(dir);
    }
  });

  it("failing cases: file:line, expected, got and why; JUnit for CI; a bad date at its line; exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-ptest-"));
    try {
      cpSync(EXAMPLE, dir, { recursive: true });
      // Cases only: the example's contracts are test/allocation.e2e.test.ts's (and their rule texts are
      // mapped in the example's one environment only).
      removeDir(join(dir, "tests", "contracts.yaml"));
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
  - name: A quantity that cannot be compared
    line: { product_family: Other, product_name: Widget, region: EMEA, unit_list_price: 10, quantity: lots, order_date: 2026-02-01 }
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
      expect(out).toContain("      why:      Hardware SSP gives SSP 5,200, expected 105");
      expect(out).toContain(
        '      why:      Bulk SSP: quantity "lots" and "100" cannot be ordered: both must be numbers, or both dates (YYYY-MM-DD or MM/DD/YYYY)',
      );
      expect(out).toContain("      why:      Inactive Override SSP is not active");
      expect(out).toContain('(the expression "unit_list_price * 0.9": unknown name "unit_list_price": the line has no numeric field of that name)');
      expect(out).toContain("Policy tests failed: 35 passed, 6 failed (against git's policies).");
      const junit = await cli(["test", "--format", "junit"], { cwd: dir });
      // Five that ran and do not hold, one that could not be evaluated (an error, not a failure).
      expect(junit.stdout).toMatch(
        /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="revsync policy tests" tests="41" failures="5" errors="1" time="[\d.]+">/,
      );
      expect(junit.stdout).toMatch(/<testcase classname="tests\/wrong.yaml" name="Wrong SSP" time="[\d.]+">\n\s*<failure message="tests\/wrong\.yaml:10: /);
      expect(junit.stdout).toMatch(
        /name="A quantity that cannot be compared" time="[\d.]+">\n\s*<error message="tests\/wrong\.yaml:13: expected Catch-all SSP; could not be evaluated: Bulk SSP: quantity/,
      );
      expect(wellFormedXml(junit.stdout)).toBe(true);
      // Each JUnit report of this test holds to the schema: checked together at the end (junitProblemsOf).
      const reports = [junit.stdout];
      const json = JSON.parse((await cli(["test", "--format", "json"], { cwd: dir })).stdout);
      expect(json.summary).toEqual({ passed: 35, failed: 6 });
      // A file that is not a valid test file: exit 1, at its line; JUnit still holds the error.
      writeFileSync(join(dir, "tests", "bad.yaml"), "apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: x\n    line: {}\n    expect: { ssp: 1 }\n");
      const bad = await cli(["test"], { cwd: dir });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/tests\/bad\.yaml:6:13: error: cases\.0\.expect: missing required field "policy"/);
      // A date that is neither YYYY-MM-DD nor MM/DD/YYYY: an error at its place, in test and validate alike.
      writeFileSync(
        join(dir, "tests", "bad.yaml"),
        "apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: x\n    line: { product_family: Other, order_date: soon }\n    expect: { policy: null }\n",
      );
      const problem = 'tests/bad.yaml:5:48: error: cases.0.line.order_date: "soon" is not a date: write YYYY-MM-DD or MM/DD/YYYY (a day that exists)';
      const badDate = await cli(["test"], { cwd: dir });
      expect(badDate.code).toBe(1);
      expect(badDate.stderr).toContain(problem);
      expect((await cli(["validate"], { cwd: dir })).stdout).toContain(problem);
      // JUnit: the good files' 41 cases still reported, the broken file an error case of its own; exit 1.
      const junitBad = await cli(["test", "--format", "junit"], { cwd: dir });
      expect(junitBad.code).toBe(1);
      expect(junitBad.stderr).toContain(problem);
      expect(wellFormedXml(junitBad.stdout)).toBe(true);
      reports.push(junitBad.stdout);
      expect(junitBad.stdout).toMatch(/<testsuites name="revsync policy tests" tests="42" failures="5" errors="2"/);
      expect(junitBad.stdout).toContain('name="Wrong SSP"');
      expect(junitBad.stdout).toContain(
        '<testcase classname="tests/bad.yaml" name="tests/bad.yaml (the test file)" time="0.000">\n      <error message="tests/bad.yaml:5:48: cases.0.line.order_date: &quot;soon&quot; is not a date: write YYYY-MM-DD or MM/DD/YYYY (a day that exists)">',
      );
      // A bad flag and an environment that does not exist: JUnit holding the error, exit 1.
      for (const [args, message] of [
        [["test", "--format", "junit", "--bogus"], "unknown option &apos;--bogus&apos;"],
        [["test", "--env", "nope", "--format=junit"], "no environment &quot;nope&quot; in revsync.yaml; it has: demo"],
      ] as const) {
        const r2 = await cli([...args], { cwd: dir });
        expect(r2.code).toBe(1);
        expect(wellFormedXml(r2.stdout)).toBe(true);
        reports.push(r2.stdout);
        expect(r2.stdout.replace(/'/g, "&apos;")).toContain(`<error message="${message}`);
      }
      // No cases at all: exit 0, with a note (and a report of no tests).
      removeDir(join(dir, "tests"));
      const none = await cli(["test", "--format", "junit"], { cwd: dir });
      expect(none.code).toBe(0);
      expect(none.stdout).toContain('<testsuites name="revsync policy tests" tests="0" failures="0" errors="0" time="0.000">');
      reports.push(none.stdout);
      expect(await junitProblemsOf(reports)).toEqual(reports.map(() => []));
      expect(none.stderr).toMatch(/Note: no policy test cases in tests: write files of kind SspPolicyTest \(or GuardrailTest\) there/);
    } finally {
      removeDir(dir);
    }
  });

  it("environments whose vars give different policies: each runs the cases, and a failure names its environment", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-ptest-"));
    try {
      cpSync(EXAMPLE, dir, { recursive: true });
      // Cases only: the example's contracts are test/allocation.e2e.test.ts's (and their rule texts are
      // mapped in the example's one environment only).
      removeDir(join(dir, "tests", "contracts.yaml"));
      writeFileSync(
        join(dir, "revsync.yaml"),
        "version: 1\npolicies: policies\ntests: tests\nenvironments:\n  sandbox:\n    base_url: http://127.0.0.1:9\n    realm: s\n    vars: { kit_rate: 0.5 }\n  staging:\n    base_url: http://127.0.0.1:9\n    realm: t\n    vars: { kit_rate: 0.5 }\n  production:\n    base_url: http://127.0.0.1:9\n    realm: p\n    vars: { kit_rate: 0.6 }\n",
      );
      writeFileSync(
        join(dir, "policies", "kits.yaml"),
        "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Kits SSP }\nspec: { method: formula, active: true, hierarchy_no: 5, data_identifiers: [product_id], floor_percentage: 50, ceiling_percentage: 120, expression: 'unit_list_price * ${kit_rate}', when: [{ field_name: product_family, operator: equality, value: Kits }] }\n",
      );
      writeFileSync(
        join(dir, "tests", "kits.yaml"),
        "apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: A kit\n    line: { product_family: Kits, unit_list_price: 100 }\n    expect: { policy: Kits SSP, ssp: 50 }\n",
      );
      const r = await cli(["test"], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("FAIL tests/kits.yaml:4 A kit [production]");
      expect(r.stdout).toContain("      why:      Kits SSP gives SSP 60, expected 50");
      expect(r.stdout).toContain(
        "Policy tests failed: 71 passed, 1 failed (against git's policies, per environment (their vars differ): sandbox, staging; production).",
      );
      // --env names one.
      expect((await cli(["test", "--env", "staging"], { cwd: dir })).stdout.trim()).toBe("Policy tests passed: 36 passed, 0 failed (against git's policies).");
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
    expect(live.stdout).toContain("Hardware SSP gives no SSP, expected 1,030 (no approved batch of Hardware SSP holds a row for HW-1000 USD on 2026-03-01)");
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
    expect(text.stdout).toContain("Impact: 3 policy test cases change:");
    expect(text.stdout).toContain("EU training course: no policy -> Training Courses SSP at 960");
    const sr = join(fx.repo, "policies", "ssp", "support-renewals.yaml");
    const original = readFileSync(sr, "utf8");
    writeFileSync(sr, original.replace("hierarchy_no: 40", "hierarchy_no: 25"));
    try {
      const swapped = await run(["plan"]);
      expect(swapped.stdout).toContain(
        "  Support plan for services: Professional Services SSP at 1,840 -> Support Renewals SSP at 2,000   (policy-tests/swap.yaml:4)",
      );
      const json = JSON.parse((await run(["plan", "--format", "json"])).stdout);
      expect(json.impact.cases).toContainEqual({
        name: "Support plan for services",
        file: "policy-tests/swap.yaml",
        line: 4,
        before: { policy: "Professional Services SSP", ssp: 1840 },
        // git approves FY26-CALC with the values it holds: SUP-1000 USD, Percent, mid point 100 (of 2,000).
        after: { policy: "Support Renewals SSP", ssp: 2000 },
      });
      const md = (await run(["plan", "--format", "markdown"])).stdout;
      expect(md).toContain("#### Impact: 4 policy test cases change");
      expect(md).toContain("| Support plan for services | Professional Services SSP at 1,840 | Support Renewals SSP at 2,000 |");
      // --target limits the impact too: only what the targeted changes re-route.
      const one = await run(["plan", "--target", "ssp/Support Renewals SSP"]);
      expect(one.stdout).toContain("Support plan for services: Professional Services SSP at 1,840 -> Support Renewals SSP at 2,000");
      expect(one.stdout).not.toContain("EU training course");
      const quiet = await run(["plan", "--target", "ssp/Professional Services SSP"]);
      expect(quiet.stdout).toMatch(/^No changes\./);
      expect(quiet.stdout).not.toContain("Impact");
    } finally {
      writeFileSync(sr, original);
      removeDir(join(fx.repo, "policy-tests", "swap.yaml"));
    }
  });

  it("test record: the demo tenant's order lines become cases that pass --live, and plan's impact shows a line that git re-routes", async () => {
    withTests();
    const file = join(fx.repo, "policy-tests", "recorded.yaml");
    const rerouting = join(fx.repo, "policies", "ssp", "de-gateways.yaml");
    try {
      const rec = await run(["test", "record", "--from-errors", "--mask", "customer_name", "--omit", "po_number", "--out", "policy-tests/recorded.yaml"]);
      expect(rec.stderr).toBe("Note: the cases hold customer_id as the service gave them; --mask customer_id masks them, --omit leaves them out.\n");
      expect(rec.stdout.trim()).toBe("Recorded 6 cases from 6 error transactions in policy-tests/recorded.yaml: 6 no policy.");
      expect(rec.code).toBe(0);
      // Read only; the order documents as the service wrote them, the masked and omitted fields and the secrets not.
      expect(await fx.emu.writes()).toEqual([]);
      const text = readFileSync(file, "utf8");
      expect(text).toContain("  - name: E-00003 HW-1020\n    line:\n");
      expect(text).toContain("      order_date: 10/15/2026\n");
      // A date YAML 1.1 would read as a date is quoted: ajv-cli, which reads YAML 1.1, reads it as text
      // (schemas.tools.test.ts runs it over a file test record wrote).
      expect(text).toContain("      ssp_date: '2026-10-15'\n");
      expect(text).toContain('      unit_list_price: "1200.00"\n');
      expect(text).toContain("      customer_name: masked-3\n");
      expect(text).toContain("    expect: { policy: null }\n");
      for (const secret of ["Fabrikam", "PO-4", "po_number:", "demo-secret", "alice-password"]) expect(text).not.toContain(secret);
      expect(text).toContain("# Masked: customer_name.\n# Left out: po_number.\n");
      // Without its source, or for transactions that have no order lines: an error naming the flag, nothing read.
      const noSource = await run(["test", "record", "--out", "policy-tests/other.yaml"]);
      expect(noSource.stderr).toContain("Error: test record needs a source: --from-errors (the order lines of the service's error transactions)");
      const invoices = await run(["test", "record", "--from-errors", "--type", "invoice", "--out", "policy-tests/other.yaml"]);
      expect(invoices.stderr).toContain('Error: --type must be order: policy tests are about order lines, got "invoice"');
      expect([noSource.code, invoices.code]).toEqual([1, 1]);
      // A second recording never overwrites the first.
      const again = await run(["test", "record", "--from-errors", "--out", "policy-tests/recorded.yaml"]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("policy-tests/recorded.yaml exists: test record writes a new file");

      // As recorded, every case passes against the service (the demo's own cases do not: see --live above).
      const live = JSON.parse((await run(["test", "--live", "--format", "json"])).stdout);
      const recorded = live.cases.filter((c: any) => c.file === "policy-tests/recorded.yaml");
      expect(recorded.length).toBe(6);
      expect(recorded.every((c: any) => c.pass)).toBe(true);

      // A change in git that re-routes one order: plan's impact names it, and the offline run fails it.
      writeFileSync(
        rerouting,
        "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: DE Gateways SSP }\nspec: { method: formula, active: true, hierarchy_no: 5, data_identifiers: [product_id], floor_percentage: 80, ceiling_percentage: 120, expression: unit_list_price * 0.9, when: [{ field_name: order_number, operator: equality, value: SO-20002 }] }\n",
      );
      const plan = await run(["plan"]);
      expect(plan.stdout).toMatch(/\n {2}E-00003 HW-1020: no policy -> DE Gateways SSP at 1,080 {3}\(policy-tests\/recorded\.yaml:\d+\)\n/);
      const offline = await run(["test"]);
      expect(offline.code).toBe(1);
      expect(offline.stdout).toMatch(/FAIL policy-tests\/recorded\.yaml:\d+ E-00003 HW-1020\n {6}expected: no policy\n {6}got: {6}DE Gateways SSP\n/);
    } finally {
      removeDir(file);
      removeDir(rerouting);
    }
  });

  it("--live: the batch approved last wins where both ranges hold the date; a tie is an error naming both", async () => {
    const state = seedState("demo");
    const tenant = state.tenants[0] as (typeof state.tenants)[number];
    const hw = tenant.ssp.find((p) => p.compliance_name === "Hardware SSP");
    if (!hw) throw new Error("no Hardware SSP in the seed");
    const row = (product: string, mid: number, start: string, end: string, n: number) => ({
      product_id: product,
      currency_code: "USD",
      value_type: "Amount",
      below_mid_point: mid - 10,
      mid_point: mid,
      above_mid_point: mid + 10,
      effective_start_date: start,
      effective_end_date: end,
      ssp_value_id: `SV-T${n}`,
    });
    const batch = (name: string, approvedAt: number, start: string, end: string, values: ReturnType<typeof row>[]) => ({
      ...(hw.batches[0] as (typeof hw.batches)[number]),
      name,
      batch_name: name,
      status: "approved",
      file_id: null,
      file_name: null,
      updated_at: approvedAt,
      effective_start_date: start,
      effective_end_date: end,
      ssp_values: values,
    });
    // By name FY26-Q9 sorts after FY26-Q10; by approval (updated_at) Q10 is the later.
    hw.batches.push(
      batch("FY26-Q9", 1_780_000_000, "2026-07-01", "2026-12-31", [
        row("HW-1000", 450, "2026-07-01", "2026-12-31", 1),
        row("HW-1010", 300, "2026-07-01", "2026-12-31", 2),
      ]),
      batch("FY26-Q10", 1_790_000_000, "2026-10-01", "2026-12-31", [row("HW-1000", 480, "2026-10-01", "2026-12-31", 3)]),
      batch("FY26-Q10B", 1_780_000_000, "2026-10-01", "2026-12-31", [row("HW-1010", 310, "2026-10-01", "2026-12-31", 4)]),
    );
    await fx.emu.admin("POST", "reset", { state });
    withTests();
    const file = join(fx.repo, "policy-tests", "batches.yaml");
    const line = (product: string, date: string) =>
      `{ product_family: Hardware, legal_entity: US01, product_id: ${product}, transaction_currency: USD, order_date: ${date}, unit_list_price: "1000.00" }`;
    writeFileSync(
      file,
      `apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: November\n    line: ${line("HW-1000", "11/15/2026")}\n    expect: { policy: Hardware SSP, ssp: 480 }\n  - name: August\n    line: ${line("HW-1000", "08/01/2026")}\n    expect: { policy: Hardware SSP, ssp: 450 }\n  - name: Approved at the same time\n    line: ${line("HW-1010", "11/15/2026")}\n    expect: { policy: Hardware SSP }\n`,
    );
    try {
      const r = await run(["test", "--live", "--format", "json"]);
      const mine = JSON.parse(r.stdout).cases.filter((c: any) => c.file === "policy-tests/batches.yaml");
      expect(mine.map((c: any) => [c.name, c.pass, c.got.ssp])).toEqual([
        ["November", true, 480],
        ["August", true, 450],
        ["Approved at the same time", false, null],
      ]);
      expect(mine[2].why).toEqual([
        "Hardware SSP: batches FY26-Q9 (updated_at 2026-05-28T20:26:40Z) and FY26-Q10B (updated_at 2026-05-28T20:26:40Z) both hold a row for HW-1010 USD on 2026-11-15, and none was approved after the other: which one applies cannot be told",
      ]);
    } finally {
      removeDir(file);
    }
  });

  it("more creates, re-routed cases and moved contracts than fit: the saved plan's comment stays under 60,000 characters and lists every change", async () => {
    withTests();
    // One file of new policies, one of cases and contracts that each new policy re-routes, each more than its
    // part of the comment holds (with 500, 1,000 and 2,000, before each impact section had its own budget,
    // this comment was 114,701 characters). Measured: the cases' 10,000 characters hold 129 rows, the
    // contracts' 12,000 hold 28, and beside them 39 of the changes fit in full; so 60 creates, 160 cases
    // and 40 contracts overflow all three, each by a fifth or more, at an eighth of the time.
    const size = { policies: 60, cases: 160, contracts: 40 };
    const policies = Array.from(
      { length: size.policies },
      (_, i) =>
        `apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Bundle Item ${i} SSP }\nspec:\n  method: formula\n  active: true\n  hierarchy_no: ${1000 + i}\n  data_identifiers: [product_id]\n  floor_percentage: 90\n  ceiling_percentage: 110\n  expression: unit_list_price * 0.9\n  transaction_above_range: Cap at ceiling\n  transaction_below_range: Raise to floor\n  transaction_mid_range: Use transaction price\n  when:\n    - { field_name: product_name, operator: equality, value: Item ${i} }\n    - { field_name: product_family, operator: equality, value: Bundles }\n`,
    );
    const cases = Array.from(
      { length: size.cases },
      (_, i) =>
        `  - name: Bundle item ${i % size.policies}, order line ${i}\n    line: { product_family: Bundles, product_name: Item ${i % size.policies}, product_id: B-${i}, currency_code: USD, date: 2026-03-01, unit_list_price: 1000 }\n    expect: { policy: Bundle Item ${i % size.policies} SSP, ssp: 900 }`,
    );
    const contracts = Array.from(
      { length: size.contracts },
      (_, i) =>
        `  - name: Bundle contract ${i}\n    date: 2026-03-01\n    lines:\n      - id: appliance\n        line: { product_family: Hardware, legal_entity: US01, product_id: HW-1000, currency_code: USD, unit_list_price: 1000, order_quantity: 1, total_sell_price: 800 }\n      - id: item\n        line: { product_family: Bundles, product_name: Item ${i % size.policies}, product_id: B-${i}, currency_code: USD, unit_list_price: ${1000 + i}, order_quantity: 1, total_sell_price: 500 }`,
    );
    const gen = join(fx.repo, "policies", "ssp", "bundles.yaml");
    const tests = join(fx.repo, "policy-tests", "bundles.yaml");
    writeFileSync(gen, policies.join("---\n"));
    writeFileSync(tests, `apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n${cases.join("\n")}\ncontracts:\n${contracts.join("\n")}\n`);
    try {
      expect((await run(["plan", "--out", "plan-demo.json", "--quiet"])).code).toBe(0);
      const shown = await run(["show", "plan-demo.json", "--format", "markdown"]);
      expect(shown.code).toBe(0);
      const md = shown.stdout;
      expect(md.length).toBeLessThan(60_000);
      const plan = JSON.parse(readFileSync(join(fx.repo, "plan-demo.json"), "utf8"));
      expect(plan.changes.length).toBeGreaterThan(size.policies);
      expect(plan.impact.cases.length).toBeGreaterThanOrEqual(size.cases);
      expect(plan.impact.allocation.length).toBeGreaterThanOrEqual(size.contracts);
      for (const c of plan.changes) expect(md).toMatch(new RegExp(`<code>${c.address}</code>|\`${c.address}\``));
      expect(md).toMatch(
        /_In full, the changes would pass the comment's 60,000 characters: the first \d+ are in full above, every change in full is in plan-demo\.json\._/,
      );
      expect(md).toMatch(/_\d+ more cases not shown here \(this table's share of the comment is full\): every case is in plan-demo\.json \(impact\.cases\)\._/);
      expect(md).toMatch(
        /_\d+ more contracts not shown here \(the contracts' share of the comment is full\): every contract is in plan-demo\.json \(impact\.allocation\)\._/,
      );
    } finally {
      for (const f of [gen, tests, join(fx.repo, "plan-demo.json")]) removeDir(f);
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
      // The accepted drift is listed under "Ignored", as it is beside other drift.
      expect(ok.stdout.trim()).toMatch(
        /^No drift\. Environment "demo" matches the policy repo \((\d+) accepted differences? ignored, drift\.ignore of revsync\.yaml\)\.\n\nIgnored \(accepted drift, drift\.ignore of revsync\.yaml\): \1\n {2}changed {9}tenant-configuration\/Default Tenant Configuration: .*\(the UI team pilots Modern\)(\n {2}.*\(batches move in the UI this quarter\))*$/,
      );
      expect((await run(["drift", "--format", "markdown"])).stdout).toContain("<details><summary>Ignored (accepted drift): ");
      const ignored = JSON.parse((await run(["drift", "--format", "json"])).stdout).ignored;
      const tc = ignored.find((i: any) => i.address.startsWith("tenant-configuration/"));
      expect(tc.reason).toBe("the UI team pilots Modern");
      expect(tc.diff.map((d: any) => d.path).sort()).toEqual(["carves_allocation", "manual_journal_contra_account", "ui_mode"]);
      // plan is not affected by drift.ignore
      expect((await run(["plan", "--detailed-exitcode"])).code).toBe(2);
      const validate = await run(["validate"]);
      expect(validate.stdout).toMatch(/revsync\.yaml:\d+:\d+: warning: drift\.ignore\.2: "ssp\/Nope" matches no address in git/);

      writeFileSync(cfg, rule("2020-01-01"));
      const expired = await run(["drift"]);
      expect(expired.code).toBe(2);
      expect(expired.stdout).toContain("tenant-configuration/Default Tenant Configuration");
      expect((await run(["validate"])).stdout).toMatch(/warning: drift\.ignore\.0 \(tenant-configuration\/\*\) expired on 2020-01-01: it applies no more/);

      // A rule with fields covers field differences only: a policy git has and the service lacks stays drift.
      writeFileSync(cfg, `${original}drift:\n  ignore:\n    - address: "ssp/*"\n      fields: [active]\n      reason: pilots toggle active\n`);
      const fieldsOnly = await run(["drift"]);
      expect(fieldsOnly.code).toBe(2);
      expect(fieldsOnly.stdout).toMatch(/missing +ssp\/Training Courses SSP: in git, not in the service/);
      writeFileSync(
        cfg,
        `${original}drift:\n  ignore:\n    - address: "ssp/*"\n      fields: [active]\n      classes: [missing]\n      reason: never applies\n`,
      );
      expect((await run(["validate"])).stdout).toMatch(
        /revsync\.yaml:\d+:\d+: warning: drift\.ignore\.0 \(ssp\/\*\) matches nothing: a rule with fields covers field differences/,
      );
    } finally {
      writeFileSync(cfg, original);
    }
  }, 90_000);
});
