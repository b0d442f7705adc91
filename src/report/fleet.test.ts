import { describe, expect, it } from "vitest";
import { driftOutcome, failedOutcome, planOutcome, testOutcome, type EnvOutcome } from "../fleet/outcome.js";
import type { Change, Plan } from "../plan/model.js";
import { changeOf, planOf } from "../testing/builders.js";
import { elementsOf, renderGfm } from "../testing/gfm.js";
import { MARKDOWN_LIMIT } from "./budget.js";
import { fleetJson, fleetMarkdown, summaryText } from "./fleet.js";
import { planMarkdown } from "./plan.js";

const PLAIN = { paint: (_c: string, s: string) => s };

const creates = (n: number, env: string): Change[] =>
  Array.from({ length: n }, (_, i) =>
    changeOf("create", `ssp/${env} policy ${i}`, {
      diff: Array.from({ length: 8 }, (_, k) => ({ path: `field_${k}`, kind: "added" as const, after: `value ${k} of policy ${i}` })),
    }),
  );
const planIn = (environment: string, changes: Change[]): Plan => ({ ...planOf(changes), environment });
const whole = (o: EnvOutcome): string => `plans/${o.environment}.plan.json`;

describe("a fleet's summary in markdown", () => {
  it("fits the comment whatever the fleet holds, lists every environment with failures first, and gives each one with changes a section", () => {
    const outcomes: EnvOutcome[] = [];
    for (let i = 0; i < 40; i++) {
      const name = `tenant-${String(i).padStart(2, "0")}`;
      if (i === 7) outcomes.push(failedOutcome(name, "plan", new Error("connection refused by 127.0.0.1:9: nothing listens there")));
      else outcomes.push(planOutcome(planIn(name, i % 3 ? [] : creates(i === 3 ? 400 : 2, name))));
    }
    const md = fleetMarkdown(outcomes, whole);
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md.startsWith("<!-- revsync-fleet:plan -->\n### revsync plan across 40 environments\n")).toBe(true);
    const html = renderGfm(md);
    const rows = elementsOf(elementsOf(html, "tbody")[0] ?? "", "tr");
    expect(rows).toHaveLength(40);
    expect(rows[0]).toContain("tenant-07");
    expect(rows[0]).toContain("<strong>failed</strong>");
    expect(rows[1]).toContain("tenant-00");
    // Each environment with changes has its section; the small ones whole, as their own markdown says them.
    const summaries = elementsOf(html, "summary");
    expect(summaries.filter((s) => /tenant-\d\d<\/code>: changes/.test(s))).toHaveLength(14);
    expect(md).toContain(planMarkdown(planIn("tenant-06", creates(2, "tenant-06")), "plans/tenant-06.plan.json").replace(/^<!--[^\n]*\n/, ""));
    // The large one is fitted to what the others leave, and says where it is whole.
    expect(md).toContain("plans/tenant-03.plan.json");
    expect(md).not.toContain("<!-- revsync-plan:");
  });

  it("a failure's section holds what its row cannot (a hint, the file problems); drift and test results in their own words", () => {
    const policy = Object.assign(new Error("the policy repo has errors"), {});
    const failed = { ...failedOutcome("eu", "drift", policy), error: { kind: "policy", message: "the policy repo has errors", hint: "run revsync validate" } };
    const outcomes = [
      driftOutcome({ format_version: "1", environment: "us", created_at: "", drift: [], summary: {} as never }),
      failed,
      driftOutcome({
        format_version: "1",
        environment: "apac",
        created_at: "",
        drift: [{ address: "ssp/A", class: "unmanaged", message: "in the service, not in git", diff: [] }],
        summary: { changed: 0, unmanaged: 1, unmanaged_batch: 0, missing: 0, batch_status: 0, batch_values: 0, duplicate: 0 },
      }),
    ];
    const html = renderGfm(fleetMarkdown(outcomes, () => "drift.json"));
    expect(elementsOf(html, "summary")).toEqual(["<code>eu</code>: failed, the policy repo has errors", "<code>apac</code>: drift, 1 unmanaged"]);
    expect(html).toContain("Hint: run revsync validate");
    const text = summaryText(outcomes, PLAIN);
    expect(text.split("\n")).toEqual([
      "Summary of revsync drift across 3 environments: 1 failed, 1 drifted, 1 without drift.",
      "  eu    failed    the policy repo has errors",
      "  apac  drift     1 unmanaged",
      "  us    no drift",
    ]);
    const tests = testOutcome("eu", {
      source: "the service's policies in eu",
      summary: { passed: 1, failed: 1 },
      cases: [{ name: "a <b> line", file: "tests/a.yaml", line: 4, pass: false, why: ["met Hardware SSP"] }],
    });
    const t = renderGfm(fleetMarkdown([tests], () => "t.json"));
    expect(t).toContain("<code>a &lt;b&gt; line</code> (tests/a.yaml:4): met Hardware SSP");
  });

  it("JSON: each environment's report with its environment, command and outcome beside it, then the counts", () => {
    const json = fleetJson([planOutcome(planIn("a", [])), failedOutcome("b", "plan", new Error("refused"))]) as {
      command: string;
      environments: Record<string, unknown>[];
      summary: object;
    };
    expect(json.command).toBe("plan");
    expect(json.environments[0]).toMatchObject({ environment: "a", command: "plan", status: "clean", changes: [], checksum: "sha256:0" });
    expect(json.environments[1]).toEqual({ environment: "b", command: "plan", status: "failed", error: { kind: "internal", message: "refused" } });
    expect(json.summary).toEqual({ environments: 2, failed: 1, changes: 0, clean: 1 });
  });
});
