import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/** The test files of `dir` (and below) whose properties take their run counts from the one knob
 *  (src/testing/property-runs.ts): every such file, found by its use of it, so that none is left out. */
function propertyFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : propertyFiles(path);
    return /\.test\.ts$/.test(e.name) && readFileSync(path, "utf8").includes("propertyRuns(") ? [path] : [];
  });
}

// `npm run test:deep`: every property at its deep depth (REVSYNC_PROPERTY_DEPTH=deep; docs/development.md,
// "Property tests"), the test files that hold them and nothing else. `npm test` runs the same properties
// at their quick depth. The settings of `npm test`'s config, its own JSON report, which .ci/run adds to
// the closing line.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [...propertyFiles("src"), ...propertyFiles("test")],
    exclude: ["**/node_modules/**"],
    env: { REVSYNC_PROPERTY_DEPTH: "deep" },
    reporters: ["default", ["json", { outputFile: ".revsync-tmp/vitest-deep-results.json" }]],
  },
});
