import type { FileProblem } from "../../errors.js";
import type { TestReport } from "../../fleet/outcome.js";
import type { CaseResult, ContractResult } from "../../policy-test/run.js";
import type { GuardrailTestResult } from "../../guardrails/tests.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** What revsync test ran: each case's and contract's result, against which policies (`source`);
 *  `note` when there was nothing to run; `broken`, the problems of test files that could not be read
 *  (only for a view that reports them, below). */
export interface TestRun {
  results: CaseResult[];
  contracts: ContractResult[];
  /** The guardrail tests (kind GuardrailTest), judged. */
  guardrails?: GuardrailTestResult[];
  source: string;
  note?: string;
  broken?: readonly FileProblem[];
  /** --live: the environment whose service's policies the cases ran against. */
  environment?: string;
}

export interface TestView {
  /** A test file with errors is an error case of this report, and the other files' cases still run
   *  (JUnit: a CI report is read whatever went wrong); without it, such a file stops the run at once. */
  reportsBrokenFiles?: boolean;
  results(run: TestRun, out: Sink): void;
}

/** The run as JSON: the cases' and contracts' results, the guardrail tests' counted in and listed. */
function runJson(
  { results, contracts, guardrails = [], source, note, environment }: TestRun,
  testJson: (r: CaseResult[], s: string, c?: ContractResult[], e?: string) => object,
  guardrailTestJson: (g: GuardrailTestResult) => object,
): object {
  if (note) return { ...testJson(results, source, [], environment), note };
  const json = testJson(results, source, contracts, environment) as { summary: { passed: number; failed: number } };
  if (!guardrails.length) return json;
  json.summary.passed += guardrails.filter((g) => g.pass).length;
  json.summary.failed += guardrails.filter((g) => !g.pass).length;
  return { ...json, guardrail_tests: guardrails.map(guardrailTestJson) };
}

/** revsync test. */
export const testViews: Views<TestView> = {
  text: async () => {
    const [{ testText }, { guardrailTestText }] = await Promise.all([import("../policy-test.js"), import("../guardrails.js")]);
    return {
      results: ({ results, contracts, guardrails = [], source, note }, out) => {
        if (note) return out.out(`No policy tests ran: ${note}.`);
        const guarded = guardrailTestText(guardrails, out);
        if (results.length || contracts.length) out.out(testText(results, source, out, contracts));
        if (guarded) out.out(guarded);
      },
    };
  },
  json: async () => {
    const [{ testJson }, { guardrailTestJson }] = await Promise.all([import("../policy-test.js"), import("../guardrails.js")]);
    return {
      results: (run, out) => {
        out.out(JSON.stringify(runJson(run, testJson, guardrailTestJson), null, 2));
        if (run.note) out.info(`Note: ${run.note}.`);
      },
    };
  },
  markdown: async () => {
    const [{ testJson, testResultsMarkdown }, { guardrailTestJson }, { commentText, markdownCode }] = await Promise.all([
      import("../policy-test.js"),
      import("../guardrails.js"),
      import("../escape.js"),
    ]);
    return {
      results: (run, out) => {
        const { environment, note } = run;
        const head = `<!-- revsync-test:${commentText(environment ?? "")} -->\n### revsync test${environment === undefined ? "" : ` in ${markdownCode(environment)}`}\n\n`;
        const whole = `the JSON results (revsync test${environment === undefined ? "" : " --live"} --format json)`;
        const body = testResultsMarkdown(runJson(run, testJson, guardrailTestJson) as TestReport, whole);
        out.out(head + (note ? `No policy tests ran: ${note}.\n` : body));
      },
    };
  },
  junit: async () => {
    const { testJunit } = await import("../policy-test.js");
    return {
      reportsBrokenFiles: true,
      results: ({ results, contracts, guardrails, note, broken }, out) => {
        out.raw(testJunit(results, contracts, broken, guardrails));
        if (note) out.info(`Note: ${note}.`);
      },
    };
  },
};
