import { describe, expect, it } from "vitest";
import { exportFiles } from "../export/mapping.js";
import { demoState, desiredFrom, DesiredView, liveOf } from "../testing/builders.js";
import { targetedDesired } from "./targets.js";

describe("targetedDesired: git's state limited to the targets (the one filter of every impact section)", () => {
  const t = demoState().tenants[0];
  if (!t) throw new Error("no demo tenant");
  const live = liveOf(t);
  const desired = desiredFrom(exportFiles(live, []));
  desired.ssp.push({
    name: "New SSP",
    spec: { method: "formula", active: true, hierarchy_no: 99, data_identifiers: ["product_id"], floor_percentage: 80, ceiling_percentage: 120 },
    batches: [],
    source: { file: "new.yaml", line: 1, column: 1 },
    specSource: { file: "new.yaml", line: 5, column: 1 },
  });

  it("no target: all of git", () => {
    expect(targetedDesired(desired, live, [])).toBe(desired);
  });

  it("a policy: that policy whole; nothing else of git, tenant configuration and new policies included", () => {
    const out = DesiredView.of(targetedDesired(desired, live, ["ssp/Hardware SSP"]));
    expect(out.tenantConfigs).toEqual([]);
    expect(out.ssp.map((d) => d.name)).toEqual(["Hardware SSP"]);
    expect(out.ssp[0]).toBe(desired.ssp.find((d) => d.name === "Hardware SSP"));
  });

  it("a batch: its policy keeps the service's fields, and only that batch takes git's word; a new policy's own address keeps it", () => {
    const out = DesiredView.of(targetedDesired(desired, live, ["ssp/Hardware SSP/batch/FY26-H1", "ssp/New SSP"]));
    expect(out.ssp.map((d) => [d.name, Object.keys(d.spec).length, d.batches.map((b) => b.name)])).toEqual([
      ["Hardware SSP", 0, ["FY26-H1"]],
      ["New SSP", 6, []],
    ]);
  });
});
