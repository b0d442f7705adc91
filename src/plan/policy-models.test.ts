import { describe, expect, it } from "vitest";
import type { DesiredState } from "../config/repo.js";
import type { LiveState } from "../live/read.js";
import { carvesGit, carvesLive } from "./policy-models.js";

const tenant = (name: string, carves: boolean): LiveState["tenantConfigs"][number] =>
  ({ compliance_name: name, compliance_spec: [{ carves_allocation: carves }] }) as unknown as LiveState["tenantConfigs"][number];
const live = (...tcs: LiveState["tenantConfigs"]): LiveState => ({ tenantConfigs: tcs, ssp: new Map(), values: new Map() });
const git = (...specs: [string, Record<string, unknown>][]): DesiredState => ({
  tenantConfigs: specs.map(([name, spec]) => ({ name, spec, source: { file: "policies/t.yaml", line: 1, column: 1 } })) as DesiredState["tenantConfigs"],
  ssp: [],
});

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
    const notTargeted = (): boolean => false;
    expect(carvesGit(git(["Default", { carves_allocation: true }]), live(tenant("Default", false)), notTargeted)).toBe(false);
  });
});
