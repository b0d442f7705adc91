import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { ROOT } from "../src/testing/helpers.js";

/** Jenkins' JUnit schema, as the npm registry ships it (test/fixtures/junit/jenkins-junit.xsd says
 *  where from), checked with libxml2's validator (xmllint, built to WebAssembly: no system package). */
const XSD = readFileSync(join(ROOT, "test", "fixtures", "junit", "jenkins-junit.xsd"), "utf8");

/** The problems a JUnit report has for CI reporters: what the Jenkins schema refuses (the report as
 *  written, nothing taken out), a testsuite or testcase without `time` (reporters show "NaN"), and
 *  names that repeat within a suite. */
export async function junitProblems(report: string): Promise<string[]> {
  return (await junitProblemsOf([report]))[0] ?? [];
}

/** junitProblems of each report, the schema's part checked in one run of xmllint for them all: each run
 *  starts a worker and compiles libxml2 (some 0.2 s of CPU), the check of a report itself is quick. */
export async function junitProblemsOf(reports: string[]): Promise<string[][]> {
  const problems = reports.map((report) => {
    const own: string[] = [];
    for (const m of report.matchAll(/<(testsuites|testsuite|testcase)\b[^>]*>/g)) if (!/ time="\d+(\.\d+)?"/.test(m[0])) own.push(`no time: ${m[0]}`);
    for (const suite of report.split("<testsuite ").slice(1)) {
      const names = [...suite.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"/g)].map((m) => `${m[1]} / ${m[2]}`);
      for (const [i, n] of names.entries()) if (names.indexOf(n) !== i) own.push(`repeated name: ${n}`);
    }
    return own;
  });
  // A name no report can write (xmllint quotes a report's text, which could read "report-1.xml: …").
  const tag = randomUUID();
  const names = reports.map((_, i) => `report-${tag}-${i}.xml`);
  const result = await validateXML({
    xml: reports.map((contents, i) => ({ fileName: names[i] as string, contents })),
    schema: [{ fileName: "junit.xsd", contents: XSD }],
  });
  // xmllint checks the reports in turn: each of its messages starts with the report it is about and may
  // go on over lines of its own (the text at fault), and each report it could read ends with "X validates"
  // or "X fails to validate". One that validates has no problem (what xmllint said of it were warnings),
  // as checked alone. A message before any report's (the schema's own) is every report's problem.
  const said: string[][] = reports.map(() => []);
  const common: string[] = [];
  let at = -1;
  for (const line of result.rawOutput ? result.rawOutput.replace(/\n$/, "").split("\n") : []) {
    const i = names.findIndex((n) => line.startsWith(`${n}:`) || line.startsWith(`${n} `));
    if (i !== -1) at = i;
    if (i !== -1 && line === `${names[i]} validates`) said[i] = [];
    else if (i === -1 || line !== `${names[i]} fails to validate`)
      (said[at] ?? common).push(at === -1 ? line : line.replace(names[at] as string, "report.xml"));
  }
  for (const [k, own] of problems.entries()) own.push(...common, ...(said[k] ?? []));
  return problems;
}
