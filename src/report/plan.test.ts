import { describe, expect, it } from "vitest";
import type { Change, DriftItem, DriftReport, Plan } from "../plan/model.js";
import { changeOf, planOf } from "../testing/builders.js";
import { sspCreateBody } from "../testing/helpers.js";
import type { AllocationImpact, ImpactEntry } from "../policy-test/run.js";
import { countOutcomes, outcomeOf, type ApplyReport } from "../apply/run.js";
import { MARKDOWN_LIMIT } from "./budget.js";
import { htmlCode } from "./escape.js";
import { applyText, driftMarkdown, driftSummaryLine, planMarkdown, planText, summaryLine } from "./plan.js";

const plan = (changes: Change[]): Plan => planOf(changes);

const create = (i: number): Change => ({
  address: `ssp/Policy ${i}`,
  action: "create",
  before: null,
  after: {},
  diff: Array.from({ length: 12 }, (_, k) => ({ path: `field_${k}`, kind: "added" as const, after: `value ${k} of a long policy field ${i}` })),
  version_id: null,
  last_modified_on: null,
});

/** A create as plan makes one from a policy file: every field of the new policy, one row each. */
const realisticCreate = (i: number): Change => {
  const after = sspCreateBody(`Generated Bundle Item ${i} SSP`, {
    hierarchy_no: 1000 + i,
    transaction_above_range: "Cap at ceiling",
    transaction_below_range: "Raise to floor",
    transaction_mid_range: "Use transaction price",
    when: [
      { field_name: "product_family", operator: "equality", value: "Bundles" },
      { field_name: "product_name", operator: "equality", value: `Item ${i}` },
    ],
  }).compliance_spec[0] as Record<string, unknown>;
  return changeOf("create", `ssp/Generated Bundle Item ${i} SSP`, {
    after,
    diff: Object.entries(after).map(([path, v]) => ({ path, kind: "added" as const, after: v })),
    source: `policies/gen/generated.yaml:${4 + 19 * i}`,
  });
};

describe("markdown plan", () => {
  it("starts with the hidden marker and names the environment", () => {
    const md = planMarkdown(plan([create(1)]));
    expect(md.split("\n")[0]).toBe("<!-- revsync-plan:production -->");
    expect(md).toContain("### revsync plan for `production`");
    expect(md).toContain("| + create | 1 |");
  });

  it("never passes 60,000 characters: 1,000 changes are each listed, the first in full and the rest one line each", () => {
    const md = planMarkdown(plan(Array.from({ length: 1000 }, (_, i) => create(i))), "plan-production.json");
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    const full = md.match(/<details>/g)?.length ?? 0;
    expect(full).toBeGreaterThan(5);
    for (let i = 0; i < full; i++) expect(md).toContain(`<code>ssp/Policy ${i}</code></summary>`);
    for (let i = full; i < 1000; i++) expect(md).toContain(`\n- \`+\` create ${htmlCode(`ssp/Policy ${i}`)}\n`);
    expect(md).toContain(`#### The other ${1000 - full} changes, one line each\n`);
    expect(md).toContain(
      `_In full, the changes would pass the comment's 60,000 characters: the first ${full} are in full above, every change in full is in plan-production.json._`,
    );
    expect(md.trimEnd().endsWith("Plan: 1000 to create.")).toBe(true);
  });

  it("past one line each, a change is listed without its reason; only past that does it count the ones it cannot list", () => {
    const why = "the service's values differ from git's in many rows, so revsync will not move this batch to approved ".repeat(3);
    const many = (n: number, name: string) => Array.from({ length: n }, (_, i) => changeOf("blocked", `ssp/${name} ${i}/batch/FY26`, { reason: why }));
    const bare = planMarkdown(plan(many(600, "Blocked policy")));
    expect(bare.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    const full = bare.match(/<details>/g)?.length ?? 0;
    expect(bare).toContain(`#### The other ${600 - full} changes, one line each, without their reasons\n`);
    expect(bare).toContain("every change in full is in the JSON plan (`revsync plan --format json`)._");
    for (let i = full; i < 600; i++) expect(bare).toContain(`\n- \`x\` ${htmlCode(`ssp/Blocked policy ${i}/batch/FY26`)}\n`);
    const cut = planMarkdown(plan(many(3000, "A policy with a rather long name to fill the comment")));
    expect(cut.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(cut).toContain("#### Changes, one line each, without their reasons\n");
    const listed = cut.match(/^- `x`/gm)?.length ?? 0;
    expect(listed).toBeGreaterThan(500);
    expect(cut).toContain(
      `_${3000 - listed} more changes not listed: even one line each, the changes pass the comment's 60,000 characters. Every change is in the JSON plan (\`revsync plan --format json\`)._`,
    );
  });

  it("500 creates, 1,000 changed cases and 2,000 contracts: one comment under 60,000 characters that lists every change first, each impact section cut to its share and saying where the whole is", () => {
    const changes = Array.from({ length: 500 }, (_, i) => realisticCreate(i));
    const cases: ImpactEntry[] = Array.from({ length: 1000 }, (_, i) => ({
      name: `Bundle item ${i % 500} order line number ${i}`,
      file: "policy-tests/gen.yaml",
      line: 5 + 3 * i,
      before: { policy: null, ssp: null },
      after: { policy: `Generated Bundle Item ${i % 500} SSP`, ssp: 900 },
    }));
    const allocation: AllocationImpact[] = Array.from({ length: 2000 }, (_, i) => ({
      contract: `Bundle contract number ${i}`,
      file: "policy-tests/gen.yaml",
      line: 3000 + 7 * i,
      currency: "USD",
      before_status: "not carved",
      after_status: "allocated",
      lines: [
        {
          id: "appliance",
          before: { policy: "Hardware SSP", ssp: null, basis: null, allocated: 800 },
          after: { policy: "Hardware SSP", ssp: 1030, basis: 900, allocated: 363.77 },
          shift: -436.23,
        },
        {
          id: "item",
          before: { policy: null, ssp: null, basis: null, allocated: 500 },
          after: { policy: `Generated Bundle Item ${i % 500} SSP`, ssp: 2659.5, basis: 2659.5, allocated: 936.23 },
          shift: 436.23,
        },
      ],
      moved: 436.23,
    }));
    const p = { ...plan(changes), impact: { cases, allocation, moved: { USD: 872_460 } } };
    // Before each section had a budget, this plan made 114,701 characters and left out all 500 changes.
    const md = planMarkdown(p, "plan-production.json");
    expect(md.length).toBeLessThan(MARKDOWN_LIMIT);
    for (let i = 0; i < 500; i++) expect(md).toMatch(new RegExp(`<code>ssp/Generated Bundle Item ${i} SSP</code>|\`ssp/Generated Bundle Item ${i} SSP\``));
    // The changes first, then the impact, then the summary.
    const at = (s: string) => md.indexOf(s);
    expect(at("ssp/Generated Bundle Item 499 SSP")).toBeLessThan(at("#### Impact: 1000 policy test cases change"));
    expect(at("#### Impact: 1000 policy test cases change")).toBeLessThan(at("#### Allocation impact: 2000 contracts' allocations change"));
    expect(md.trimEnd().endsWith("Plan: 500 to create.")).toBe(true);
    const cases_ = md.match(/^\| Bundle item /gm)?.length ?? 0;
    expect(cases_).toBeGreaterThan(50);
    expect(md).toContain(
      `_${1000 - cases_} more cases not shown here (this table's share of the comment is full): every case is in plan-production.json (impact.cases)._`,
    );
    const contracts = md.match(/^\*\*Bundle contract number \d+\*\*/gm)?.length ?? 0;
    expect(contracts).toBeGreaterThan(20);
    expect(md).toContain(
      `_${2000 - contracts} more contracts not shown here (the contracts' share of the comment is full): every contract is in plan-production.json (impact.allocation)._`,
    );
    expect(md.match(/```mermaid/g)?.length).toBe(3);
  });

  it("the impact gives way when the changes need the whole comment", () => {
    const changes = Array.from({ length: 2500 }, (_, i) => changeOf("create", `ssp/A policy named at some length, number ${i}`));
    const cases: ImpactEntry[] = [{ name: "A case", file: "tests/a.yaml", line: 3, before: { policy: null, ssp: null }, after: { policy: "P", ssp: 1 } }];
    const md = planMarkdown({ ...plan(changes), impact: { cases, allocation: [], moved: {} } }, "plan-production.json");
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md).not.toContain("| A case |");
    expect(md).toContain(
      "_Not shown: the changes fill the comment. What the plan does to the policy test cases and contracts is in plan-production.json (impact)._",
    );
  });

  it("long names full of escaped characters never cost a change its line: each address is cut to its line's share, ending in …, and the list says where it is whole", () => {
    // Two policies the service names with 9,000 `<` each (36,000 characters of markdown escaped: `&lt;`)
    // and one real change: before, the comment listed one of the three.
    const evil = [0, 1].map((i) =>
      changeOf("not_in_git", `ssp/${"<".repeat(9000)}${i}`, { reason: "the service holds this SSP policy and git has no file for it" }),
    );
    const md = planMarkdown(plan([...evil, create(1)]), "plan-production.json");
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md).not.toContain("not listed");
    expect(md).toContain("<code>ssp/Policy 1</code>");
    // Each of the three is listed: the first in full (it fits with one line each for the rest), the others
    // one line each, the long one cut.
    expect(md.match(/<details>/g)).toHaveLength(1);
    expect(md).toContain(`<summary><code>?</code> <b>not in git</b> <code>ssp/${"&lt;".repeat(9000)}0</code></summary>`);
    const cut = md.match(/<code>ssp\/(?:&lt;)+…<\/code>/g) ?? [];
    expect(cut).toHaveLength(1);
    for (const c of cut) expect(c.length).toBeLessThanOrEqual("<code></code>".length + 240);
    expect(md).toContain("_A name or reason too long for its line is cut short, ending in …: each is whole in plan-production.json._");
    // Escaping stays whole: no character reference is cut in two.
    expect(md).not.toMatch(/&(?:l|lt)?…/);

    // As many changes as the comment holds lines for, whatever their names: 1,000 names of 300 `|` (a
    // character reference each, 1,500 characters escaped) are each listed, cut as far as they must be.
    const many = Array.from({ length: 1000 }, (_, i) => changeOf("create", `ssp/${i} ${"|".repeat(300)}`));
    const all = planMarkdown(plan(many));
    expect(all.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(all).not.toContain("not listed");
    for (let i = 0; i < 1000; i++) expect(all).toContain(`<code>ssp/${i} &#124;`);
    expect(all).toContain("#### Changes, one line each, without their reasons\n");
    expect(all).toContain("each is whole in the JSON plan (`revsync plan --format json`)._");
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
    expect(text).toMatch(/Plan: 1 to approve; 1 blocked, 1 not in git \(shown with their reasons, not applied\)\.$/);
  });

  it("the summary line counts the actions that occur, in the order apply makes them: a tenant update alone says nothing of reviews", () => {
    expect(summaryLine(planOf([changeOf("update", "tenant-configuration/Default")]))).toBe("Plan: 1 to update.");
    const mixed = planOf([changeOf("approve", "ssp/A/batch/B"), changeOf("create", "ssp/C"), changeOf("unsupported", "ssp/D", { reason: "r" })]);
    expect(summaryLine(mixed)).toBe("Plan: 1 to create, 1 to approve; 1 unsupported (shown with the reason, not applied).");
  });

  it("a plan of only entries apply does not act on never says No changes, in text or markdown", () => {
    const p = plan([notInGit]);
    const text = planText(p, plain);
    expect(text).not.toContain("No changes");
    expect(text.split("\n")[0]).toBe(
      'Nothing for revsync to apply in environment "production" (https://api.example.com, realm acme), but the service and git differ:',
    );
    expect(summaryLine(p)).toBe("Plan: nothing to apply; 1 not in git (shown with the reason, not applied).");
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

describe("drift in markdown", () => {
  const item = (i: number, fields: number): DriftItem => ({
    address: `ssp/Drifted policy ${i}/batch/FY26-Q1`,
    class: "batch_values",
    message: "the service's values differ from git's",
    modified_by: "alice",
    modified_on: "2026-11-20T10:00:00.000Z",
    diff: Array.from({ length: fields }, (_, k) => ({
      path: `values[SW-${k}|USD|2026-01-01].mid_point`,
      kind: "changed" as const,
      before: 100 + k,
      after: 105 + k,
    })),
    diff_rows: { shown: fields, total: fields + 7 },
  });
  const report = (drift: DriftItem[], ignored: DriftReport["ignored"] = []): DriftReport => ({
    format_version: "1",
    environment: "production",
    created_at: "2026-11-21T00:00:00.000Z",
    drift,
    summary: { changed: 0, unmanaged: 0, unmanaged_batch: 0, missing: 0, batch_status: 0, batch_values: drift.length, duplicate: 0 },
    ignored,
  });

  it("never passes 60,000 characters: every drifted resource has its row, its fields while they fit, the accepted drift its own share", () => {
    const ignored = Array.from({ length: 400 }, (_, i) => ({
      ...item(10_000 + i, 1),
      reason: "a known difference, accepted until the next release",
      rule: "r",
    }));
    const md = driftMarkdown(
      report(
        Array.from({ length: 300 }, (_, i) => item(i, 10)),
        ignored,
      ),
    );
    expect(md.length).toBeLessThan(MARKDOWN_LIMIT);
    for (let i = 0; i < 300; i++)
      expect(md).toMatch(
        new RegExp(
          `^\\| batch_values \\| (?:<code>|\`)ssp/Drifted policy ${i}/batch/FY26-Q1(?:</code>|\`) \\| the service's values differ from git's \\| by alice at 2026-11-20T10:00:00Z \\|`,
          "m",
        ),
      );
    const withFields = new Set(md.match(/^\| batch_values \| `ssp\/Drifted policy \d+\/batch\/FY26-Q1` .* \| `values\[SW-0/gm)).size;
    expect(withFields).toBeGreaterThan(1);
    expect(md).toContain("| by alice at 2026-11-20T10:00:00Z | 17 fields differ | | |");
    expect(md).toContain(
      `_With every field that differs, the drift would pass the comment's 60,000 characters: the first ${withFields} are shown with their fields, the rest in one row. Every field is in the JSON report (\`revsync drift --format json\`)._`,
    );
    const accepted = md.match(/^\| batch_values \| (?:<code>|`)ssp\/Drifted policy 1\d{4}\//gm)?.length ?? 0;
    expect(accepted).toBeGreaterThan(10);
    expect(md).toContain(
      `_${400 - accepted} more accepted differences not shown here: every one is in the JSON report (\`revsync drift --format json\`) (ignored)._`,
    );
    expect(md.trimEnd().endsWith("Drift: 300 batches' values; 400 ignored (accepted).")).toBe(true);
  });

  it("long names full of escaped characters never cost a drifted resource its row: 800 policies named with 400 `<` each are each listed, cut", () => {
    const drift = Array.from({ length: 800 }, (_, i) => ({ ...item(i, 0), address: `ssp/${i} ${"<".repeat(400)}`, class: "unmanaged" as const }));
    const md = driftMarkdown({ ...report(drift), summary: { ...report([]).summary, unmanaged: 800 } });
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md).not.toContain("not listed");
    for (let i = 0; i < 800; i++) expect(md).toMatch(new RegExp(`^\\| unmanaged \\| (?:<code>ssp/${i} (&lt;)*…</code>|\`ssp/${i} <{400}\`) \\|`, "m"));
    expect(md).toContain(
      "_A name or reason too long for its line is cut short, ending in …: each is whole in the JSON report (`revsync drift --format json`)._",
    );
  });
});

describe("drift's closing line", () => {
  it("counts each class in correct plurals", () => {
    const report = {
      format_version: "1",
      environment: "production",
      created_at: "2026-11-21T00:00:00.000Z",
      drift: [],
      summary: { changed: 1, unmanaged: 2, unmanaged_batch: 2, missing: 0, batch_status: 4, batch_values: 1, duplicate: 0 },
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
    expect(r.summary).toEqual({ done: 1, already: 1, confirmed: 1, blocked: 1, failed: 0, unknown: 0, skipped: 1, overwritten: 0, breached: 0 });
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
    expect(failed).toContain("Someone else's write met a write of this apply (named above)");
  });
});
