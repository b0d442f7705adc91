import { showOutcome as side } from "../policy-test/evaluate.js";
import { impactLine, type CaseResult, type ImpactEntry } from "../policy-test/run.js";
import type { Painter } from "./painter.js";
import { errorObject, type FileProblem } from "../errors.js";

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

/** Text as XML 1.0 content or attribute: the five specials escaped, and the characters XML 1.0 cannot
 *  hold at all (most control characters, lone surrogates) replaced, so the report stays well-formed. */
const xml = (s: string): string =>
  s
    // eslint-disable-next-line no-control-regex -- these are exactly the characters XML cannot hold
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");

/** JUnit XML for CI test reports: one test suite per file, one test case per case. */
export function testJunit(results: CaseResult[]): string {
  const byFile = new Map<string, CaseResult[]>();
  for (const r of results) byFile.set(r.case.file, [...(byFile.get(r.case.file) ?? []), r]);
  const suites = [...byFile].map(([file, rs]) => {
    const cases = rs.map((r) => {
      const head = `    <testcase classname="${xml(file)}" name="${xml(r.case.name)}" file="${xml(file)}" line="${r.case.line}"`;
      if (r.pass) return `${head}/>`;
      const message = `expected ${side(r.case.expect.policy, r.case.expect.ssp)}; got ${side(r.got.policy, r.got.ssp)}`;
      return `${head}>\n      <failure message="${xml(message)}">${xml(r.why.join("\n"))}</failure>\n    </testcase>`;
    });
    return `  <testsuite name="${xml(file)}" tests="${rs.length}" failures="${rs.filter((r) => !r.pass).length}">\n${cases.join("\n")}\n  </testsuite>`;
  });
  const failures = results.filter((r) => !r.pass).length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="revsync policy tests" tests="${results.length}" failures="${failures}">\n${suites.join("\n")}\n</testsuites>\n`;
}

/** JUnit XML for a run that could not test anything (a broken test file, a bad flag, no such
 *  environment…): the error as the report, one test case per problem, so a CI report shows it. */
export function testJunitError(e: unknown): string {
  const { error } = errorObject(e);
  const message = String(error.message ?? "");
  const diagnostics = (error.diagnostics as FileProblem[] | undefined)?.filter((d) => d.severity === "error") ?? [];
  const hint = typeof error.hint === "string" ? `\nHint: ${error.hint}` : "";
  const cases = diagnostics.length
    ? diagnostics.map((d) => {
        const where = `${d.file}:${d.line}:${d.column}`;
        return `    <testcase classname="${xml(d.file)}" name="${xml(where)}" file="${xml(d.file)}" line="${d.line}">\n      <error message="${xml(`${where}: ${d.message}`)}">${xml(`${message}${hint}`)}</error>\n    </testcase>`;
      })
    : [`    <testcase classname="revsync" name="revsync test">\n      <error message="${xml(message)}">${xml(`${message}${hint}`)}</error>\n    </testcase>`];
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="revsync policy tests" tests="${cases.length}" failures="0" errors="${cases.length}">\n  <testsuite name="revsync test" tests="${cases.length}" failures="0" errors="${cases.length}">\n${cases.join("\n")}\n  </testsuite>\n</testsuites>\n`;
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
