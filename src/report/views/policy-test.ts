import type { FileProblem } from "../../errors.js";
import type { TestReport } from "../../fleet/outcome.js";
import type { CaseResult, ContractResult } from "../../policy-test/run.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** What revsync test ran: each case's and contract's result, against which policies (`source`);
 *  `note` when there was nothing to run; `broken`, the problems of test files that could not be read
 *  (only for a view that reports them, below). */
export interface TestRun {
  results: CaseResult[];
  contracts: ContractResult[];
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
  /** A run that stopped with an error, as this report (JUnit: the error is a report of its own). */
  error?(e: unknown, out: Sink): void;
}

/** revsync test. */
export const testViews: Views<TestView> = {
  text: async () => {
    const { testText } = await import("../policy-test.js");
    return {
      results: ({ results, contracts, source, note }, out) => out.out(note ? `No policy tests ran: ${note}.` : testText(results, source, out, contracts)),
    };
  },
  json: async () => {
    const { testJson } = await import("../policy-test.js");
    return {
      results: ({ results, contracts, source, note, environment }, out) => {
        const json = testJson(results, source, note ? [] : contracts, environment);
        out.out(JSON.stringify(note ? { ...json, note } : json, null, 2));
        if (note) out.info(`Note: ${note}.`);
      },
    };
  },
  markdown: async () => {
    const [{ testJson, testResultsMarkdown }, { commentText, markdownCode }] = await Promise.all([import("../policy-test.js"), import("../escape.js")]);
    return {
      results: ({ results, contracts, source, note, environment }, out) => {
        const head = `<!-- revsync-test:${commentText(environment ?? "")} -->\n### revsync test${environment === undefined ? "" : ` in ${markdownCode(environment)}`}\n\n`;
        const whole = `the JSON results (revsync test${environment === undefined ? "" : " --live"} --format json)`;
        const body = testResultsMarkdown(testJson(results, source, contracts, environment) as TestReport, whole);
        out.out(head + (note ? `No policy tests ran: ${note}.\n` : body));
      },
    };
  },
  junit: async () => {
    const { testJunit, testJunitError } = await import("../policy-test.js");
    return {
      reportsBrokenFiles: true,
      results: ({ results, contracts, note, broken }, out) => {
        out.raw(testJunit(results, contracts, broken));
        if (note) out.info(`Note: ${note}.`);
      },
      error: (e, out) => out.raw(testJunitError(e)),
    };
  },
};
