import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROFILES } from "../src/emulator/profile.js";
import { cli, DEMO_ENV, useEmulatorRepo } from "../src/testing/helpers.js";

// The values a batch is approved with are what pricing uses: the batch's own values (ssp_values of its
// detail), not only its uploaded file. Plan, drift, export and apply's guard compare git's values with
// both where the service shows both, say so where it shows one, and never move a batch whose two
// differ. Against the emulator, in process, on both answer profiles (the literal one names no file, so
// there the batch's own values are all the service shows of them).

type Entry = { method: string; path: string; status: number };

describe.each(PROFILES)("a batch's own values against the emulator's %s profile", (profile) => {
  const fx = useEmulatorRepo({ profile, freshRepo: true });
  const run = (args: string[]) => cli(args, { cwd: fx.repo, env: DEMO_ENV });
  /** Hardware SSP's batch FY26-H1 (reviewed; git approves it) or FY25-H2 (approved in both) holding 999
   *  as its first value's mid_point, its uploaded file untouched. */
  const ownValueBecomes = async (batch: 0 | 1, mid: number): Promise<void> => {
    const state: any = await fx.emu.admin("GET", "state");
    state.tenants[0].ssp[0].batches[batch].ssp_values[0].mid_point = mid;
    await fx.emu.admin("POST", "reset", { state });
  };
  const approves = async (): Promise<Entry[]> =>
    (await fx.emu.admin<Entry[]>("GET", "requests")).filter((e) => e.method === "PATCH" && e.path.includes("/approve/"));

  it("a batch whose own values hold 999 is never approved: plan and drift show it, apply approves nothing of it", async () => {
    await ownValueBecomes(1, 999);
    const plan = await run(["plan", "--target", "ssp/Hardware SSP"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).not.toContain("No changes");
    expect(plan.stdout).toContain(" x ssp/Hardware SSP/batch/FY26-H1 (blocked)\n");
    expect(plan.stdout).not.toContain("ssp/Hardware SSP/batch/FY26-H1 (approve)");
    // The default profile shows both the file and the batch's own values, and they differ: two sets of
    // values. The literal one shows the batch's own alone: they differ from git's.
    if (profile === "default") {
      expect(plan.stdout).toContain(
        "reason: the service holds two sets of values for this batch: its uploaded file and its own values (ssp_values, what pricing uses) differ in 1 row, so nobody can say which ones a move to approved would approve",
      );
      expect(plan.stdout).toContain("      ssp_values[HW-1000|USD|2026-01-01].mid_point: 999 -> 103\n");
    } else {
      expect(plan.stdout).toContain("reason: the service's values differ from policies/ssp/values/hardware-fy26-h1.csv in 1 row");
      expect(plan.stdout).toContain("      values[HW-1000|USD|2026-01-01].mid_point: 999 -> 103\n");
    }
    const drift = await run(["drift", "--target", "ssp/Hardware SSP/batch/FY26-H1"]);
    expect(drift.code).toBe(2);
    expect(drift.stdout).toMatch(/batch_values +ssp\/Hardware SSP\/batch\/FY26-H1: values differ from policies\/ssp\/values\/hardware-fy26-h1.csv: 1 changed/);
    expect(drift.stdout).toContain(`${profile === "default" ? "ssp_values" : "values"}[HW-1000|USD|2026-01-01].mid_point: git 103, service 999`);

    await fx.emu.admin("DELETE", "requests");
    const apply = await run(["apply", "--auto-approve", "--target", "ssp/Hardware SSP/batch/FY26-H1"]);
    expect(apply.stdout).not.toMatch(/^\S+ +approve /m);
    expect(await approves()).toEqual([]);
    const state: any = await fx.emu.admin("GET", "state");
    expect(state.tenants[0].ssp[0].batches[1].status).toBe("reviewed");
  });

  it("a batch approved in both with its own values changed since: plan is not 'No changes', export writes the values pricing uses", async () => {
    await ownValueBecomes(0, 101);
    const plan = await run(["plan", "--target", "ssp/Hardware SSP/batch/FY25-H2"]);
    expect(plan.stdout).not.toContain("No changes");
    expect(plan.stdout).toContain(" ! ssp/Hardware SSP/batch/FY25-H2 (unsupported)\n");
    expect(plan.stdout).toContain(`${profile === "default" ? "ssp_values" : "values"}[HW-1000|USD|2025-07-01].mid_point: 101 -> 100`);
    const exported = await run(["export", "--target", "ssp/Hardware SSP"]);
    expect(exported.code, exported.stderr).toBe(0);
    const csv = readFileSync(join(fx.repo, "policies", "ssp", "values", "hardware-fy25-h2.csv"), "utf8");
    expect(csv).toMatch(/^HW-1000,USD,Percent,90,101,110,/m);
    if (profile === "default") {
      expect(readFileSync(join(fx.repo, "policies", "ssp", "hardware.yaml"), "utf8")).toContain(
        "the service holds two sets of values: its uploaded file differs from its own values (ssp_values, what pricing uses)",
      );
      // The service still holds two sets of values: the plan says so, exported or not.
      expect((await run(["plan", "--target", "ssp/Hardware SSP/batch/FY25-H2"])).stdout).toContain("the service holds two sets of values for this batch");
    } else expect((await run(["plan", "--target", "ssp/Hardware SSP/batch/FY25-H2"])).stdout).toContain("No changes");
  });

  it("a saved plan's approve: the batch's own values changed after the plan are caught by the guard right before the send", async () => {
    const saved = await run(["plan", "--target", "ssp/Hardware SSP/batch/FY26-H1", "--out", "plan.json"]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toContain("ssp/Hardware SSP/batch/FY26-H1 (approve)");
    await ownValueBecomes(1, 999);
    await fx.emu.admin("DELETE", "requests");
    const apply = await run(["apply", "plan.json", "--auto-approve"]);
    expect(apply.code).toBe(1);
    expect(apply.stdout).toContain("blocked approve  ssp/Hardware SSP/batch/FY26-H1:");
    expect(apply.stdout).toContain(
      profile === "default"
        ? "its own values (ssp_values, what pricing uses) are not the values git holds, though its uploaded file is: the service holds two sets of values for it"
        : "its own values (ssp_values, what pricing uses) are not the values git holds",
    );
    expect(await approves()).toEqual([]);
  });

  it("where the batch's detail leaves its own values out, the plan says what it compared with (the file alone, or nothing)", async () => {
    await fx.emu.admin("POST", "faults", { kind: "omit", field: "ssp_values" });
    const plan = await run(["plan", "--target", "ssp/Hardware SSP/batch/FY26-H2"]);
    if (profile === "default") {
      expect(plan.stdout).toContain(" > ssp/Hardware SSP/batch/FY26-H2 (review)\n");
      expect(plan.stdout).toContain(
        "Note: ssp/Hardware SSP/batch/FY26-H2: ssp_values (the batch's own values, what pricing uses) not shown (null, or left out), so git's values were compared with its uploaded file only\n",
      );
    } else {
      // No file named either: nothing to compare, so nothing is moved.
      expect(plan.stdout).toContain(" x ssp/Hardware SSP/batch/FY26-H2 (blocked)\n");
      expect(plan.stdout).toContain("the service shows neither an uploaded file of this batch nor its own values (ssp_values)");
      expect(plan.stdout).toContain("Note: ssp/Hardware SSP/batch/FY26-H2: values (neither an uploaded file nor the batch's own values) not compared");
    }
    const drift = await run(["drift", "--target", "ssp/Hardware SSP/batch/FY25-H2"]);
    expect(drift.code).toBe(0);
    expect(drift.stdout).toContain("Note: ssp/Hardware SSP/batch/FY25-H2: ");
  });
});
