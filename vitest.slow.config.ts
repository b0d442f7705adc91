import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// `npm run test:slow`: the tests whose subject is the process itself, named `*.process.test.ts`
// (docs/development.md): the CLI run as processes of its own, signalled, killed, raced, on a terminal,
// built and installed. The settings of `npm test`'s config, its own files and its own JSON report, which
// .ci/run adds to the closing line.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/**/*.process.test.ts", "src/**/*.process.test.ts"],
    exclude: ["**/node_modules/**"],
    reporters: ["default", ["json", { outputFile: ".revsync-tmp/vitest-slow-results.json" }]],
  },
});
