import { describe, expect, it } from "vitest";
import type { AllocationImpact } from "../policy-test/run.js";
import { SECTION_BUDGET } from "./budget.js";
import { allocationChart, allocationImpactMarkdown, CHART_CONTRACTS, CHART_LINES } from "./policy-test.js";

/** A contract whose `n` lines each move `shift` (alternately up and down). */
function entry(i: number, n: number, shift: number): AllocationImpact {
  const lines = Array.from({ length: n }, (_, j) => {
    const s = j % 2 ? -shift : shift;
    return {
      id: `line "${j}" [x]`,
      before: { policy: "P", ssp: 100, basis: 100, allocated: 1000 },
      after: { policy: "P", ssp: 100, basis: 100, allocated: 1000 + s },
      shift: s,
    };
  });
  return {
    contract: `Contract ${i}`,
    file: "tests/c.yaml",
    line: i,
    currency: "USD",
    before_status: "allocated",
    after_status: "allocated",
    lines,
    moved: shift * Math.ceil(n / 2),
  };
}

describe("the allocation impact in markdown", () => {
  it("stays within its budget however many contracts move: charts for the few that move most, the rest in the JSON plan", () => {
    const entries = Array.from({ length: 2000 }, (_, i) => entry(i, 3, 2000 - i));
    const md = allocationImpactMarkdown(entries, "plan-production.json");
    expect(md.length).toBeLessThanOrEqual(SECTION_BUDGET.charts + SECTION_BUDGET.contracts + 200);
    expect(md.match(/```mermaid/g)?.length).toBe(CHART_CONTRACTS);
    expect(md).toContain('title "Contract 0"');
    const shown = md.match(/^\*\*Contract \d+\*\*/gm)?.length ?? 0;
    expect(shown).toBeGreaterThan(10);
    expect(md).toContain(
      `_${2000 - shown} more contracts not shown here (the contracts' share of the comment is full): every contract is in plan-production.json (impact.allocation)._`,
    );
    expect(md).toContain("#### Allocation impact: 2000 contracts' allocations change (USD ");
  });

  it("a chart draws the lines that move most, labels that cannot end it, and before and after side by side", () => {
    const e = entry(1, 20, 50);
    e.lines[7]!.after.allocated = 1500;
    e.lines[7]!.shift = 500;
    const chart = allocationChart(e);
    expect(chart).toContain(`title "Contract 1 (${CHART_LINES} of 20 lines)"`);
    expect(chart).toContain(`"line '7' 'x' now", "line '7' 'x' after"`);
    const bars = /bar \[(.*)\]/.exec(chart)?.[1]?.split(", ");
    expect(bars).toHaveLength(2 * CHART_LINES);
    expect(bars).toContain("1500.00");
    expect(chart).toContain('y-axis "Allocated (USD)" 0 --> 1650');
  });
});
