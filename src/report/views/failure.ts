import type { FailureSink } from "../failure.js";
import type { Views } from "../view.js";

/** A command that failed: its error, what the JSON error object says it was (the command, and the
 *  environment whose work the error stopped), and whether commander has said it already (a command line
 *  it refused: only the report of it is left to write). */
export interface Failure {
  error: unknown;
  about?: { command?: string; environment?: string };
  said?: boolean;
}

export type FailureView = (failure: Failure, out: FailureSink) => void;

const words = async (): Promise<FailureView> => {
  const { failureWords } = await import("../failure.js");
  return ({ error, said }, out) => {
    if (!said) failureWords(error, out);
  };
};

/** How a failure is shown, by the format the command's report was asked in (--format): the words on
 *  stderr in every format; with json, stdout holds the JSON error object, whatever went wrong (a refused
 *  command line too), but for a run left at the prompt; with junit (revsync test), a JUnit report of the
 *  error, which a CI's test report reads whatever went wrong, unless the report written holds it already
 *  (a broken test file is an error case beside the cases that ran). The other formats leave stdout empty. */
export const failureViews: Views<FailureView> = {
  text: words,
  json: async () => {
    const [{ Cancelled, errorObject }, say] = await Promise.all([import("../../errors.js"), words()]);
    return (failure, out) => {
      if (!(failure.error instanceof Cancelled)) out.json({ ...errorObject(failure.error), ...failure.about });
      say(failure, out);
    };
  },
  markdown: words,
  csv: words,
  junit: async () => {
    const [{ isReported }, { testJunitError }, say] = await Promise.all([import("../../errors.js"), import("../policy-test.js"), words()]);
    return (failure, out) => {
      if (!isReported(failure.error)) out.raw(testJunitError(failure.error));
      say(failure, out);
    };
  },
};
