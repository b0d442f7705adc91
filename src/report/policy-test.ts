import { showOutcome as side } from "../policy-test/evaluate.js";
import {
  impactLine,
  movedByCurrency,
  type AllocationImpact,
  type AllocationSide,
  type CaseResult,
  type ContractResult,
  type ImpactEntry,
} from "../policy-test/run.js";
import { money, signed, type AllocatedLine, type Allocation } from "../policy-test/allocate.js";
import type { Painter } from "./painter.js";
import type { PlanImpact } from "../plan/model.js";
import { errorObject, type FileProblem } from "../errors.js";
import { markdownCode, markdownText as md, mermaidLabel, terminalText as t } from "./escape.js";
import { junitXml, type JunitCase, type JunitSuite } from "./junit.js";
import { fitPieces, MARKDOWN_LIMIT, SECTION_BUDGET } from "./budget.js";
import type { TestReport } from "../fleet/outcome.js";
import { plural } from "../words.js";
import type { GuardrailTestResult } from "../guardrails/tests.js";
import { displayWidth, padDisplay } from "../display-width.js";

export function testText(results: CaseResult[], source: string, out: Painter, contracts: ContractResult[] = []): string {
  const failed = results.filter((r) => !r.pass);
  const lines: string[] = [];
  for (const r of contracts) lines.push(...contractText(r, out), "");
  for (const r of failed) {
    lines.push(`${out.paint("red", "FAIL")} ${out.paint("bold", `${t(r.case.file)}:${r.case.line}`)} ${t(r.case.name)}`);
    lines.push(`      expected: ${t(side(r.case.expect.policy, r.case.expect.ssp))}`);
    lines.push(`      got:      ${r.got.error ? "an error" : t(side(r.got.policy, r.case.expect.ssp === undefined ? undefined : r.got.ssp))}`);
    for (const w of r.why) lines.push(`      why:      ${t(w)}`);
  }
  if (failed.length) lines.push("");
  const bad = failed.length + contracts.filter((r) => !r.pass).length;
  const all = results.length + contracts.length;
  lines.push(
    `${bad ? out.paint("red", "Policy tests failed") : out.paint("green", "Policy tests passed")}: ${all - bad} passed, ${bad} failed (against ${source})${contractsSummary(contracts)}.`,
  );
  return lines.join("\n");
}

/** The results as JSON; `environment`, with --live: the environment whose service's policies they ran
 *  against (a summary of several environments' results names each by it). */
export function testJson(results: CaseResult[], source: string, contracts: ContractResult[] = [], environment?: string): object {
  return {
    format_version: "1",
    ...(environment === undefined ? {} : { environment }),
    source,
    summary: {
      passed: results.filter((r) => r.pass).length + contracts.filter((r) => r.pass).length,
      failed: results.filter((r) => !r.pass).length + contracts.filter((r) => !r.pass).length,
    },
    cases: results.map((r) => ({
      name: r.case.name,
      file: r.case.file,
      line: r.case.line,
      pass: r.pass,
      expected: r.case.expect,
      got: r.got,
      ...(r.pass ? {} : { why: r.why }),
    })),
    ...(contracts.length ? { contracts: contracts.map(contractJson) } : {}),
  };
}

const TITLE = "revsync policy tests";

/** A case that could not be evaluated (a value that cannot be compared, an expression with an unknown
 *  name) is a JUnit error; one whose outcome differs from what it expects, a failure. */
function junitCase(r: CaseResult): JunitCase {
  const c: JunitCase = { classname: r.case.file, name: r.case.name, where: { file: r.case.file, line: r.case.line }, seconds: r.seconds };
  if (r.pass) return c;
  const expected = `expected ${side(r.case.expect.policy, r.case.expect.ssp)}`;
  if (r.got.error) return { ...c, error: { message: `${expected}; could not be evaluated: ${r.got.error}`, text: r.why.join("\n") } };
  return { ...c, failure: { message: `${expected}; got ${side(r.got.policy, r.got.ssp)}`, text: r.why.join("\n") } };
}

/** A guardrail test: a failure when an expectation does not hold, an error when it could not be judged. */
function guardrailCase(r: GuardrailTestResult): JunitCase {
  const c: JunitCase = { classname: r.test.file, name: r.test.name, where: { file: r.test.file, line: r.test.line }, seconds: r.seconds };
  if (r.error) return { ...c, error: { message: `could not be judged: ${r.error}`, text: r.error } };
  if (!r.pass) return { ...c, failure: { message: r.failures[0] ?? "failed", text: r.failures.join("\n") } };
  return c;
}

/** A test file that could not be read: its own suite of one error case, its problems as the text. */
function brokenFileSuite(file: string, problems: readonly FileProblem[]): JunitSuite {
  const first = problems[0];
  const where = (d: FileProblem) => `${d.file}:${d.line}:${d.column}`;
  return {
    name: file,
    cases: [
      {
        classname: file,
        name: `${file} (the test file)`,
        seconds: 0,
        error: {
          message: first ? `${where(first)}: ${first.message}` : `${file} could not be read`,
          text: problems.map((d) => `${where(d)}: ${d.message}`).join("\n"),
        },
      },
    ],
  };
}

/** JUnit XML for CI test reports: one test suite per file, one test case per case, and for each test
 *  contract, and for each test file that could not be read (`broken`: its problems) one error case, the
 *  good files' cases kept. */
export function testJunit(
  results: CaseResult[],
  contracts: ContractResult[] = [],
  broken: readonly FileProblem[] = [],
  guardrails: readonly GuardrailTestResult[] = [],
): string {
  const byFile = new Map<string, JunitCase[]>();
  for (const r of results) byFile.set(r.case.file, [...(byFile.get(r.case.file) ?? []), junitCase(r)]);
  for (const r of contracts) byFile.set(r.contract.file, [...(byFile.get(r.contract.file) ?? []), contractCase(r)]);
  for (const r of guardrails) byFile.set(r.test.file, [...(byFile.get(r.test.file) ?? []), guardrailCase(r)]);
  const brokenByFile = new Map<string, FileProblem[]>();
  for (const d of broken) brokenByFile.set(d.file, [...(brokenByFile.get(d.file) ?? []), d]);
  const suites: JunitSuite[] = [
    ...[...byFile].map(([file, cases]) => ({ name: file, cases })),
    ...[...brokenByFile].map(([file, problems]) => brokenFileSuite(file, problems)),
  ];
  return junitXml(TITLE, suites);
}

/** JUnit XML for a run that could not test anything (broken policies, a bad flag, no such
 *  environment…): the error as the report, one error case per problem, so a CI report shows it. */
export function testJunitError(e: unknown): string {
  const { error } = errorObject(e);
  const message = String(error.message ?? "");
  const diagnostics = (error.diagnostics as FileProblem[] | undefined)?.filter((d) => d.severity === "error") ?? [];
  const hint = typeof error.hint === "string" ? `\nHint: ${error.hint}` : "";
  const cases: JunitCase[] = diagnostics.length
    ? diagnostics.map((d) => {
        const where = `${d.file}:${d.line}:${d.column}`;
        return {
          classname: d.file,
          name: where,
          seconds: 0,
          error: { message: `${where}: ${d.message}`, text: `${message}${hint}` },
        };
      })
    : [{ classname: "revsync", name: "revsync test", seconds: 0, error: { message, text: `${message}${hint}` } }];
  return junitXml(TITLE, [{ name: "revsync test", cases }]);
}

const casesChange = (n: number): string => (n === 1 ? "1 policy test case changes" : `${n} policy test cases change`);

/** The impact section of a plan, in text. */
export function impactText(entries: ImpactEntry[]): string {
  if (!entries.length) return "";
  return [`Impact: ${casesChange(entries.length)}:`, ...entries.map((e) => `  ${t(impactLine(e))}   (${t(e.file)}:${e.line})`)].join("\n");
}

/** Where the whole impact is, for a section that leaves something out: "the JSON plan" by default. */
const WHOLE_PLAN = "the JSON plan";

/** The impact section of a plan, in markdown: the cases' table within its budget (SECTION_BUDGET.cases);
 *  the cases left out are counted, and `whole` names where every one is. */
export function impactMarkdown(entries: ImpactEntry[], whole = WHOLE_PLAN): string {
  if (!entries.length) return "";
  const head = [`#### Impact: ${casesChange(entries.length)}`, "", "| Case | Now | After apply |", "|---|---|---|", ""].join("\n");
  const rows = entries.map((e) => `| ${md(e.name)} | ${md(side(e.before.policy, e.before.ssp))} | ${md(side(e.after.policy, e.after.ssp))} |\n`);
  const { text } = fitPieces(rows, SECTION_BUDGET.cases - head.length - 1, (n) =>
    n
      ? `\n_${n === 1 ? "1 more case" : `${n} more cases`} not shown here (this table's share of the comment is full): every case is in ${whole} (impact.cases)._\n`
      : "",
  );
  return `${head}${text}\n`;
}

// ---- Contracts: how revsync allocates them (revsync test) and what a change moves (plan) ----

const STATUS_WORDS: Record<Allocation["status"], string> = {
  allocated: "allocated",
  "not carved": "not reallocated: carves_allocation is off in the tenant configuration, every line keeps its sell price",
  "cannot allocate": "cannot allocate",
};

const PLAIN: Painter = { paint: (_color, text) => text };
const num = (v: number | null): string => (v === null ? "-" : money(v));
const range = (l: AllocatedLine): string => (l.range ? `${money(l.range.low)} - ${money(l.range.high)}` : "-");
const rule = (l: AllocatedLine): string => (l.position ? `${l.position}: ${l.rule === null ? "(not set)" : l.rule}` : "-");

/** Rows as columns padded to their widths (the last one not padded). */
function columns(rows: string[][], indent: string): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, displayWidth(c))));
  return rows.map((r) => indent + r.map((c, i) => (i === r.length - 1 ? c : padDisplay(c, widths[i] ?? 0))).join("  "));
}

/** One contract, as `revsync test` prints it: its status, then per line its policy, SSP, range, rule,
 *  basis, sell price, allocated and carve. */
export function contractText(r: ContractResult, out: Painter): string[] {
  const a = r.allocation;
  const c = r.contract;
  const mark = r.pass ? out.paint("green", "PASS") : out.paint("red", "FAIL");
  const lines = [`${mark} ${out.paint("bold", `${t(c.file)}:${c.line}`)} contract ${t(c.name)}: ${t(a.currency)} ${money(a.total)}, ${STATUS_WORDS[a.status]}`];
  const head = ["Line", "Policy", "SSP", "Range", "Rule", "Basis", "Sell price", "Allocated", "Carve"];
  const rows = a.lines.map((l) => [
    t(l.id),
    t(l.policy ?? "no policy"),
    num(l.ssp),
    range(l),
    rule(l),
    num(l.basis),
    money(l.sell_price),
    num(l.allocated),
    l.carve === null ? "-" : signed(l.carve),
  ]);
  lines.push(...columns([head, ...rows], "      "));
  if (a.status === "cannot allocate") for (const w of [...a.errors, ...a.why]) lines.push(`      why: ${t(w)}`);
  else for (const w of r.why) lines.push(`      why: ${t(w)}`);
  if (a.status === "cannot allocate" && r.why.length && !a.errors.length && c.expect) lines.push("      (the contract expects an allocation)");
  return lines;
}

/** The contracts' part of the summary: "2 contracts: 1 allocated, 1 cannot allocate". */
function contractsSummary(rs: ContractResult[]): string {
  if (!rs.length) return "";
  const n = (s: Allocation["status"]): number => rs.filter((r) => r.allocation.status === s).length;
  const parts = [
    `${n("allocated")} allocated`,
    n("not carved") ? `${n("not carved")} not reallocated (carves_allocation off)` : "",
    n("cannot allocate") ? `${n("cannot allocate")} cannot allocate` : "",
  ];
  return `; ${rs.length === 1 ? "1 contract" : `${rs.length} contracts`}: ${parts.filter(Boolean).join(", ")}`;
}

export function contractJson(r: ContractResult): object {
  const a = r.allocation;
  return {
    name: r.contract.name,
    file: r.contract.file,
    line: r.contract.line,
    pass: r.pass,
    status: a.status,
    currency: a.currency,
    total: a.total,
    ...(r.contract.expect ? { expected: r.contract.expect.allocation } : {}),
    lines: a.lines,
    ...(a.status === "cannot allocate" ? { cannot_allocate: [...a.errors, ...a.why] } : {}),
    ...(r.pass ? {} : { why: r.why }),
  };
}

/** One JUnit case per contract: its allocation per line as the case's output; a rule revsync cannot read
 *  is an error (the contract could not be evaluated), an allocation that differs from what it expects a
 *  failure. */
function contractCase(r: ContractResult): JunitCase {
  const file = r.contract.file;
  const c: JunitCase = {
    classname: file,
    name: `contract ${r.contract.name}`,
    where: { file, line: r.contract.line },
    seconds: 0,
    output: contractText(r, PLAIN).join("\n"),
  };
  if (r.pass) return c;
  const message = r.why.join("; ");
  if (r.allocation.errors.length) return { ...c, error: { message, text: r.allocation.errors.join("\n") } };
  return { ...c, failure: { message, text: r.why.join("\n") } };
}

/** The allocation part of a plan's impact, in text: per contract that moves, per line before -> after,
 *  and the revenue moved across them all. */
export function allocationImpactText(entries: AllocationImpact[]): string {
  if (!entries.length) return "";
  const lines = [`Allocation impact: ${contractsMove(entries.length)}${movedWords(entries, t)}:`];
  for (const e of entries) {
    lines.push(
      `  ${t(e.contract)} (${t(e.file)}:${e.line}): ${e.moved === null ? "cannot compare" : `${t(e.currency)} ${money(e.moved)} moves`}${statusShift(e)}`,
    );
    const rows = e.lines.map((l) => [
      t(l.id),
      `${num(l.before.allocated)} -> ${num(l.after.allocated)}`,
      l.shift === null ? "" : signed(l.shift),
      t(policies(l.before, l.after)),
    ]);
    lines.push(...columns(rows, "      "));
    for (const w of e.why ?? []) lines.push(`      why: ${t(w)}`);
  }
  return lines.join("\n");
}

const sidePolicy = (s: AllocationSide): string => (s.policy === null ? "no policy" : `${s.policy}${s.ssp === null ? " (no SSP)" : ` (SSP ${money(s.ssp)})`}`);
const contractsMove = (n: number): string => (n === 1 ? "1 contract's allocation changes" : `${n} contracts' allocations change`);
const SHORT_STATUS: Record<Allocation["status"], string> = {
  allocated: "allocated",
  "not carved": "not reallocated, carves_allocation off",
  "cannot allocate": "cannot allocate",
};
const statusShift = (e: AllocationImpact): string =>
  e.before_status === e.after_status ? "" : ` (now ${SHORT_STATUS[e.before_status]}; after apply ${SHORT_STATUS[e.after_status]})`;
/** The policy of a line on both sides, once when it is the same. */
const policies = (b: AllocationSide, a: AllocationSide): string => {
  const [x, y] = [sidePolicy(b), sidePolicy(a)];
  return x === y ? x : `${x} -> ${y}`;
};

/** The revenue moved across the contracts, per currency: " (USD 1,234.56 moves)". */
function movedWords(entries: AllocationImpact[], esc: (text: string) => string): string {
  const by = movedByCurrency(entries);
  if (!by.size) return "";
  return ` (${[...by].map(([c, v]) => `${esc(c)} ${money(v)}`).join(", ")} of revenue moves between lines)`;
}

/** Contracts drawn in the chart: the ones that move most. */
export const CHART_CONTRACTS = 3;

/** Lines drawn per contract: the ones that move most. */
export const CHART_LINES = 8;

/** A Mermaid xychart-beta bar chart of one contract (GitHub and GitLab draw it in a comment): per line
 *  two bars, allocated now and after apply, side by side; the lines that move most when there are many. */
export function allocationChart(e: AllocationImpact): string {
  const moving = e.lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => Math.abs(b.l.shift ?? 0) - Math.abs(a.l.shift ?? 0) || a.i - b.i)
    .slice(0, CHART_LINES)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.l);
  const bars = moving.flatMap((l) => [l.before.allocated ?? 0, l.after.allocated ?? 0]);
  const names = moving.flatMap((l) => [mermaidLabel(`${l.id} now`, 24), mermaidLabel(`${l.id} after`, 24)]);
  const top = Math.max(0, ...bars);
  const bottom = Math.min(0, ...bars);
  const some = moving.length < e.lines.length ? ` (${moving.length} of ${e.lines.length} lines)` : "";
  return [
    "```mermaid",
    "xychart-beta",
    `    title ${mermaidLabel(`${e.contract}${some}`, 70)}`,
    `    x-axis [${names.join(", ")}]`,
    `    y-axis ${mermaidLabel(`Allocated (${e.currency})`, 30)} ${Math.floor(Math.round(bottom * 110) / 100)} --> ${Math.ceil(Math.round(top * 110) / 100) || 1}`,
    `    bar [${bars.map((v) => v.toFixed(2)).join(", ")}]`,
    "```",
  ].join("\n");
}

/** The allocation part of a plan's impact, in markdown: a chart of the contracts that move most, and a
 *  table a controller reads (line, before, after, shift) per contract; the charts and the tables each
 *  within their own budget (SECTION_BUDGET), the contracts left out counted, and `whole` named as where
 *  every one is. */
export function allocationImpactMarkdown(entries: AllocationImpact[], whole = WHOLE_PLAN): string {
  if (!entries.length) return "";
  const out = [`#### Allocation impact: ${contractsMove(entries.length)}${movedWords(entries, md)}`, ""];
  const charts = entries.filter((e) => e.moved !== null && e.moved > 0).slice(0, CHART_CONTRACTS);
  const drawn = fitPieces(
    charts.map((e) => `${allocationChart(e)}\n\n`),
    SECTION_BUDGET.charts - 200,
    (n) => (n ? `_${n === 1 ? "1 more chart" : `${n} more charts`} not drawn (the charts' share of the comment is full)._\n\n` : ""),
  );
  if (drawn.shown)
    out.push(
      `${drawn.text}_The ${drawn.shown === 1 ? "contract" : `${drawn.shown} contracts`} that move${drawn.shown === 1 ? "s" : ""} most: each line allocated now, and after apply._`,
      "",
    );
  const blocks = entries.map(
    (e) =>
      [
        `**${md(e.contract)}** (${markdownCode(`${e.file}:${e.line}`)}): ${e.moved === null ? "cannot compare" : `${md(e.currency)} ${money(e.moved)} moves`}${statusShift(e)}`,
        "",
        "| Line | Before | After | Shift | Policy (SSP) |",
        "|---|--:|--:|--:|---|",
        ...e.lines.map(
          (l) =>
            `| ${md(l.id)} | ${num(l.before.allocated)} | ${num(l.after.allocated)} | ${l.shift === null ? "" : signed(l.shift)} | ${md(policies(l.before, l.after))} |`,
        ),
        ...(e.why ?? []).map((w) => `\n> ${md(w)}`),
        "",
      ].join("\n") + "\n",
  );
  const tables = fitPieces(blocks, SECTION_BUDGET.contracts, (n) =>
    n
      ? `_${n === 1 ? "1 more contract" : `${n} more contracts`} not shown here (the contracts' share of the comment is full): every contract is in ${whole} (impact.allocation)._\n`
      : "",
  );
  out.push(tables.text);
  return `${out.join("\n")}\n`;
}

/** The impact of a plan, in text: the cases, then the contracts ("" when nothing changes). */
export function planImpactText(impact: PlanImpact | undefined): string {
  if (!impact) return "";
  const shown = [impactText(impact.cases), allocationImpactText(impact.allocation)].filter(Boolean);
  if (shown.length && impact.notes?.length) shown.push(impact.notes.map((n) => `Note: ${t(n)}`).join("\n"));
  return shown.join("\n\n");
}

/** The impact of a plan, in markdown: each section within its own budget; `whole` names where the
 *  whole impact is (the JSON plan). */
export function planImpactMarkdown(impact: PlanImpact | undefined, whole = WHOLE_PLAN): string {
  if (!impact) return "";
  const shown = [impactMarkdown(impact.cases, whole), allocationImpactMarkdown(impact.allocation, whole)].filter(Boolean);
  if (shown.length && impact.notes?.length)
    shown.push(
      fitPieces(
        impact.notes.map((n) => `> Note: ${md(n)}\n\n`),
        SECTION_BUDGET.impactNotes,
        (n) => `_${n === 1 ? "1 more note" : `${n} more notes`} in ${whole} (impact.notes)._\n`,
      ).text,
    );
  return shown.join("\n");
}

/** The failing cases and contracts of a policy test run, from its JSON: where, name, and why. */
export function testFailures(test: TestReport): { where: string; name: string; why: string }[] {
  const entries = [
    ...test.cases,
    ...(test.contracts ?? []).map((c) => ({ ...c, name: `contract ${c.name}` })),
    ...(test.guardrail_tests ?? []).map((g) => ({ ...g, name: `guardrail test ${g.name}`, why: [...(g.error ? [g.error] : []), ...(g.failures ?? [])] })),
  ];
  return entries
    .filter((c) => !c.pass)
    .map((c) => ({
      where: c.file === undefined ? "" : `${c.file}${c.line === undefined ? "" : `:${c.line}`}`,
      name: c.name,
      why: (Array.isArray(c.why) ? c.why : []).filter((w): w is string => typeof w === "string").join("; "),
    }));
}

/** Policy test results in markdown, from their JSON: the counts, then each failing case and contract in
 *  one line, as many as fit in `max` characters (the rest counted; `whole` names where they all are). */
export function testResultsMarkdown(test: TestReport, whole: string, max = MARKDOWN_LIMIT): string {
  const said = `${test.summary.failed ? "**Policy tests failed**" : "Policy tests passed"} against ${md(test.source)}: ${test.summary.passed} passed, ${test.summary.failed} failed.\n\n`;
  const lines = testFailures(test).map((f) => `- ${markdownCode(f.name)}${f.where ? ` (${md(f.where)})` : ""}${f.why ? `: ${md(f.why)}` : ""}\n`);
  const leftOut = (n: number): string => `\n_${plural(n, "more failure")} not listed: every one is in ${md(whole)}._\n`;
  return said + fitPieces(lines, max - 1 - said.length, leftOut).text;
}
