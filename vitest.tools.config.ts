import { defineConfig } from "vitest/config";
import type { Reporter } from "vitest/reporters";
import base from "./vitest.config.js";

/** The closing line of `npm run test:tools`: what passed, and each test not run (a tool it drives is
 *  not installed here: needsTool) with why. A test that did not run is never counted as passed. */
const notRun: Reporter = {
  onTestRunEnd(modules) {
    const tests = modules.flatMap((m) => [...m.children.allTests()]);
    const count = (state: string): number => tests.filter((t) => t.result().state === state).length;
    const skipped = tests.filter((t) => t.result().state === "skipped");
    const failed = count("failed");
    process.stdout.write(
      [
        `test:tools: ${count("passed")} passed, ${skipped.length} not run${failed ? `, ${failed} failed` : ""}`,
        ...skipped.map((t) => {
          const r = t.result();
          return `  not run: ${t.fullName}${r.state === "skipped" && r.note ? `: ${r.note}` : ""}`;
        }),
      ].join("\n") + "\n",
    );
  },
};

// `npm run test:tools`: the tests that drive other real tools as a user runs them, named
// `*.tools.test.ts` (docs/development.md). The settings of `npm test`'s config, its own files and its
// own JSON report, which .ci/run adds to the closing line.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/**/*.tools.test.ts", "src/**/*.tools.test.ts"],
    exclude: ["**/node_modules/**"],
    reporters: ["default", notRun, ["json", { outputFile: ".revsync-tmp/vitest-tools-results.json" }]],
  },
});
