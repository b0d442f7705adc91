import { showOutcome as side } from "../policy-test/evaluate.js";
import { impactLine, type CaseResult, type ImpactEntry } from "../policy-test/run.js";
import type { Painter } from "./painter.js";
import { errorObject, type FileProblem } from "../errors.js";
import { junitXml, type JunitCase, type JunitSuite } from "./junit.js";

export function testText(results: CaseResult[], source: string, out: Painter): string {
  const failed = results.filter((r) => !r.pass);
  const lines: string[] = [];
  for (const r of failed) {
    lines.push(`${out.paint("red", "FAIL")} ${out.paint("bold", `${r.case.file}:${r.case.line}`)} ${r.case.name}`);
    lines.push(`      expected: ${side(r.case.expect.policy, r.case.expect.ssp)}`);
    lines.push(`      got:      ${r.got.error ? "an error" : side(r.got.policy, r.case.expect.ssp === undefined ? undefined : r.got.ssp)}`);
    for (const w of r.why) lines.push(`      why:      ${w}`);
  }
  if (failed.length) lines.push("");
  lines.push(
    `${failed.length ? out.paint("red", "Policy tests failed") : out.paint("green", "Policy tests passed")}: ${results.length - failed.length} passed, ${failed.length} failed (against ${source}).`,
  );
  return lines.join("\n");
}

export function testJson(results: CaseResult[], source: string): object {
  return {
    format_version: "1",
    source,
    summary: { passed: results.filter((r) => r.pass).length, failed: results.filter((r) => !r.pass).length },
    cases: results.map((r) => ({
      name: r.case.name,
      file: r.case.file,
      line: r.case.line,
      pass: r.pass,
      expected: r.case.expect,
      got: r.got,
      ...(r.pass ? {} : { why: r.why }),
    })),
  };
}

const TITLE = "revsync policy tests";

/** A case that could not be evaluated (a value that cannot be compared, an expression with an unknown
 *  name) is a JUnit error; one whose outcome differs from what it expects, a failure. */
function junitCase(r: CaseResult): JunitCase {
  const c: JunitCase = { classname: r.case.file, name: r.case.name, file: r.case.file, line: r.case.line, seconds: r.seconds };
  if (r.pass) return c;
  const expected = `expected ${side(r.case.expect.policy, r.case.expect.ssp)}`;
  if (r.got.error) return { ...c, error: { message: `${expected}; could not be evaluated: ${r.got.error}`, text: r.why.join("\n") } };
  return { ...c, failure: { message: `${expected}; got ${side(r.got.policy, r.got.ssp)}`, text: r.why.join("\n") } };
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
        file,
        ...(first ? { line: first.line } : {}),
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
 *  file that could not be read (`broken`: its problems) one error case, the good files' cases kept. */
export function testJunit(results: CaseResult[], broken: readonly FileProblem[] = []): string {
  const byFile = new Map<string, JunitCase[]>();
  for (const r of results) byFile.set(r.case.file, [...(byFile.get(r.case.file) ?? []), junitCase(r)]);
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
          file: d.file,
          line: d.line,
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
  return [`Impact: ${casesChange(entries.length)}:`, ...entries.map((e) => `  ${impactLine(e)}   (${e.file}:${e.line})`)].join("\n");
}

/** The impact section of a plan, in markdown. */
export function impactMarkdown(entries: ImpactEntry[]): string {
  if (!entries.length) return "";
  const cell = (s: string): string => s.replace(/\|/g, "\\|");
  return [
    `#### Impact: ${casesChange(entries.length)}`,
    "",
    "| Case | Now | After apply |",
    "|---|---|---|",
    ...entries.map((e) => `| ${cell(e.name)} | ${cell(side(e.before.policy, e.before.ssp))} | ${cell(side(e.after.policy, e.after.ssp))} |`),
    "",
  ].join("\n");
}
