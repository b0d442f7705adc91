import { describe, expect, it } from "vitest";
import type { DriftReport, Plan } from "../plan/model.js";
import { changeOf, planOf } from "../testing/builders.js";
import { mergeOutcomes, outcomesOf, type PlanCheck } from "./merge.js";
import { byConcern, countOutcomes, driftOutcome, failedOutcome, fleetExit, planOutcome, testOutcome, type EnvOutcome } from "./outcome.js";

const planIn = (environment: string, changes = [changeOf("update", "tenant-configuration/Default")]): Plan => ({ ...planOf(changes), environment });
const driftIn = (environment: string, drifted: boolean): DriftReport => ({
  format_version: "1",
  environment,
  created_at: "2026-11-21T00:00:00.000Z",
  drift: drifted ? [{ address: "ssp/A", class: "changed", message: "1 field differs", diff: [] }] : [],
  summary: { changed: drifted ? 1 : 0, unmanaged: 0, unmanaged_batch: 0, missing: 0, batch_status: 0, batch_values: 0, duplicate: 0 },
});
const testIn = (environment: string, failed: number) => ({
  format_version: "1",
  environment,
  source: `the service's policies in ${environment}`,
  summary: { passed: 3, failed },
  cases: [{ name: "a line", pass: failed === 0, why: failed ? ["met no policy"] : undefined }],
});
/** Plans as given (what apply checks of them is checked in the end-to-end tests). */
const asIs: PlanCheck = (raw) => raw as Plan;
const one = (data: unknown, source = "out.json"): EnvOutcome => {
  const [o] = outcomesOf({ source, data }, asIs);
  return o as EnvOutcome;
};

describe("an environment's outcome", () => {
  it("plan: changes only when apply would do something; drift: any drift; test: a failing case fails it", () => {
    expect(planOutcome(planIn("a")).status).toBe("changes");
    expect(planOutcome(planIn("a", [changeOf("not_in_git", "ssp/X")])).status).toBe("clean");
    expect(driftOutcome(driftIn("a", true)).status).toBe("changes");
    expect(driftOutcome(driftIn("a", false)).status).toBe("clean");
    expect(testOutcome("a", testIn("a", 1)).status).toBe("failed");
    expect(failedOutcome("a", "drift", new Error("connection refused"))).toMatchObject({ status: "failed", error: { message: "connection refused" } });
  });

  it("the exit code: 1 if any failed, else 2 if any drifted (plan's changes only with --detailed-exitcode), else 0; failures listed first", () => {
    const clean = driftOutcome(driftIn("a", false));
    const drifted = driftOutcome(driftIn("b", true));
    const changes = planOutcome(planIn("c"));
    const failed = failedOutcome("d", "plan", new Error("x"));
    expect(fleetExit([clean, drifted, failed], { planChanges: false })).toBe(1);
    expect(fleetExit([clean, drifted], { planChanges: false })).toBe(2);
    expect(fleetExit([clean, changes], { planChanges: false })).toBe(0);
    expect(fleetExit([clean, changes], { planChanges: true })).toBe(2);
    expect(fleetExit([], { planChanges: true })).toBe(0);
    expect(byConcern([clean, changes, failed, drifted]).map((o) => o.environment)).toEqual(["d", "c", "b", "a"]);
    expect(countOutcomes([clean, changes, failed, drifted])).toEqual({ environments: 4, failed: 1, changes: 2, clean: 1 });
  });
});

describe("a CI matrix's outputs, summed up", () => {
  it("reads each single environment's output as what it is, a failed run's included, and a fleet's output entry by entry", () => {
    expect(one(planIn("sandbox"))).toMatchObject({ environment: "sandbox", command: "plan", status: "changes", source: "out.json" });
    expect(one(driftIn("prod", true))).toMatchObject({ environment: "prod", command: "drift", status: "changes" });
    expect(one(testIn("prod", 0))).toMatchObject({ environment: "prod", command: "test", status: "clean" });
    const failed = { format_version: "1", error: { kind: "service", message: "connection refused" }, command: "drift", environment: "eu" };
    expect(one(failed)).toMatchObject({ environment: "eu", command: "drift", status: "failed", error: { message: "connection refused" } });
    expect(one({ ...failed, environment: undefined })).toMatchObject({ environment: null, status: "failed" });
    const fleet = {
      format_version: "1",
      command: "drift",
      environments: [
        { ...driftIn("a", false), command: "drift", status: "clean" },
        { environment: "b", error: { message: "refused" } },
      ],
    };
    expect(outcomesOf({ source: "all.json", data: fleet }, asIs).map((o) => [o.environment, o.command, o.status])).toEqual([
      ["a", "drift", "clean"],
      ["b", "drift", "failed"],
    ]);
  });

  it("refuses, naming the file, what is no output of plan, drift or test --live", () => {
    const refused = (data: unknown): string => {
      try {
        one(data, "x.json");
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error("not refused");
    };
    expect(refused([1])).toBe("x.json is not a JSON output of revsync plan, drift or test --live: it is not a JSON object");
    expect(refused({ drift: [] })).toMatch(/^x\.json .*: it has no format_version$/);
    expect(refused({ format_version: "2", drift: [] })).toBe("x.json has format 2; this revsync reads format 1: upgrade revsync");
    expect(refused({ format_version: "1", records: [] })).toMatch(/holds no plan, drift report, policy test results or error$/);
    expect(refused({ format_version: "1", error: { message: "m" } })).toMatch(/does not say which command failed/);
    expect(refused({ ...driftIn("a", true), drift: [{ address: "ssp/A" }] })).toMatch(/drift\[0\] is not a drifted resource/);
    expect(refused({ ...testIn("a", 0), environment: undefined })).toMatch(/name no environment/);
    expect(refused({ ...testIn("a", 0), summary: { passed: "3" } })).toMatch(/no summary of passed and failed/);
  });

  it("an environment two files hold is an error naming both; with the environments expected, each no file holds is a failure of its own, listed in their order", () => {
    const a = outcomesOf({ source: "a.json", data: driftIn("sandbox", false) }, asIs);
    const b = outcomesOf({ source: "b.json", data: driftIn("sandbox", true) }, asIs);
    expect(() => mergeOutcomes([a, b])).toThrow('environment "sandbox" (drift) is in two outputs: a.json and b.json');
    const c = outcomesOf({ source: "c.json", data: driftIn("extra", true) }, asIs);
    const merged = mergeOutcomes([c, a], ["production", "sandbox"]);
    expect(merged.map((o) => [o.environment, o.status, o.error?.kind])).toEqual([
      ["production", "failed", "missing"],
      ["sandbox", "clean", undefined],
      ["extra", "changes", undefined],
    ]);
    expect(merged[0]?.error?.message).toBe(
      "no output of revsync drift for this environment among the files given: its job did not run, or failed before revsync wrote its JSON",
    );
  });
});
