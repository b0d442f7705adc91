/** A fleet's summary: every environment's outcome, failures first, in text, markdown and JSON, the same
 *  whether the environments ran in this process (plan, drift, test --live with --all-envs or --envs) or
 *  were read from a CI matrix's outputs (revsync summary). */
import { byConcern, countOutcomes, type EnvOutcome, type FleetCommand, type TestReport } from "../fleet/outcome.js";
import { actionWords, ACTIONS, APPLIED_ACTIONS, impactOf, isApplied } from "../plan/model.js";
import { plural } from "../words.js";
import { fitPieces, fitTiers, MARKDOWN_LIMIT } from "./budget.js";
import { htmlCode, markdownCode, markdownText as md, terminalText as t } from "./escape.js";
import type { Painter } from "./painter.js";
import { driftMarkdown, driftSummaryLine, driftText, markdownCut, planMarkdown, planText } from "./plan.js";
import { planImpactText, testFailures, testResultsMarkdown } from "./policy-test.js";
import { table } from "./table.js";

/** How an environment's outcome is named in a summary's row. */
export function outcomeLabel(o: EnvOutcome): string {
  if (o.error) return "failed";
  if (o.command === "test") return o.status === "failed" ? "tests failed" : "passed";
  if (o.command === "drift") return o.status === "changes" ? "drift" : "no drift";
  if (o.status === "changes") return "changes";
  return o.plan?.changes.length ? "nothing to apply" : "no changes";
}

/** What an environment came to, in a few words (empty when its label says it all). */
export function outcomeWords(o: EnvOutcome): string {
  if (o.error) return firstLine(String(o.error.message ?? ""));
  if (o.test) return `${o.test.summary.passed} passed, ${o.test.summary.failed} failed`;
  if (o.drift) {
    const ignored = o.drift.ignored?.length ? `${o.drift.ignored.length} ignored (accepted)` : "";
    return o.drift.drift.length
      ? driftSummaryLine(o.drift)
          .replace(/^Drift: /, "")
          .replace(/\.$/, "")
      : ignored;
  }
  const s = o.plan?.summary;
  if (!s) return "";
  const parts = ACTIONS.filter((a) => s[a]).map((a) => `${s[a]} ${APPLIED_ACTIONS.includes(a) ? "to " : ""}${actionWords(a)}`);
  return o.plan?.changes.some(isApplied) || !parts.length ? parts.join(", ") : `${parts.join(", ")} (not applied)`;
}

const firstLine = (s: string): string => s.split("\n")[0] ?? "";

const COMMAND_WORDS: Record<FleetCommand, { title: string; changes: string; clean: string }> = {
  plan: { title: "revsync plan", changes: "with changes", clean: "with nothing to apply" },
  drift: { title: "revsync drift", changes: "drifted", clean: "without drift" },
  test: { title: "revsync test --live", changes: "with changes", clean: "passed" },
};

const commandsOf = (outcomes: readonly EnvOutcome[]): FleetCommand[] => [...new Set(outcomes.map((o) => o.command))];

/** "revsync drift across 12 environments": what ran, and over how many. */
export function fleetTitle(outcomes: readonly EnvOutcome[]): string {
  const commands = commandsOf(outcomes);
  const what = commands.length === 1 ? COMMAND_WORDS[commands[0] as FleetCommand].title : `revsync ${commands.join(" and ")}`;
  const names = new Set(outcomes.map((o) => o.environment ?? `\u0000${o.source ?? ""}`));
  return `${what} across ${plural(names.size, "environment")}`;
}

/** "1 failed, 3 drifted, 8 without drift": the counts, in the command's words. */
export function countsLine(outcomes: readonly EnvOutcome[]): string {
  const c = countOutcomes(outcomes);
  const commands = commandsOf(outcomes);
  const words = commands.length === 1 ? COMMAND_WORDS[commands[0] as FleetCommand] : { changes: "with changes or drift", clean: "with neither" };
  return [`${c.failed} failed`, ...(c.changes ? [`${c.changes} ${words.changes}`] : []), `${c.clean} ${words.clean}`].join(", ");
}

// ---- text

/** One environment's report in text, as its own command prints it; a failed one, its error. */
export function environmentText(o: EnvOutcome, out: Painter): string {
  if (o.plan) {
    const impact = planImpactText(impactOf(o.plan));
    return planText(o.plan, out) + (impact ? `\n\n${impact}` : "");
  }
  if (o.drift) return driftText(o.drift, out);
  if (o.test) return testText(o, o.test, out);
  const e = o.error ?? {};
  const lines = [`${out.paint("red", "Failed:")} environment ${envName(o)}: ${String(e.message ?? "")}`];
  if (typeof e.hint === "string") lines.push(`  Hint: ${e.hint}`);
  for (const d of diagnosticsOf(e)) lines.push(`  ${d}`);
  return lines.join("\n");
}

const envName = (o: EnvOutcome): string => (o.environment === null ? `(not named; ${t(o.source ?? "")})` : JSON.stringify(o.environment));

/** A failed run's file problems, one line each, as revsync prints them. */
function diagnosticsOf(e: Record<string, unknown>): string[] {
  if (!Array.isArray(e.diagnostics)) return [];
  return e.diagnostics.map(
    (d: Record<string, unknown>) => `${String(d.file)}:${String(d.line)}:${String(d.column)}: ${String(d.severity)}: ${String(d.message)}`,
  );
}

function testText(o: EnvOutcome, test: TestReport, out: Painter): string {
  const head =
    test.summary.failed > 0
      ? out.paint("red", `Policy tests failed in environment ${envName(o)}`)
      : out.paint("green", `Policy tests passed in environment ${envName(o)}`);
  const fails = testFailures(test).map((f) => `${out.paint("red", "FAIL")} ${t(f.where)} ${t(f.name)}${f.why ? `\n      why: ${t(f.why)}` : ""}`);
  return [`${head}: ${test.summary.passed} passed, ${test.summary.failed} failed (against ${t(test.source)}).`, ...fails].join("\n");
}

/** The summary at the end of the text report: the counts, then each environment, failures first. */
export function summaryText(outcomes: readonly EnvOutcome[], out: Painter): string {
  const c = countOutcomes(outcomes);
  const head = `Summary of ${fleetTitle(outcomes)}: ${countsLine(outcomes)}.`;
  const rows = byConcern(outcomes).map((o) => [o.environment ?? `(not named: ${o.source ?? ""})`, outcomeLabel(o), outcomeWords(o)]);
  const painted = c.failed ? out.paint("red", head) : c.changes ? out.paint("yellow", head) : out.paint("green", head);
  return `${painted}\n${table(rows)
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n")}`;
}

// ---- markdown

/** The longest an environment's name, and a row's words, may be in the summary's table. */
const ROW_NAME = 120;
const ROW_WORDS = 200;
const TITLE_WORDS = 100;
/** An environment's section below the table is left out when its share is smaller than this. */
const LEAST_SECTION = 240;

/** The hidden marker of a fleet's comment or issue, so a CI updates it in place: one per command. */
export const fleetMarker = (outcomes: readonly EnvOutcome[]): string => `<!-- revsync-fleet:${commandsOf(outcomes).join("+")} -->`;

/** The summary in markdown, for a pull request's comment or a drift issue: never over MARKDOWN_LIMIT
 *  characters. The table lists every environment first, failures first (one short row each when the
 *  table would not fit otherwise); below it, each environment that failed or has changes gets a section
 *  of its own, as its own command's markdown, in an equal share of what is left (one that needs less
 *  leaves the rest to the others), else in one line saying where it is whole. `whole(o)`: where an
 *  environment's report is whole (its file, or the command that gives it). */
export function fleetMarkdown(outcomes: readonly EnvOutcome[], whole: (o: EnvOutcome) => string): string {
  const mixed = commandsOf(outcomes).length > 1;
  const head = `${fleetMarker(outcomes)}\n### ${md(fleetTitle(outcomes))}\n\n${md(countsLine(outcomes))}.\n\n`;
  const ordered = byConcern(outcomes);
  const room = MARKDOWN_LIMIT - 1 - head.length;
  const tableText = summaryTable(ordered, room, mixed);
  const shown = ordered.filter((o) => o.status !== "clean" && !saidInTable(o));
  return head + tableText + sections(shown, room - tableText.length, whole, mixed);
}

function summaryTable(ordered: readonly EnvOutcome[], budget: number, mixed: boolean): string {
  const top = `| Environment | ${mixed ? "Command | " : ""}Outcome | What |\n|---|${mixed ? "---|" : ""}---|---|\n`;
  const name = (o: EnvOutcome): string =>
    o.environment === null ? `(not named) ${md(o.source ?? "")}` : markdownCut(o.environment, ROW_NAME, (x) => markdownCode(x, { cell: true })).md;
  const label = (o: EnvOutcome): string => `${mixed ? `${o.command} | ` : ""}${o.status === "failed" ? `**${outcomeLabel(o)}**` : outcomeLabel(o)}`;
  const full = ordered.map((o) => `| ${name(o)} | ${label(o)} | ${markdownCut(outcomeWords(o), ROW_WORDS).md} |\n`);
  const bare = ordered.map((o) => `| ${name(o)} | ${label(o)} | |\n`);
  const leftOut = (n: number): string => `\n_${plural(n, "more environment")} not listed: even one short row each, the table passes the comment's size._\n`;
  const fitted = fitTiers({ full, line: bare, bare }, budget - top.length - 1, () => "", leftOut);
  return `${top}${fitted.text}\n`;
}

/** A failure whose whole error is its row's words: no section repeats it. */
function saidInTable(o: EnvOutcome): boolean {
  const e = o.error;
  if (!e) return false;
  const message = String(e.message ?? "");
  return e.hint === undefined && !diagnosticsOf(e).length && !message.includes("\n") && message.length <= ROW_WORDS;
}

/** The sections below the table, in the table's order: each environment's share of `budget` is equal, and
 *  the smallest are given theirs first, so what one leaves goes to the others. */
function sections(shown: readonly EnvOutcome[], budget: number, whole: (o: EnvOutcome) => string, mixed: boolean): string {
  const full = shown.map((o) => section(o, whole(o), MARKDOWN_LIMIT, mixed));
  const chosen = new Array<string>(shown.length).fill("");
  let left = budget;
  const bySize = full.map((s, i) => [s.length, i] as const).sort((a, b) => a[0] - b[0]);
  for (const [k, [size, i]] of bySize.entries()) {
    const share = Math.floor(left / (bySize.length - k));
    const o = shown[i] as EnvOutcome;
    const text = size <= share ? (full[i] as string) : fitted(o, whole(o), share, mixed);
    chosen[i] = text;
    left -= text.length;
  }
  return chosen.join("");
}

/** An environment's section in `share` characters: its report fitted to what is left of the share once
 *  the section's frame is counted, else one line saying where it is whole, else nothing. */
function fitted(o: EnvOutcome, whole: string, share: number, mixed: boolean): string {
  if (share < LEAST_SECTION) return "";
  const frame = section(o, whole, 0, mixed, "").length;
  const body = section(o, whole, share - frame, mixed);
  if (body.length <= share) return body;
  const line = section(o, whole, 0, mixed, `_Not shown here: beside the other environments it would pass the comment's size. It is whole in ${md(whole)}._`);
  return line.length <= share ? line : "";
}

/** One environment's section: a details block holding its report as its own command writes it in
 *  markdown (its hidden marker left out), fitted to `max` characters, or `body` when given. */
function section(o: EnvOutcome, whole: string, max: number, mixed: boolean, body?: string): string {
  const words = outcomeWords(o);
  const title = `${o.environment === null ? "(not named)" : htmlCode(o.environment)}${mixed ? ` ${o.command}` : ""}: ${outcomeLabel(o)}${words ? `, ${md(markdownCut(firstLine(words), TITLE_WORDS, (x) => x).md)}` : ""}`;
  const text = body ?? reportMarkdown(o, whole, max);
  return `<details><summary>${title}</summary>\n\n${text}\n\n</details>\n\n`;
}

function reportMarkdown(o: EnvOutcome, whole: string, max: number): string {
  const unmarked = (s: string): string => s.replace(/^<!-- revsync-[^\n]*-->\n/, "");
  if (o.plan) return unmarked(planMarkdown(o.plan, whole, max));
  if (o.drift) return unmarked(driftMarkdown(o.drift, whole, max));
  if (o.test) return testResultsMarkdown(o.test, whole, max);
  const leftOut = (n: number): string => `_${plural(n, "more line")} in ${md(whole)}._\n`;
  const e = o.error ?? {};
  const said = `> ${md(String(e.message ?? ""))}${typeof e.hint === "string" ? `\n\nHint: ${md(e.hint)}` : ""}`;
  const lines = diagnosticsOf(e).map((d) => `- ${md(d)}\n`);
  return lines.length ? `${said}\n\n${fitPieces(lines, max - said.length - 2, leftOut).text}` : said;
}

// ---- JSON

/** The fleet as JSON: each environment's report as its own command's JSON writes it (a failed one, its
 *  error), with the environment, the command and the outcome beside it; then the counts. */
export function fleetJson(outcomes: readonly EnvOutcome[]): object {
  const commands = commandsOf(outcomes);
  return {
    ...(commands.length === 1 ? { command: commands[0] } : {}),
    environments: outcomes.map((o) => {
      const report = o.plan ?? o.drift ?? o.test ?? { error: o.error };
      return { ...report, environment: o.environment, command: o.command, status: o.status, ...(o.source === undefined ? {} : { file: o.source }) };
    }),
    summary: countOutcomes(outcomes),
  };
}
