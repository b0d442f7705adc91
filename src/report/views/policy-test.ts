import type { FileProblem } from "../../errors.js";
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
      results: ({ results, contracts, guardrails = [], source, note }, out) => {
        const json = testJson(results, source, contracts) as { summary: { passed: number; failed: number } };
        if (guardrails.length) {
          json.summary.passed += guardrails.filter((g) => g.pass).length;
          json.summary.failed += guardrails.filter((g) => !g.pass).length;
        }
        out.out(
          JSON.stringify(
            note ? { ...testJson(results, source), note } : { ...json, ...(guardrails.length ? { guardrail_tests: guardrails.map(guardrailTestJson) } : {}) },
            null,
            2,
          ),
        );
        if (note) out.info(`Note: ${note}.`);
      },
    };
  },
  junit: async () => {
    const { testJunit, testJunitError } = await import("../policy-test.js");
    return {
      reportsBrokenFiles: true,
      results: ({ results, contracts, guardrails, note, broken }, out) => {
        out.raw(testJunit(results, contracts, broken, guardrails));
        if (note) out.info(`Note: ${note}.`);
      },
      error: (e, out) => out.raw(testJunitError(e)),
    };
  },
};
