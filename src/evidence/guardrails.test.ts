import { describe, expect, it } from "vitest";
import { guardrailProblems } from "./guardrails.js";
import type { EvidenceRecord } from "./record.js";

const change = (outcome: string, guardrails: unknown[]) =>
  ({ address: "ssp/P/batch/B", action: "approve", outcome, guardrails }) as unknown as EvidenceRecord["changes"][number];
const record = (changes: EvidenceRecord["changes"], held: string[] = [], inForce = false) =>
  ({
    changes,
    guardrails: {
      held_back: held,
      freeze: [{ name: "close", in_force: inForce, until_local: "2026-04-04 00:00 UTC" }],
    },
  }) as unknown as EvidenceRecord;

describe("evidence verify's guardrails", () => {
  it("flags a write that landed past a deny, an unmet approval or a freeze window in force; nothing when held back and nothing landed, or overridden", () => {
    const deny = { rule: "big-move", outcome: "deny", message: "mid_point_move_pct > 20: mid_point_move_pct = 31" };
    expect(guardrailProblems(record([change("done", [deny])], ["big-move denies"]))).toEqual([
      "guardrails: ssp/P/batch/B (approve) landed though big-move came to deny (mid_point_move_pct > 20: mid_point_move_pct = 31)",
    ]);
    expect(guardrailProblems(record([change("done", [{ ...deny, outcome: "approval_needed" }])]))).toHaveLength(1);
    expect(guardrailProblems(record([change("confirmed", [])], ["freeze window close is in force"], true))).toEqual([
      "guardrails: writes landed though the record's guardrails held the plan back: freeze window close is in force",
    ]);
    expect(guardrailProblems(record([change("skipped", [deny])], ["big-move denies"]))).toEqual([]);
    expect(guardrailProblems(record([change("already", [deny])], ["big-move denies"]))).toEqual([]);
    expect(guardrailProblems(record([change("done", [{ ...deny, outcome: "overridden" }])]))).toEqual([]);
  });
});
