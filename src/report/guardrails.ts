/** A plan's guardrails as the reports show them: at the top of the text and of the pull request's
 *  comment ("Guardrails"), each freeze window in force (and when it ends), each write a rule holds back,
 *  warns of, excepts or lets pass by approval or override, and whether apply would refuse the plan. Names,
 *  conditions, reasons and addresses come from revsync.yaml and the service: each goes through the escape
 *  of its report. */
import type { Change, Plan, PlanGuardrails } from "../plan/model.js";
import type { GuardrailTestResult } from "../guardrails/tests.js";
import type { GuardrailOutcome } from "../shared/facts.js";
import { plural } from "../words.js";
import { fitPieces, SECTION_BUDGET } from "./budget.js";
import { markdownCode, markdownText as md, terminalText as t } from "./escape.js";
import type { Painter } from "./painter.js";

/** How an outcome is named in a report. */
const WORDS: Record<GuardrailOutcome["outcome"], string> = {
  pass: "pass",
  deny: "deny",
  warn: "warn",
  approval_needed: "needs approval",
  approved: "approved",
  overridden: "overridden",
  excepted: "excepted",
  error: "error",
};

const COLOR: Record<GuardrailOutcome["outcome"], "red" | "yellow" | "green" | "dim"> = {
  pass: "dim",
  deny: "red",
  warn: "yellow",
  approval_needed: "red",
  approved: "green",
  overridden: "yellow",
  excepted: "yellow",
  error: "red",
};

/** Every outcome but pass, with its change. */
function shownOutcomes(plan: Pick<Plan, "changes">): { c: Change; o: GuardrailOutcome }[] {
  return plan.changes.flatMap((c) => (c.guardrails ?? []).filter((o) => o.outcome !== "pass").map((o) => ({ c, o })));
}

/** What the judgement comes to, in one sentence. */
function verdict(g: PlanGuardrails, passing: number): string {
  if (g.held_back.length) return `Apply would refuse this plan: ${plural(g.held_back.length, "thing holds", "things hold")} it back (above).`;
  const open = g.freeze.filter((w) => w.in_force).length;
  return `Apply would not be held back by ${plural(g.rules.length, "rule")} and ${plural(g.freeze.length, "freeze window")}${open ? " (a window in force is overridden)" : ""}${passing ? `; ${plural(passing, "rule")} matched nothing or passed` : ""}.`;
}

const windowLine = (w: PlanGuardrails["freeze"][number]): string =>
  w.in_force
    ? `freeze ${w.name}: in force until ${w.until_local} (${w.what})${w.overridden ? `; overridden by ${w.overridden.by}: ${w.overridden.reason}` : ""}${w.override_by && !w.overridden ? `; override_by ${w.override_by.join(", ")}` : ""}`
    : `freeze ${w.name}: not in force${w.from_local ? `; next from ${w.from_local} to ${w.until_local}` : ""} (${w.what})`;

/** How many rules no change came to anything but pass for. */
const passingRules = (plan: Plan, g: PlanGuardrails): number => {
  const shown = new Set(shownOutcomes(plan).map((x) => x.o.rule));
  return g.rules.filter((r) => !shown.has(r.name)).length;
};

/** The guardrails at the top of the plan's text (none without guardrails). */
export function guardrailsText(plan: Plan, out: Painter): string[] {
  const g = plan.guardrails;
  if (!g) return [];
  const lines = [out.paint("bold", `Guardrails (judged ${g.evaluated_at.replace(/\.\d{3}Z$/, "Z")}; apply judges them again):`)];
  for (const w of g.freeze) lines.push(`  ${out.paint(w.in_force && !w.overridden ? "red" : "dim", t(windowLine(w)))}`);
  for (const { c, o } of shownOutcomes(plan))
    lines.push(`  ${out.paint(COLOR[o.outcome], WORDS[o.outcome].padEnd(14))} ${t(o.rule)}: ${t(c.address)} (${c.action}): ${t(o.message)}`);
  for (const h of g.held_back.filter((x) => x.startsWith("freeze"))) lines.push(`  ${out.paint("red", "held back")}     ${t(h)}`);
  lines.push(`  ${t(verdict(g, passingRules(plan, g)))}`, "");
  return lines;
}

/** A change's own outcomes, under it in the text (pass left out). */
export function changeGuardrailLines(c: Change, out: Painter): string[] {
  return (c.guardrails ?? [])
    .filter((o) => o.outcome !== "pass")
    .map((o) => `      ${out.paint(COLOR[o.outcome], `guardrail ${WORDS[o.outcome]}`)}: ${t(o.rule)}: ${t(o.message)}`);
}

/** The "Guardrails" section at the top of the pull request's comment, within its budget. */
export function guardrailsMarkdown(plan: Plan, whole: string): string {
  const g = plan.guardrails;
  if (!g) return "";
  const head = [`#### Guardrails`, "", `_Judged ${md(g.evaluated_at.replace(/\.\d{3}Z$/, "Z"))}; apply judges them again._`, ""];
  const lead = g.held_back.length ? `> **${md(verdict(g, 0).replace(" (above)", ""))}**` : `> ${md(verdict(g, passingRules(plan, g)))}`;
  const rows = [
    ...g.freeze.map(
      (w) =>
        `| ${markdownCode(w.name, { cell: true })} | freeze | ${w.in_force ? (w.overridden ? "**overridden**" : "**in force**") : "not in force"} | | ${md(windowLine(w).replace(/^freeze [^:]*: /, ""))} |\n`,
    ),
    ...shownOutcomes(plan).map(
      ({ c, o }) =>
        `| ${markdownCode(o.rule, { cell: true })} | ${o.effect.replace("_", " ")} | **${WORDS[o.outcome]}** | ${markdownCode(c.address, { cell: true })} (${c.action}) | ${md(o.message)} |\n`,
    ),
  ];
  const table = rows.length
    ? [
        "| Rule or window | Effect | Outcome | Change | Why |",
        "|---|---|---|---|---|",
        fitPieces(rows, SECTION_BUDGET.guardrails, (n) => `\n_${plural(n, "more outcome")} in ${whole} (guardrails)._\n`).text,
      ]
    : [];
  return [...head, lead, "", ...table, ""].join("\n");
}

/** revsync test's guardrail tests in text: each that fails or could not be judged, then the count ("" for none). */
export function guardrailTestText(results: readonly GuardrailTestResult[], out: Painter): string {
  if (!results.length) return "";
  const lines: string[] = [];
  for (const r of results) {
    if (r.pass) continue;
    lines.push(`${out.paint("red", r.error ? "ERROR" : "FAIL")} ${out.paint("bold", `${t(r.test.file)}:${r.test.line}`)} ${t(r.test.name)}`);
    for (const f of r.error ? [r.error] : r.failures) lines.push(`      ${t(f)}`);
  }
  const bad = results.filter((r) => !r.pass).length;
  if (bad) lines.push("");
  lines.push(
    `${bad ? out.paint("red", "Guardrail tests failed") : out.paint("green", "Guardrail tests passed")}: ${results.length - bad} passed, ${bad} failed.`,
  );
  return lines.join("\n");
}

/** One guardrail test in revsync test's JSON. */
export const guardrailTestJson = (r: GuardrailTestResult): object => ({
  name: r.test.name,
  file: r.test.file,
  line: r.test.line,
  pass: r.pass,
  ...(r.failures.length ? { failures: r.failures } : {}),
  ...(r.error ? { error: r.error } : {}),
});
