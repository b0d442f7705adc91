import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PROFILES } from "../src/emulator/profile.js";
import { seedState } from "../src/emulator/seed.js";
import { cli, DEMO_ENV, removeDir, startEmu, tempRepo, type Emu } from "../src/testing/helpers.js";

// Every value git sets is compared, and every number is read by one rule (issue 33): through the real
// CLI against the emulator, on both answer profiles where the service's answers are the point.
const HW = join("policies", "ssp", "hardware.yaml");

describe.each(PROFILES)("profile %s", (profile) => {
  let emu: Emu;
  let repo: string;
  beforeAll(async () => {
    emu = await startEmu("demo", { profile });
  });
  afterAll(async () => {
    if (repo) removeDir(repo);
    await emu.close();
  });
  beforeEach(async () => {
    await emu.reset();
    if (repo) removeDir(repo);
    repo = tempRepo(emu.url);
  });
  const run = (args: string[]) => cli(args, { cwd: repo, env: DEMO_ENV });
  const edit = (file: string, from: string, to: string): void => {
    const path = join(repo, file);
    const text = readFileSync(path, "utf8");
    expect(text).toContain(from);
    writeFileSync(path, text.replace(from, to));
  };
  /** Tests that do not depend on how the service answers run once, against the default profile. */
  const anyProfile = (name: string, fn: () => Promise<void>): void => {
    if (profile === "default") it(name, fn);
  };

  it("a batch git says ends 2025-09-30 and the service 2025-12-31: plan and drift say so with what to do, export writes the service's date, test and test --live agree", async () => {
    // The service's FY25-H2 (approved) runs 2025-07-01 to 2025-12-31, FY26-H1 (reviewed) to 2026-06-30.
    edit(
      HW,
      "    values: values/hardware-fy25-h2.csv\n",
      "    values: values/hardware-fy25-h2.csv\n    effective_start_date: 2025-07-01\n    effective_end_date: 2025-09-30\n",
    );
    edit(HW, "    values: values/hardware-fy26-h1.csv\n", "    values: values/hardware-fy26-h1.csv\n    effective_end_date: 2026-05-31\n");
    // An order line dated between the two end dates.
    mkdirSync(join(repo, "tests"));
    writeFileSync(
      join(repo, "tests", "dates.yaml"),
      "apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: November 2025\n    line: { product_family: Hardware, legal_entity: US01, product_id: HW-1000, currency_code: USD, date: 2025-11-15, unit_list_price: 1000 }\n    expect: { policy: Hardware SSP }\n",
    );

    const plan = await run(["plan"]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(" ! ssp/Hardware SSP/batch/FY25-H2 (unsupported)\n");
    expect(plan.stdout).toContain(
      "      reason: the service's dates of this batch differ from git's, and the interface has no call to change the dates of a batch that exists: change them in the service (or upload the batch again there with git's dates), or make git hold the service's (revsync export writes them)",
    );
    expect(plan.stdout).toContain('      effective_end_date: "2025-12-31" -> "2025-09-30"\n');
    // A batch git would approve over other dates is not approved: blocked, with the dates shown.
    expect(plan.stdout).toContain(" x ssp/Hardware SSP/batch/FY26-H1 (blocked)\n");
    expect(plan.stdout).toContain('      effective_end_date: "2026-06-30" -> "2026-05-31"\n');
    expect(plan.stdout).not.toContain("ssp/Hardware SSP/batch/FY26-H1 (approve)");
    const json = JSON.parse((await run(["plan", "--format", "json"])).stdout);
    const fy25 = json.changes.filter((c: any) => c.address === "ssp/Hardware SSP/batch/FY25-H2");
    expect(fy25.map((c: any) => [c.action, c.diff])).toEqual([
      ["unsupported", [{ path: "effective_end_date", kind: "changed", before: "2025-12-31", after: "2025-09-30" }]],
    ]);
    expect(json.changes.filter((c: any) => c.address === "ssp/Hardware SSP/batch/FY26-H1").map((c: any) => c.action)).toEqual(["blocked"]);

    const drift = await run(["drift"]);
    expect(drift.code).toBe(2);
    expect(drift.stdout).toContain(
      "ssp/Hardware SSP/batch/FY25-H2: effective_end_date differs from git; the interface cannot change a batch's dates: change them in the service, or make git hold the service's (revsync export writes them)",
    );
    expect(drift.stdout).toContain('      effective_end_date: git "2025-09-30", service "2025-12-31"\n');

    // git's date prices the line on one side, the service's on the other: they differ, and say why.
    const got = async (live: boolean) => JSON.parse((await run(["test", ...(live ? ["--live"] : []), "--format", "json"])).stdout).cases[0].got;
    const before = { offline: await got(false), live: await got(true) };
    expect(before.offline).toEqual({ policy: "Hardware SSP", ssp: null, note: "no approved batch of Hardware SSP holds a row for HW-1000 USD on 2025-11-15" });
    expect(before.live).toEqual({ policy: "Hardware SSP", ssp: expect.any(Number) });

    const exported = await run(["export"]);
    expect(exported.code).toBe(0);
    const hw = readFileSync(join(repo, HW), "utf8");
    // Each date replaced where it stands (quoted: a plain 2025-12-31 is a timestamp to YAML 1.1 tools).
    expect(hw).toContain('    values: values/hardware-fy25-h2.csv\n    effective_start_date: 2025-07-01\n    effective_end_date: "2025-12-31"\n');
    expect(hw).toContain('    values: values/hardware-fy26-h1.csv\n    effective_end_date: "2026-06-30"\n');
    expect((await run(["validate"])).code).toBe(0);
    const after = JSON.parse((await run(["plan", "--format", "json"])).stdout);
    expect(after.changes.filter((c: any) => c.address.startsWith("ssp/Hardware SSP/batch/FY2"))).toEqual([]);
    // One date on both sides: the two runs agree.
    expect(await got(false)).toEqual(before.live);
    expect(await got(true)).toEqual(before.live);
  });

  it("a number the service answers that a double cannot hold is not comparable: never equal, said in plan, drift and export, git's kept", async () => {
    const state = seedState("demo");
    const hw = state.tenants[0]?.ssp.find((p) => p.compliance_name === "Hardware SSP");
    if (!hw) throw new Error("no Hardware SSP in the seed");
    // Held as the double nearest to it, and answered as 12345678901234567000: a literal no double holds.
    hw.item.hierarchy_no = Number("12345678901234567890");
    hw.item.floor_percentage = 1e300;
    // A policy git has no file for, whose number the plan shows as the service wrote it.
    const ps = state.tenants[0]?.ssp.find((p) => p.compliance_name === "Professional Services SSP");
    if (!ps) throw new Error("no Professional Services SSP in the seed");
    ps.item.hierarchy_no = 2 ** 60;
    rmSync(join(repo, "policies", "ssp", "professional-services.yaml"));
    await emu.admin("POST", "reset", { state });
    const note = "ssp/Hardware SSP: hierarchy_no not comparable: the service answers 12345678901234567000, a number a double cannot hold exactly";
    const floorNote =
      profile === "default"
        ? "ssp/Hardware SSP: floor_percentage not comparable: the service answers 1e+300, a number a double cannot hold exactly"
        : "ssp/Hardware SSP, ssp/Software Subscriptions SSP and ssp/Support Renewals SSP: floor_percentage and ceiling_percentage not compared: the service shows no value (null) for them";

    const plan = await run(["plan", "--format", "json"]);
    const json = JSON.parse(plan.stdout);
    expect(json.notes).toEqual(expect.arrayContaining([expect.stringContaining(note), expect.stringContaining(floorNote)]));
    // Not a difference (the interface could not write it), and never "the same".
    expect(json.changes.filter((c: any) => c.address === "ssp/Hardware SSP")).toEqual([]);
    const text = await run(["plan"]);
    expect(text.stdout).toContain(`Note: ${note}, so git's value could be neither checked nor changed`);
    // A saved plan holds the service's number as its text, and reads back as it was made.
    const notInGit = json.changes.find((c: any) => c.address === "ssp/Professional Services SSP");
    expect(notInGit).toMatchObject({ action: "not_in_git", before: { hierarchy_no: "1152921504606847000" } });
    const saved = join(repo, "plan.json");
    expect((await run(["plan", "--out", saved])).code).toBe(0);
    expect(JSON.parse(readFileSync(saved, "utf8")).changes).toEqual(json.changes);
    const shown = await run(["show", saved]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(" ? ssp/Professional Services SSP (not in git)\n");

    const drift = await run(["drift", "--target", "ssp/Hardware SSP"]);
    expect(drift.stdout).not.toMatch(/^changed +ssp\/Hardware SSP:/m);
    expect(drift.stdout).toContain(`Note: ${note}`);
    expect(drift.stdout).not.toMatch(/^No drift\. Environment "demo" matches the policy repo\.$/m);

    // Export keeps git's number in the file it holds, and leaves it out of a new one, saying why.
    const e = await run(["export", "--target", "ssp/Hardware SSP"]);
    expect(e.code).toBe(0);
    expect(e.stdout).toContain(`Note: ${note}`);
    const file = readFileSync(join(repo, HW), "utf8");
    expect(file).toContain("  hierarchy_no: 10\n");
    expect(file).toContain("  floor_percentage: 85\n");
    const dir = mkdtempSync(join(tmpdir(), "revsync-export-"));
    try {
      expect((await run(["export", "--dir", dir, "--target", "ssp/Hardware SSP"])).code).toBe(0);
      const fresh = readFileSync(join(dir, "ssp", "hardware-ssp.yaml"), "utf8");
      expect(fresh).not.toMatch(/^ {2}hierarchy_no:/m);
      expect(fresh).toContain(
        "# hierarchy_no: left out, the service answers 12345678901234567000, a number a double cannot hold exactly (not comparable); it keeps its live value",
      );
    } finally {
      removeDir(dir);
    }
  });

  anyProfile(
    "a file_id the service answers as an integer (the spec does not type it) is an id: the file is downloaded and compared, and one that differs from the batch's own values blocks the review; apply sends nothing to the batch",
    async () => {
      const state = await emu.admin<any>("GET", "state");
      const t = state.tenants[0];
      const b = t.ssp.find((p: any) => p.compliance_name === "Hardware SSP").batches.find((x: any) => x.batch_name === "FY26-H2");
      // The file holds 1/999/1000 in every row; the batch's own values (ssp_values) are git's.
      t.files["3"] = (t.files[b.file_id] as string).replace(/,Percent,\d+,\d+,\d+,/g, ",Percent,1,999,1000,");
      delete t.files[b.file_id];
      b.file_id = 3;
      await emu.admin("POST", "reset", { state });
      const plan = await run(["plan", "--format", "json"]);
      const h2 = JSON.parse(plan.stdout).changes.find((c: any) => c.address === "ssp/Hardware SSP/batch/FY26-H2");
      expect(h2).toMatchObject({ action: "blocked", reason: expect.stringContaining("the service holds two sets of values for this batch") });
      await emu.admin("DELETE", "requests");
      await run(["apply", "--auto-approve"]);
      expect((await emu.writes()).filter((w) => w.path.includes("FY26-H2"))).toEqual([]);
    },
  );

  anyProfile("numbers in git that a double cannot hold are errors at their file and line: validate fails, plan and apply send nothing", async () => {
    edit(HW, "  hierarchy_no: 10\n", "  hierarchy_no: 1e300\n");
    edit(HW, "  floor_percentage: 85\n", "  floor_percentage: 12345678901234567890\n");
    const v = await run(["validate"]);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(
      "policies/ssp/hardware.yaml:10:17: error: spec.hierarchy_no: 1e300 is beyond 9007199254740991 (2^53 - 1), the largest whole number a double holds exactly: it would be read as 1e+300: write a number revsync can hold exactly",
    );
    expect(v.stdout).toContain(
      "policies/ssp/hardware.yaml:12:21: error: spec.floor_percentage: 12345678901234567890 is beyond 9007199254740991 (2^53 - 1), the largest whole number a double holds exactly: it would be read as 12345678901234567000: write a number revsync can hold exactly",
    );
    for (const args of [["plan"], ["apply", "--auto-approve"]]) {
      const r = await run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("policies/ssp/hardware.yaml:10:17: error: spec.hierarchy_no: 1e300 is beyond");
    }
    expect(await emu.writes()).toEqual([]);
  });

  anyProfile('a test line\'s quantity of "1,000" or "1e3" is an error at its place, never 1; a formula over a total is not multiplied again', async () => {
    mkdirSync(join(repo, "tests"));
    const contract = (licences: string, support: string) =>
      [
        "apiVersion: revsync/v1",
        "kind: SspPolicyTest",
        "contracts:",
        "  - name: Licences and their support",
        "    date: 2026-03-01",
        "    lines:",
        "      - id: licence",
        `        line: { product_family: Bundle, product_id: L-1, currency_code: USD, order_quantity: ${licences}, total_list_price: 1000, total_sell_price: 700 }`,
        "      - id: support",
        `        line: { product_family: Bundle, product_id: S-1, currency_code: USD, order_quantity: ${support}, total_list_price: 250, total_sell_price: 300 }`,
        "    expect:",
        "      allocation: { licence: 765.96, support: 234.04 }",
        "",
      ].join("\n");
    const tests = join(repo, "tests", "bundle.yaml");
    writeFileSync(tests, contract('"1,000"', '"1e3"'));
    for (const args of [["test"], ["validate"]]) {
      const r = await run(args);
      expect(r.code).toBe(1);
      const said = r.stdout + r.stderr;
      expect(said).toContain(
        'tests/bundle.yaml:8:94: error: contracts.0.lines.0.line.order_quantity: "1,000" is not a number: write digits with an optional decimal point, 0 or more (no exponent, no thousands separator)',
      );
      expect(said).toContain('tests/bundle.yaml:10:94: error: contracts.0.lines.1.line.order_quantity: "1e3" is not a number');
    }
    // The SSP of a formula over total_list_price is the line's: not extended by the quantity again.
    writeFileSync(
      join(repo, "policies", "ssp", "bundle.yaml"),
      "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Bundle Lines SSP }\nspec:\n  method: formula\n  active: true\n  hierarchy_no: 5\n  data_identifiers: [product_id]\n  floor_percentage: 90\n  ceiling_percentage: 110\n  expression: total_list_price * 1\n  transaction_above_range: Cap at ceiling\n  transaction_below_range: Raise to floor\n  transaction_mid_range: Use transaction price\n  when:\n    - { field_name: product_family, operator: equality, value: Bundle }\n",
    );
    writeFileSync(tests, contract("10", '"10"'));
    const t = await run(["test", "--format", "json"]);
    expect(t.code).toBe(0);
    const lines = JSON.parse(t.stdout).contracts[0].lines.map((l: any) => [l.id, l.ssp, l.range, l.basis, l.allocated]);
    expect(lines).toEqual([
      ["licence", 1000, { low: 900, high: 1100 }, 900, 765.96],
      ["support", 250, { low: 225, high: 275 }, 275, 234.04],
    ]);
  });
});
