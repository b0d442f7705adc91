import { describe, expect, it } from "vitest";
import { junitXml } from "../src/report/junit.js";
import { testJunit, testJunitError } from "../src/report/policy-test.js";
import { PolicyProblems } from "../src/errors.js";
import type { CaseResult } from "../src/policy-test/run.js";
import { junitProblems, junitProblemsOf } from "./junit-schema.js";

// The JUnit writer, in process, against Jenkins' JUnit schema (test/junit-schema.ts); what the CLI
// writes is checked the same way in test/policy-tests.e2e.test.ts.
const result = (name: string, over: Partial<CaseResult> = {}): CaseResult => ({
  case: { name, file: "tests/a.yaml", line: 4, column: 5, input: {}, expect: { policy: "Default SSP" } },
  got: { policy: "Default SSP", ssp: null },
  pass: true,
  why: [],
  seconds: 0.0012,
  ...over,
});

describe("JUnit", () => {
  it("passes, failures and errors, each with a time; a case that could not be evaluated is an <error>, not a failure", async () => {
    const xml = testJunit([
      result("fine"),
      result("wrong policy", { pass: false, got: { policy: "Other SSP", ssp: 5 }, why: ["Other SSP matched first"] }),
      result("cannot tell", { pass: false, got: { policy: null, ssp: null, error: 'quantity "lots" and "100" cannot be ordered' }, why: ["x"] }),
    ]);
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toContain('<testsuites name="revsync policy tests" tests="3" failures="1" errors="1" time="0.004">');
    expect(xml).toContain('<testcase classname="tests/a.yaml" name="fine" time="0.001"/>');
    // Where the case is: its suite and class name the file, its message starts with file and line.
    expect(xml).toMatch(/<failure message="tests\/a\.yaml:4: expected Default SSP; got Other SSP at 5">Other SSP matched first<\/failure>/);
    expect(xml).toMatch(/<error message="tests\/a\.yaml:4: expected Default SSP; could not be evaluated: quantity &quot;lots&quot;/);
    expect(xml).not.toContain("got no policy");
  });

  it("a broken test file is an error case of its own, beside the good files' cases", async () => {
    const xml = testJunit(
      [result("fine")],
      [],
      [{ file: "tests/bad.yaml", line: 6, column: 13, severity: "error", message: 'cases.0.expect: missing required field "policy"' }],
    );
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toContain('<testsuites name="revsync policy tests" tests="2" failures="0" errors="1"');
    expect(xml).toContain('name="fine"');
    expect(xml).toContain(
      '<testcase classname="tests/bad.yaml" name="tests/bad.yaml (the test file)" time="0.000">\n      <error message="tests/bad.yaml:6:13: cases.0.expect: missing required field &quot;policy&quot;">',
    );
  });

  it("names are unique within a suite: two diagnostics at one place, two cases of one name", async () => {
    const problems = new PolicyProblems("the policy repo has errors", [
      { file: "policies/a.yaml", line: 3, column: 1, severity: "error", message: "first" },
      { file: "policies/a.yaml", line: 3, column: 1, severity: "error", message: "second" },
    ]);
    const broken = testJunitError(problems);
    expect(broken).toContain('name="policies/a.yaml:3:1"');
    expect(broken).toContain('name="policies/a.yaml:3:1 (2)"');
    const twice = testJunit([result("same"), result("same"), result("same (2)")]);
    expect(await junitProblemsOf([broken, twice])).toEqual([[], []]);
    expect([...twice.matchAll(/ name="([^"]*)" time/g)].map((m) => m[1])).toEqual(["same", "same (2)", "same (2) (2)"]);
  });

  it("the check itself refuses what reporters cannot render: no time, an unknown element, a repeated name", async () => {
    const good = junitXml("t", [{ name: "s", cases: [{ classname: "c", name: "n", seconds: 0 }] }]);
    const [fine, noTime, unknown, repeated, located] = await junitProblemsOf([
      good,
      good.replace(/ time="[^"]*"/g, ""),
      good.replace("/>", "><oops/></testcase>"),
      good.replace(/(<testcase[^>]*\/>)/, "$1\n$1"),
      // file and line on a testcase, which some reporters read, are not in Jenkins' schema: xmllint refuses them.
      good.replace('name="n"', 'name="n" file="tests/a.yaml" line="4"'),
    ]);
    expect(fine).toEqual([]);
    expect(noTime).toHaveLength(3);
    expect(unknown).toEqual([expect.stringMatching(/^report\.xml:4: .*Element 'oops': This element is not expected/)]);
    expect(repeated).toEqual(["repeated name: c / n"]);
    expect(located?.join("\n")).toMatch(/^report\.xml:4: .*attribute 'file' is not allowed/);
    // Checked one by one, a report's problems are the same.
    expect(await junitProblems(good.replace("/>", "><oops/></testcase>"))).toEqual(unknown);
  });

  it("checked together, each report's problems are its own: none taken from the others, none lent to them", async () => {
    const good = junitXml("t", [{ name: "s", cases: [{ classname: "c", name: "n", seconds: 0 }] }]);
    const [warned, unknown, echoing, fine] = await junitProblemsOf([
      // xmllint warns of the version and the schema accepts the report: alone, it has no problem.
      good.replace('version="1.0"', 'version="1.7"'),
      good.replace("/>", "><oops/></testcase>"),
      // Not well-formed: xmllint quotes the line at fault, which reads like a message about the next report.
      good.replace("</testsuite>", "</testsuite>\nreport-3.xml:9: made up <\n"),
      good,
    ]);
    expect(warned).toEqual([]);
    expect(unknown).toEqual([expect.stringMatching(/^report\.xml:4: .*Element 'oops'/)]);
    expect(echoing).toEqual([expect.stringMatching(/^report\.xml:6: parser error/), "report-3.xml:9: made up <", expect.stringMatching(/^ +\^$/)]);
    expect(fine).toEqual([]);
  });
});
