import { describe, expect, it } from "vitest";
import type { IgnoreRule } from "../schema/generated/policy.js";
import { applyIgnore } from "./ignore.js";
import type { DriftItem, DriftReport } from "./model.js";

const TC = "tenant-configuration/Default Tenant Configuration";

function report(drift: DriftItem[]): DriftReport {
  const summary = { changed: 0, unmanaged: 0, unmanaged_batch: 0, missing: 0, batch_status: 0, batch_values: 0, duplicate: 0 };
  for (const d of drift) summary[d.class]++;
  return { format_version: "1", environment: "demo", created_at: "2026-01-01T00:00:00.000Z", drift, summary };
}

const changed: DriftItem = {
  address: TC,
  class: "changed",
  diff: [
    { path: "ui_mode", kind: "changed", before: "Classic", after: "Modern" },
    { path: "carves_allocation", kind: "changed", before: true, after: false },
  ],
  message: "2 fields differ from git: ui_mode, carves_allocation",
};

const rule = (o: Partial<IgnoreRule>): IgnoreRule => ({ address: "tenant-configuration/*", reason: "accepted", ...o });

describe("accepted drift (drift.ignore)", () => {
  it("two rules on one address, each for one field: both apply, and the item is ignored whole", () => {
    const out = applyIgnore(
      report([changed]),
      [rule({ fields: ["ui_mode"], reason: "the UI pilot" }), rule({ fields: ["carves_allocation"], reason: "finance turned carves off" })],
      "2026-06-01",
    );
    expect(out.drift).toEqual([]);
    expect(out.summary.changed).toBe(0);
    expect(out.ignored).toHaveLength(1);
    expect(out.ignored[0]).toMatchObject({
      address: TC,
      message: "ui_mode, carves_allocation differ from git",
      reason: "the UI pilot; finance turned carves off",
      rule: "tenant-configuration/*",
    });
    expect(out.ignored[0]?.diff.map((d) => d.path)).toEqual(["ui_mode", "carves_allocation"]);
  });

  it("a field no rule covers stays drift; a rule past its until day applies no more", () => {
    const out = applyIgnore(report([changed]), [rule({ fields: ["ui_mode"] }), rule({ fields: ["carves_allocation"], until: "2026-01-31" })], "2026-06-01");
    expect(out.drift).toEqual([{ ...changed, diff: [changed.diff[1]], message: "1 field differs from git: carves_allocation" }]);
    expect(out.ignored.map((i) => i.message)).toEqual(["ui_mode differs from git"]);
  });

  it("a rule without fields covers the whole item; classes limit a rule to those classes", () => {
    const unmanaged: DriftItem = { address: "ssp/Legacy SSP", class: "unmanaged", diff: [], message: "in the service, not in git" };
    const out = applyIgnore(
      report([changed, unmanaged]),
      [rule({ fields: ["ui_mode"] }), rule({ reason: "all of it" }), rule({ address: "ssp/*", classes: ["changed"] })],
      "2026-06-01",
    );
    expect(out.ignored.map((i) => [i.address, i.reason])).toEqual([[TC, "all of it"]]);
    expect(out.drift).toEqual([unmanaged]);
  });
});

describe("a fields rule never covers a whole item", () => {
  it("a missing policy, an unmanaged batch: a `fields: [active]` rule on ssp/* leaves both in drift; a rule without fields covers them", () => {
    const missing: DriftItem = { address: "ssp/Hardware SSP", class: "missing", diff: [], message: "in git, not in the service" };
    const extra: DriftItem = {
      address: "ssp/Hardware SSP/batch/FY27",
      class: "unmanaged_batch",
      diff: [{ path: "status", kind: "removed", after: "approved" }],
      message: "batch in the service, not listed in git",
    };
    const fieldsOnly = applyIgnore(report([missing, extra]), [rule({ address: "ssp/*", fields: ["active", "status"] })], "2026-06-01");
    expect(fieldsOnly.drift).toEqual([missing, extra]);
    expect(fieldsOnly.ignored).toEqual([]);
    const whole = applyIgnore(report([missing]), [rule({ address: "ssp/*" })], "2026-06-01");
    expect(whole.drift).toEqual([]);
    expect(whole.ignored.map((i) => i.address)).toEqual(["ssp/Hardware SSP"]);
  });
});
