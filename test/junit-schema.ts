import { readFileSync } from "node:fs";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { ROOT } from "../src/testing/helpers.js";

/** Jenkins' JUnit schema, as the npm registry ships it (test/fixtures/junit/jenkins-junit.xsd says
 *  where from), checked with libxml2's validator (xmllint, built to WebAssembly: no system package). */
const XSD = readFileSync(join(ROOT, "test", "fixtures", "junit", "jenkins-junit.xsd"), "utf8");

/** The problems a JUnit report has for CI reporters: what the Jenkins schema refuses, a testsuite or
 *  testcase without `time` (reporters show "NaN"), and names that repeat within a suite. The one
 *  extension revsync writes, `file` and `line` on a testcase (GitHub's and GitLab's reporters use them
 *  to point at the source), is taken out before the schema check; nothing else is. */
export async function junitProblems(report: string): Promise<string[]> {
  const problems: string[] = [];
  for (const m of report.matchAll(/<(testsuites|testsuite|testcase)\b[^>]*>/g)) if (!/ time="\d+(\.\d+)?"/.test(m[0])) problems.push(`no time: ${m[0]}`);
  for (const suite of report.split("<testsuite ").slice(1)) {
    const names = [...suite.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"/g)].map((m) => `${m[1]} / ${m[2]}`);
    for (const [i, n] of names.entries()) if (names.indexOf(n) !== i) problems.push(`repeated name: ${n}`);
  }
  const plain = report.replace(/(<testcase\b[^>]*?) file="[^"]*" line="\d+"/g, "$1");
  const result = await validateXML({ xml: [{ fileName: "report.xml", contents: plain }], schema: [{ fileName: "junit.xsd", contents: XSD }] });
  problems.push(...result.errors.map((e) => e.rawMessage));
  return problems;
}
