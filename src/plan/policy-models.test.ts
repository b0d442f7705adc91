import { describe, expect, it } from "vitest";
import type { LivePolicy } from "../kinds/ssp/read.js";
import type { DesiredSsp } from "../kinds/ssp/files.js";
import type { TenantConfigurationEnvelope } from "../schema/generated/api.js";
import { DesiredView, LiveView } from "../testing/builders.js";
import { targetedDesired } from "./targets.js";
import { ruleReader, type Contract } from "../policy-test/allocate.js";
import { allocationImpact } from "../policy-test/run.js";
import { carvesGit, carvesLive, liveWithGitsUnknowns, modelsFromGit, modelsFromLive } from "./policy-models.js";
import { impactNotes } from "./policy-models.js";

const tenant = (name: string, carves: boolean): TenantConfigurationEnvelope =>
  ({ compliance_name: name, compliance_spec: [{ carves_allocation: carves }] }) as unknown as TenantConfigurationEnvelope;
const live = (...tcs: TenantConfigurationEnvelope[]): LiveView => new LiveView({ tenantConfigs: tcs });
const git = (...specs: [string, Record<string, unknown>][]): DesiredView =>
  new DesiredView({ tenantConfigs: specs.map(([name, spec]) => ({ name, spec, source: { file: "policies/t.yaml", line: 1, column: 1 } })) });

describe("carves_allocation, as the allocation reads it", () => {
  it("the service reallocates unless a tenant configuration says false", () => {
    expect(carvesLive(live(tenant("Default", true)))).toBe(true);
    expect(carvesLive(live(tenant("Default", false)))).toBe(false);
    expect(carvesLive(live())).toBe(true);
  });

  it("as git asks: git's value over the service's, a field git leaves out keeps the live one; --target limits whose value git gives", () => {
    expect(carvesGit(git(["Default", { carves_allocation: true }]), live(tenant("Default", false)))).toBe(true);
    expect(carvesGit(git(["Default", { manual_journal: true }]), live(tenant("Default", false)))).toBe(false);
    expect(carvesGit(git(["Default", { carves_allocation: false }]))).toBe(false);
    expect(carvesGit(git())).toBe(true);
    const served = live(tenant("Default", false));
    expect(carvesGit(targetedDesired(git(["Default", { carves_allocation: true }]), served, ["ssp/Other"]), served)).toBe(false);
  });
});

describe("a field the service does not show, in the impact's models", () => {
  const spec = {
    method: "formula",
    active: true,
    hierarchy_no: 30,
    expression: "unit_list_price * 0.92",
    floor_percentage: 90,
    ceiling_percentage: 110,
    transaction_below_range: "Raise to floor",
    transaction_mid_range: "Use transaction price",
    transaction_above_range: "Cap at ceiling",
    when: [{ field_name: "product_family", operator: "equality", value: "Services" }],
  };
  // The service as the literal profile answers: floor and ceiling null.
  const served = (): LiveView =>
    new LiveView({
      ssp: new Map([["Services SSP", { envelope: {}, item: { ...spec, floor_percentage: null, ceiling_percentage: null }, batches: [] }]]) as unknown as Map<
        string,
        LivePolicy
      >,
    });
  const desired = new DesiredView({
    ssp: [{ name: "Services SSP", spec, batches: [], source: { file: "policies/ssp/s.yaml", line: 1, column: 1 } }] as unknown as DesiredSsp[],
  });
  const line = (price: number) => ({ product_family: "Services", currency_code: "USD", unit_list_price: 500, order_quantity: 1, total_sell_price: price });
  const contract: Contract = {
    name: "Two services",
    file: "tests/c.yaml",
    line: 1,
    column: 1,
    lines: [
      { id: "a", input: line(400) },
      { id: "b", input: line(500) },
    ],
  };
  const readRule = ruleReader();

  it("the service's models alone say which range fields it does not show; a line whose range needs them cannot allocate, saying so", () => {
    const [m] = modelsFromLive(served());
    expect(m?.notShown).toEqual(["floor_percentage", "ceiling_percentage"]);
    expect(m?.floorPercentage).toBeUndefined();
    const same = allocationImpact(
      [contract],
      { policies: modelsFromLive(served()), carves: true },
      { policies: modelsFromLive(served()), carves: false },
      readRule,
    );
    expect(same[0]?.why?.[0]).toBe(
      "now: a: the service does not show floor_percentage/ceiling_percentage of policy Services SSP (null), which the line's range needs",
    );
  });

  it("git's value on both sides: no change, no impact; a change moves only what it changes, and the note names the fields", () => {
    const { live, fromGit } = liveWithGitsUnknowns(desired, served());
    expect(fromGit).toEqual(new Map([["ssp/Services SSP", [{ field: "floor_percentage" }, { field: "ceiling_percentage" }]]]));
    const before = modelsFromLive(live);
    expect(before[0]).toMatchObject({ floorPercentage: 90, ceilingPercentage: 110 });
    expect(before[0]?.notShown).toBeUndefined();
    // Nothing changes: the two sides allocate alike.
    expect(allocationImpact([contract], { policies: before, carves: true }, { policies: modelsFromGit(desired, live), carves: true }, readRule)).toEqual([]);
    // The service itself is left as it answered.
    expect(served().ssp.get("Services SSP")?.item.floor_percentage).toBeNull();
    // carves_allocation turned off: both sides allocate (a: basis 414, the floor of 460; b: 500), the shift is the carve.
    const moved = allocationImpact([contract], { policies: before, carves: true }, { policies: modelsFromGit(desired, live), carves: false }, readRule);
    expect(moved.map((e) => [e.before_status, e.after_status, e.moved])).toEqual([["allocated", "not carved", 7.66]]);
    expect(impactNotes([], moved, fromGit)).toEqual([
      "ssp/Services SSP: floor_percentage and ceiling_percentage are git's on both sides of this impact: the service does not show them (null), so they are taken as unchanged",
    ]);
    // A policy no listed line meets gets no note.
    expect(impactNotes([], [], fromGit)).toEqual([]);
  });
});
