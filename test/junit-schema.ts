import { readFileSync } from "node:fs";
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
  const fileName = (i: number): string => `report-${i}.xml`;
  const result = await validateXML({
    xml: reports.map((contents, i) => ({ fileName: fileName(i), contents })),
    schema: [{ fileName: "junit.xsd", contents: XSD }],
  });
  // Each of xmllint's messages starts with the file it is about, and may go on over lines of its own (the
  // text at fault); "X fails to validate" only sums up the messages before it. A message about none of
  // them (the schema's own) is every report's problem.
  let at = -1;
  for (const e of result.errors) {
    const i = reports.findIndex((_, k) => e.rawMessage.startsWith(`${fileName(k)}:`) || e.rawMessage.startsWith(`${fileName(k)} `));
    if (i !== -1) at = i;
    if (i !== -1 && e.rawMessage === `${fileName(i)} fails to validate`) continue;
    for (const [k, own] of problems.entries()) if (at === -1 || at === k) own.push(e.rawMessage.replace(fileName(k), "report.xml"));
  }
  return problems;
}
