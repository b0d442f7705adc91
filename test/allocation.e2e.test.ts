import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { legacyPlanChecksum, planChecksum } from "../src/plan/model.js";
import { cli, DEMO_ENV, removeDir, ROOT, startEmu, tempRepo, useEmulatorRepo, type Emu } from "../src/testing/helpers.js";
import { junitProblems } from "./junit-schema.js";
import { markdownText } from "../src/report/escape.js";

// Contracts (issue 29): how revsync test allocates them, and what plan's impact says a change moves,
// through the real CLI, in every format.
const EXAMPLE = join(ROOT, "examples", "policy-tests");
const NO_SSP =
  'widget: Small Orders SSP gives no SSP (the expression "unit_list_price * 1.1": unknown name "unit_list_price": the line has no numeric field of that name)';

describe("revsync test: contracts", () => {
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "revsync-alloc-"));
    cpSync(EXAMPLE, dir, { recursive: true });
  });
  afterAll(() => removeDir(dir));

  it("allocates the example's contracts (text, JSON, JUnit); an expectation missed by more than 0.01 fails naming line and amounts", async () => {
    writeFileSync(
      join(dir, "tests", "more.yaml"),
      `apiVersion: revsync/v1
kind: SspPolicyTest
contracts:
  - name: Expected wrong
    date: 2026-03-01
    lines:
      - id: appliance
        line: { product_family: Hardware, legal_entity: US01, product_id: HW-1000, currency_code: USD, unit_list_price: 5000, total_sell_price: 4500 }
      - id: support
        line: { product_family: Services, product_name: Support Plan, region: EMEA, currency_code: USD, unit_list_price: 5000, unit_sell_price: 1000, order_quantity: 1 }
    expect:
      allocation: { appliance: 4527.13, support: 972.87 }
  - name: A line without an SSP
    lines:
      - id: appliance
        line: { product_family: Hardware, legal_entity: US01, product_id: HW-1000, currency_code: USD, date: 2026-03-01, unit_list_price: 5000, total_sell_price: 4500 }
      - id: widget
        line: { product_family: Other, product_name: Widget, currency_code: USD, order_date: 2026-03-01, quantity: 1, total_sell_price: 10 }
`,
    );
    const text = await cli(["test"], { cwd: dir });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("PASS tests/contracts.yaml:8 contract Appliance with a year of support: USD 5,500.00, allocated\n");
    expect(text.stdout).toMatch(
      / {6}appliance +Hardware SSP +5,200\.00 +4,700\.00 - 5,700\.00 +below: Raise to floor +4,700\.00 +4,500\.00 +4,527\.15 +\+27\.15\n/,
    );
    expect(text.stdout).toMatch(/ {6}support +Support SSP +1,010\.00 +808\.00 - 1,212\.00 +inside: Standalone rate +1,010\.00 +1,000\.00 +972\.85 +-27\.15\n/);
    expect(text.stdout).toContain("FAIL tests/more.yaml:4 contract Expected wrong: USD 5,500.00, allocated\n");
    expect(text.stdout).toContain("      why: appliance: expected 4,527.13, got 4,527.15\n      why: support: expected 972.87, got 972.85\n");
    // No SSP for a line: the contract cannot be allocated, which fails only a contract that expects an allocation.
    expect(text.stdout).toContain("PASS tests/more.yaml:13 contract A line without an SSP: USD 4,510.00, cannot allocate\n");
    expect(text.stdout).toContain(`      why: ${NO_SSP}\n`);
    expect(text.stdout).toContain("Policy tests failed: 38 passed, 1 failed (against git's policies); 4 contracts: 3 allocated, 1 cannot allocate.");

    const json = JSON.parse((await cli(["test", "--format", "json"], { cwd: dir })).stdout);
    expect(json.summary).toEqual({ passed: 38, failed: 1 });
    const first = json.contracts.find((c: any) => c.name === "Appliance with a year of support");
    expect(first).toMatchObject({ file: "tests/contracts.yaml", line: 8, pass: true, status: "allocated", currency: "USD", total: 5500 });
    expect(first.lines[0]).toEqual({
      id: "appliance",
      policy: "Hardware SSP",
      ssp: 5200,
      range: { low: 4700, high: 5700 },
      position: "below",
      rule: "Raise to floor",
      rule_reads: "range_bottom",
      basis: 4700,
      sell_price: 4500,
      allocated: 4527.15,
      carve: 27.15,
    });
    expect(json.contracts.find((c: any) => c.name === "Expected wrong").why).toEqual([
      "appliance: expected 4,527.13, got 4,527.15",
      "support: expected 972.87, got 972.85",
    ]);
    expect(json.contracts.find((c: any) => c.name === "A line without an SSP").cannot_allocate).toEqual([NO_SSP]);

    const junit = (await cli(["test", "--format", "junit"], { cwd: dir })).stdout;
    expect(junit).toMatch(/<testsuites name="revsync policy tests" tests="39" failures="1" errors="0" time="[\d.]+">/);
    expect(junit).toMatch(/<testsuite name="tests\/more.yaml" tests="2" failures="1" errors="0" time="[\d.]+">/);
    expect(junit).toMatch(/<testcase classname="tests\/more.yaml" name="contract Expected wrong" time="[\d.]+">\n/);
    expect(junit).toContain('<failure message="tests/more.yaml:4: appliance: expected 4,527.13, got 4,527.15; support: expected 972.87, got 972.85">');
    expect(junit.match(/<testcase /g)?.length).toBe(39);
    // Contracts' cases (with their allocation as <system-out>) hold to Jenkins' JUnit schema too.
    expect(await junitProblems(junit)).toEqual([]);
  });

  it("a contract whose lines differ in currency, or lack a sell price: an error at file:line, exit 1", async () => {
    writeFileSync(
      join(dir, "tests", "more.yaml"),
      `apiVersion: revsync/v1
kind: SspPolicyTest
contracts:
  - name: Two currencies
    lines:
      - id: a
        line: { product_family: Hardware, currency_code: USD, total_sell_price: 1 }
      - id: b
        line: { product_family: Hardware, currency_code: EUR, total_sell_price: 1 }
      - id: c
        line: { product_family: Hardware, currency_code: USD }
`,
    );
    const r = await cli(["test"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'tests/more.yaml:9:15: error: contracts.0.lines.1 (b): currency "EUR" differs from the contract\'s first line ("USD"): every line of a contract has one currency',
    );
    const noSell =
      "tests/more.yaml:11:15: error: contracts.0.lines.2 (c): the line has no sell price: give total_sell_price, or unit_sell_price and order_quantity, as numbers";
    expect(r.stderr).toContain(noSell);
    // validate says the same, at the same place.
    expect((await cli(["validate"], { cwd: dir })).stdout).toContain(noSell);
  });
});

describe("plan: allocation impact", () => {
  const fx = useEmulatorRepo({ reset: false });
  const run = (args: string[]) => cli(args, { cwd: fx.repo, env: DEMO_ENV });
  beforeAll(() => {
    cpSync(join(ROOT, "policy-tests"), join(fx.repo, "policy-tests"), { recursive: true });
    const cfg = join(fx.repo, "revsync.yaml");
    writeFileSync(cfg, `${readFileSync(cfg, "utf8")}tests: policy-tests\n`);
  });

  it("the demo's change turns carves_allocation on: text, JSON (saved and shown again) and markdown show the contract's lines move", async () => {
    const text = await run(["plan"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("Allocation impact: 1 contract's allocation changes (USD 35.71 of revenue moves between lines):\n");
    expect(text.stdout).toContain(
      "  Appliance with installation, December 2025 (policy-tests/demo.yaml:27): USD 35.71 moves (now not reallocated, carves_allocation off; after apply allocated)\n",
    );
    expect(text.stdout).toMatch(/ {6}appliance {5}800\.00 -> 835\.71 {2}\+35\.71 {2}Hardware SSP \(SSP 1,000\.00\)\n/);
    expect(text.stdout).toMatch(/ {6}installation {2}500\.00 -> 464\.29 {2}-35\.71 {2}Professional Services SSP \(SSP 460\.00\)/);

    const saved = join(fx.repo, "plan.json");
    const planned = await run(["plan", "--format", "json", "--out", saved]);
    const json = JSON.parse(planned.stdout);
    expect(json.impact.moved).toEqual({ USD: 35.71 });
    expect(json.impact.cases.length).toBe(3);
    expect(json.impact.allocation).toEqual([
      {
        contract: "Appliance with installation, December 2025",
        file: "policy-tests/demo.yaml",
        line: 27,
        currency: "USD",
        before_status: "not carved",
        after_status: "allocated",
        lines: [
          {
            id: "appliance",
            before: { policy: "Hardware SSP", ssp: 1000, basis: 900, allocated: 800 },
            after: { policy: "Hardware SSP", ssp: 1000, basis: 900, allocated: 835.71 },
            shift: 35.71,
          },
          {
            id: "installation",
            before: { policy: "Professional Services SSP", ssp: 460, basis: 500, allocated: 500 },
            after: { policy: "Professional Services SSP", ssp: 460, basis: 500, allocated: 464.29 },
            shift: -35.71,
          },
        ],
        moved: 35.71,
      },
    ]);
    // The saved plan passes the plan schema as apply reads it; show renders its impact the same way.
    const md = await run(["show", saved, "--format", "markdown"]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain("#### Allocation impact: 1 contract's allocation changes (USD 35.71 of revenue moves between lines)\n");
    expect(md.stdout).toContain(
      '```mermaid\nxychart-beta\n    title "Appliance with installation, December 2025"\n    x-axis ["appliance now", "appliance after", "installation now", "installation after"]\n    y-axis "Allocated (USD)" 0 --> 920\n    bar [800.00, 835.71, 500.00, 464.29]\n```\n',
    );
    expect(md.stdout).toContain(
      "| Line | Before | After | Shift | Policy (SSP) |\n|---|--:|--:|--:|---|\n| appliance | 800.00 | 835.71 | +35.71 | Hardware SSP (SSP 1,000.00) |\n",
    );
    // A plan's impact may hold the cases alone, as a list (the form before contracts existed): read and
    // shown, its checksum covering it as it covers the rest.
    const older = join(fx.repo, "older-plan.json");
    const listed = { ...json, impact: json.impact.cases };
    writeFileSync(older, JSON.stringify({ ...listed, checksum: planChecksum(listed) }));
    const shown = await run(["show", older]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("Impact: 3 policy test cases change:");
    expect(shown.stdout).not.toContain("Allocation impact");
    // As an older revsync saved it (its checksum of the tenant and the changes alone): plan again.
    writeFileSync(older, JSON.stringify({ ...listed, checksum: legacyPlanChecksum(listed) }));
    const refused = await run(["show", older]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/was made by an older revsync.*: run plan again/);
    expect(await fx.emu.writes()).toEqual([]);
  });

  it("test --live: the service has carves_allocation off, so nothing is reallocated and the demo's expectation fails, saying why", async () => {
    const live = await run(["test", "--live", "--format", "json"]);
    expect(live.code).toBe(1);
    const c = JSON.parse(live.stdout).contracts[0];
    expect(c).toMatchObject({ name: "Appliance with installation, December 2025", pass: false, status: "not carved" });
    expect(c.lines.map((l: any) => [l.id, l.allocated, l.carve])).toEqual([
      ["appliance", 800, 0],
      ["installation", 500, 0],
    ]);
    expect(c.why).toEqual(["appliance: expected 835.71, got 800.00", "installation: expected 464.29, got 500.00"]);
  });

  it("--target: a contract moves only by what is targeted (a policy alone leaves carves_allocation as the service holds it)", async () => {
    const policyOnly = JSON.parse((await run(["plan", "--format", "json", "--target", "ssp/Hardware SSP"])).stdout);
    expect(policyOnly.impact.allocation).toEqual([]);
    const tenant = JSON.parse((await run(["plan", "--format", "json", "--target", "tenant-configuration/Default Tenant Configuration"])).stdout);
    expect(tenant.impact.allocation.map((e: any) => [e.contract, e.moved])).toEqual([["Appliance with installation, December 2025", 35.71]]);
  });
});

// The literal profile answers floor_percentage / ceiling_percentage as null. What the service does not
// show is not compared, so it is taken as unchanged: the impact's two sides both use git's value, differ
// only by what the plan changes, and say so; "No changes" shows no impact at all.
describe("plan and test --live on the literal profile (floor/ceiling answered null)", () => {
  let emu: Emu;
  let repo = "";
  const run = (args: string[]) => cli(args, { cwd: repo, env: DEMO_ENV });
  const NOTE = (p: string) =>
    `${p}: floor_percentage and ceiling_percentage are git's on both sides of this impact: the service does not show them (null), so they are taken as unchanged`;
  const NO_RANGE =
    "installation: the service does not show floor_percentage/ceiling_percentage of policy Professional Services SSP (null), which the line's range needs";
  beforeAll(async () => {
    emu = await startEmu("demo", { profile: "literal" });
    repo = tempRepo(emu.url);
    cpSync(join(ROOT, "policy-tests"), join(repo, "policy-tests"), { recursive: true });
    const cfg = join(repo, "revsync.yaml");
    writeFileSync(cfg, `${readFileSync(cfg, "utf8")}tests: policy-tests\n`);
  });
  afterAll(async () => {
    removeDir(repo);
    await emu.close();
  });

  it("after a full apply: no changes and no impact (text, JSON, markdown); test --live says which fields the service does not show", async () => {
    expect((await run(["apply", "--auto-approve"])).code).toBe(0);
    const applied = (await emu.writes()).length;
    const text = await run(["plan", "--detailed-exitcode"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^No changes\. /);
    expect(text.stdout).not.toMatch(/Impact|cannot compare/);
    const json = JSON.parse((await run(["plan", "--format", "json"])).stdout);
    expect(json.changes).toEqual([]);
    expect(json.impact).toEqual({ cases: [], allocation: [], moved: {} });
    const md = await run(["plan", "--format", "markdown"]);
    expect(md.stdout).toContain("**No changes.**");
    expect(md.stdout).not.toMatch(/Impact|cannot compare/);

    // The service's policies alone: a range that needs floor/ceiling says plainly the service does not show them.
    const live = await run(["test", "--live"]);
    expect(live.code).toBe(1);
    expect(live.stdout).toContain("FAIL policy-tests/demo.yaml:27 contract Appliance with installation, December 2025: USD 1,300.00, cannot allocate\n");
    expect(live.stdout).toContain(`      why: ${NO_RANGE}\n`);
    const liveJson = JSON.parse((await run(["test", "--live", "--format", "json"])).stdout);
    const c = liveJson.contracts[0];
    expect(c).toMatchObject({ name: "Appliance with installation, December 2025", pass: false, status: "cannot allocate" });
    expect(c.cannot_allocate).toEqual([NO_RANGE]);
    expect(await emu.writes()).toHaveLength(applied);
  });

  it("a change that moves the allocation: both sides allocate with git's floor/ceiling, and the impact says they are git's", async () => {
    const tc = join(repo, "policies", "tenant-configuration.yaml");
    const before = readFileSync(tc, "utf8");
    writeFileSync(tc, before.replace(/carves_allocation: true.*/, "carves_allocation: false"));
    try {
      const text = await run(["plan"]);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain("Allocation impact: 1 contract's allocation changes (USD 35.71 of revenue moves between lines):\n");
      expect(text.stdout).toContain(
        "  Appliance with installation, December 2025 (policy-tests/demo.yaml:27): USD 35.71 moves (now allocated; after apply not reallocated, carves_allocation off)\n",
      );
      expect(text.stdout).toMatch(/ {6}appliance {5}835\.71 -> 800\.00 {2}-35\.71 {2}Hardware SSP \(SSP 1,000\.00\)\n/);
      expect(text.stdout).toContain(`Note: ${NOTE("ssp/Hardware SSP")}\n`);
      expect(text.stdout).toContain(`Note: ${NOTE("ssp/Professional Services SSP")}`);
      expect(text.stdout).not.toContain("cannot");

      const saved = join(repo, "plan.json");
      const json = JSON.parse((await run(["plan", "--format", "json", "--out", saved])).stdout);
      expect(json.impact.moved).toEqual({ USD: 35.71 });
      expect(json.impact.allocation.map((e: any) => [e.before_status, e.after_status, e.moved])).toEqual([["allocated", "not carved", 35.71]]);
      expect(json.impact.notes).toEqual([NOTE("ssp/Hardware SSP"), NOTE("ssp/Professional Services SSP")]);
      // The saved plan passes the plan schema with its notes, and show says them again.
      const shown = await run(["show", saved]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`Note: ${NOTE("ssp/Professional Services SSP")}`);

      const md = await run(["plan", "--format", "markdown"]);
      expect(md.stdout).toContain("#### Allocation impact: 1 contract's allocation changes (USD 35.71 of revenue moves between lines)\n");
      expect(md.stdout).toContain(`> Note: ${markdownText(NOTE("ssp/Hardware SSP"))}\n`);
    } finally {
      writeFileSync(tc, before);
    }
  });
});
