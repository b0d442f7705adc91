import { describe, expect, it } from "vitest";
import { ACTIONS, summarize, type Change, type Plan } from "../plan/model.js";
import { changeOf } from "../testing/builders.js";
import { countOutcomes, outcomeOf, type ApplyReport } from "../apply/run.js";
import { applyText, driftSummaryLine, planMarkdown, planText, summaryLine } from "./plan.js";

function plan(changes: Change[]): Plan {
  return {
    format_version: "1",
    environment: "production",
    created_at: "2026-11-21T00:00:00.000Z",
    base_url: "https://api.example.com",
    auth_url: "https://auth.example.com",
    realm: "acme",
    user: null,
    targets: [],
    changes,
    summary: summarize(ACTIONS, changes as unknown as { [k: string]: unknown }[], "action"),
    notes: [],
    checksum: "sha256:0",
  };
}

const create = (i: number): Change => ({
  address: `ssp/Policy ${i}`,
  action: "create",
  before: null,
  after: {},
  diff: Array.from({ length: 12 }, (_, k) => ({ path: `field_${k}`, kind: "added" as const, after: `value ${k} of a long policy field ${i}` })),
  version_id: null,
  last_modified_on: null,
});

describe("markdown plan", () => {
  it("starts with the hidden marker and names the environment", () => {
    const md = planMarkdown(plan([create(1)]));
    expect(md.split("\n")[0]).toBe("<!-- revsync-plan:production -->");
    expect(md).toContain("### revsync plan for `production`");
    expect(md).toContain("| + create | 1 |");
  });

  it("never passes 60,000 characters: past that, a pointer to the JSON plan", () => {
    const md = planMarkdown(plan(Array.from({ length: 2000 }, (_, i) => create(i))));
    expect(md.length).toBeLessThanOrEqual(60_000);
    expect(md).toMatch(/_\d+ more changes not shown: the comment would pass 60,000 characters\. See the JSON plan artifact for the whole plan\._/);
    expect(md.trimEnd().endsWith("Plan: 2000 to create, 0 to update, 0 to review, 0 to approve.")).toBe(true);
  });

  it("a plan without changes says so", () => {
    expect(planMarkdown(plan([]))).toContain("**No changes.**");
  });
});

const plain = { paint: (_c: string, text: string) => text };
const entry = changeOf;

describe("the plan's classes in text and markdown", () => {
  const approve = entry("approve", "ssp/Software Subscriptions SSP/batch/FY26-Q1", {
    diff: [{ path: "status", kind: "changed", before: "reviewed", after: "approved" }],
    values: { file: "policies/ssp/values/sw-q1.csv", rows: 8, products: 4, currencies: ["EUR", "USD"], from: "2026-01-01", to: "2026-03-31" },
  });
  const blocked = entry("blocked", "ssp/Hardware SSP/batch/FY26-H1", {
    reason: "the service's values differ from policies/x.csv in 23 rows, so revsync will not move this batch to approved",
    diff: [{ path: "values[SW-1000|USD|2026-01-01].mid_point", kind: "changed", before: 100, after: 105 }],
    diff_rows: { shown: 1, total: 23 },
  });
  const notInGit = entry("not_in_git", "ssp/Legacy SSP", { reason: "the service holds this SSP policy and git has no file for it" });

  it("text: each entry with its words, the reason of what is not applied, values old -> new, what an approve moves, counts of each", () => {
    const text = planText(plan([approve, blocked, notInGit]), plain);
    expect(text).toContain(">> ssp/Software Subscriptions SSP/batch/FY26-Q1 (approve)");
    expect(text).toContain("      values: 8 rows, 4 products, currencies EUR, USD, 2026-01-01 to 2026-03-31, as in policies/ssp/values/sw-q1.csv");
    expect(text).toContain(" x ssp/Hardware SSP/batch/FY26-H1 (blocked)\n      reason: the service's values differ");
    expect(text).toContain("      values[SW-1000|USD|2026-01-01].mid_point: 100 -> 105\n      … and 22 more rows that differ (23 in all)");
    expect(text).toContain(" ? ssp/Legacy SSP (not in git)\n      reason: the service holds this SSP policy");
    expect(text).toMatch(/Plan: 0 to create, 0 to update, 0 to review, 1 to approve; 1 blocked, 1 not in git \(shown with their reasons, not applied\)\.$/);
  });

  it("a plan of only entries apply does not act on never says No changes, in text or markdown", () => {
    const p = plan([notInGit]);
    const text = planText(p, plain);
    expect(text).not.toContain("No changes");
    expect(text.split("\n")[0]).toBe(
      'Nothing for revsync to apply in environment "production" (https://api.example.com, realm acme), but the service and git differ:',
    );
    expect(summaryLine(p)).toBe("Plan: 0 to create, 0 to update, 0 to review, 0 to approve; 1 not in git (shown with the reason, not applied).");
    const md = planMarkdown(p);
    expect(md).not.toContain("No changes");
    expect(md).toContain("| ? not in git | 1 |");
    expect(md).toContain("<details><summary><code>?</code> <b>not in git</b> <code>ssp/Legacy SSP</code></summary>");
  });

  it("markdown: what an approve moves forward, and the count of differing rows not shown", () => {
    const md = planMarkdown(plan([approve, blocked]));
    expect(md).toContain("Values: 8 rows, 4 products, currencies EUR, USD, 2026-01-01 to 2026-03-31, as in policies/ssp/values/sw-q1.csv.");
    expect(md).toContain("| `values[SW-1000\\|USD\\|2026-01-01].mid_point` | `100` | `105` |");
    expect(md).toContain("| … and 22 more rows (23 in all) | | |");
  });
});

describe("drift's closing line", () => {
  it("counts each class in correct plurals", () => {
    const report = {
      format_version: "1",
      environment: "production",
      created_at: "2026-11-21T00:00:00.000Z",
      drift: [],
      summary: { changed: 1, unmanaged: 2, unmanaged_batch: 2, missing: 0, batch_status: 4, batch_values: 1 },
    };
    expect(driftSummaryLine(report)).toBe("Drift: 1 changed, 2 unmanaged, 2 unmanaged batches, 4 batch statuses, 1 batch's values.");
    expect(driftSummaryLine({ ...report, summary: { ...report.summary, unmanaged_batch: 1, batch_status: 1, batch_values: 2 } })).toBe(
      "Drift: 1 changed, 2 unmanaged, 1 unmanaged batch, 1 batch status, 2 batches' values.",
    );
  });
});

describe("apply's text report", () => {
  const plainPaint = { paint: (_c: string, t: string) => t } as const;
  type Row = { status: "done" | "failed" | "skipped"; outcome: string; action?: string };
  const report = (rows: Row[]): ApplyReport => {
    const outcomes = rows.map((r, i) => ({
      address: `ssp/P${i}`,
      action: r.action ?? "approve",
      status: r.status,
      outcome: outcomeOf(r),
      message: `m${i}`,
    }));
    return { environment: "demo", outcomes, summary: countOutcomes(outcomes), interrupted: false };
  };

  it("a saved plan applied again, every entry already there: counted as already, nothing sent", () => {
    const text = applyText(report(Array(7).fill({ status: "done", outcome: "already" })), plainPaint);
    expect(text).toContain("already approve  ssp/P0: m0");
    expect(text.split("\n").at(-1)).toBe("Apply complete: 0 done, 7 already, 0 failed, 0 skipped; nothing was sent.");
  });

  it("each step is marked, and the closing line counted, by its outcome's name: the names of the JSON report's summary", () => {
    const r = report([
      { status: "done", outcome: "done" },
      { status: "done", outcome: "confirmed" },
      { status: "done", outcome: "already" },
      { status: "failed", outcome: "blocked", action: "update" },
      { status: "skipped", outcome: "skipped" },
    ]);
    const text = applyText(r, plainPaint);
    expect(text).toContain("blocked update   ssp/P3: m3");
    expect(text).toContain("confirmed approve  ssp/P1: m1");
    expect(text).not.toMatch(/^failed/m);
    // A blocked write is not finished by applying the same plan again: it needs a new plan.
    expect(text.split("\n").at(-1)).toBe(
      "Someone changed what a blocked write was to change: run `revsync plan` to review the service as it is now, then apply that plan.",
    );
    expect(text).toContain("Apply finished with blocked writes: 1 done, 1 already, 1 confirmed, 1 blocked, 0 failed, 1 skipped.");
    expect(r.summary).toEqual({ done: 1, already: 1, confirmed: 1, blocked: 1, failed: 0, unknown: 0, skipped: 1, overwritten: 0 });
    const failed = applyText(
      report([
        { status: "failed", outcome: "refused" },
        { status: "failed", outcome: "blocked" },
        { status: "failed", outcome: "unknown" },
        { status: "failed", outcome: "overwritten", action: "update" },
      ]),
      plainPaint,
    );
    expect(failed).toContain("failed  approve  ssp/P0: m0");
    expect(failed).toContain("unknown approve  ssp/P2: m2");
    expect(failed).toContain("overwritten update   ssp/P3: m3");
    expect(failed).toContain("Apply finished with failures: 0 done, 1 blocked, 1 failed, 1 unknown, 0 skipped, 1 overwritten.");
    expect(failed).toContain("Someone else's write undid a write of this apply right after it");
  });
});
