import { defineConfig } from "vitest/config";

// Node reads and parses every certificate of NODE_EXTRA_CA_CERTS as it starts, before any code runs:
// with a system bundle there (as on the project's machines) that was about 0.05 s of CPU in each of
// the suite's several hundred child processes (the CLI, the emulator, npx), a fifth of a `revsync
// validate`. They only speak plain HTTP to 127.0.0.1; the workers and every child inherit this.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "threads",
    // Most tests wait on child processes (the CLI, the emulator): more workers than the 2 cores, as
    // threads (no test changes directory or listens for signals in its own process). Measured on the
    // final suite: threads 59 s, forks 61 s; 4 workers 62 s, 3 workers 66 s (forks); 1 worker took
    // 114 s on the smaller suite this started from.
    maxWorkers: 4,
    // Test files of one worker share loaded modules (no file relies on module state of another).
    isolate: false,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: ".revsync-tmp/vitest-results.json" }]],
  },
});
