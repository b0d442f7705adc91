import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Most tests wait on child processes (the CLI, the emulator): more workers than the 2 cores
    // (measured on the final suite: 4 workers 62 s of vitest, 3 workers 66 s; 1 worker took 114 s on the
    // smaller suite this started from).
    maxWorkers: 4,
    // Test files of one worker share loaded modules (no file relies on module state of another).
    isolate: false,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: ".revsync-tmp/vitest-results.json" }]],
  },
});
