import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// `npm run test:tools`: the tests that drive other real tools as a user runs them, named
// `*.tools.test.ts` (docs/development.md). The settings of `npm test`'s config, its own files and its
// own JSON report, which .ci/run adds to the closing line.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/**/*.tools.test.ts", "src/**/*.tools.test.ts"],
    exclude: ["**/node_modules/**"],
    reporters: ["default", ["json", { outputFile: ".revsync-tmp/vitest-tools-results.json" }]],
  },
});
