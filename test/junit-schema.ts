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
  const problems: string[] = [];
  for (const m of report.matchAll(/<(testsuites|testsuite|testcase)\b[^>]*>/g)) if (!/ time="\d+(\.\d+)?"/.test(m[0])) problems.push(`no time: ${m[0]}`);
  for (const suite of report.split("<testsuite ").slice(1)) {
    const names = [...suite.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"/g)].map((m) => `${m[1]} / ${m[2]}`);
    for (const [i, n] of names.entries()) if (names.indexOf(n) !== i) problems.push(`repeated name: ${n}`);
  }
  const result = await validateXML({ xml: [{ fileName: "report.xml", contents: report }], schema: [{ fileName: "junit.xsd", contents: XSD }] });
  problems.push(...result.errors.map((e) => e.rawMessage));
  return problems;
}
