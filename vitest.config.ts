import { defineConfig } from "vitest/config";
import { LoadSequencer } from "./test/load-sequencer.js";

// Node reads and parses every certificate of NODE_EXTRA_CA_CERTS as it starts, before any code runs:
// with a system bundle there (as on the project's machines) that was about 0.05 s of CPU in each of
// the suite's several hundred child processes (the CLI, the emulator, npx), a fifth of a `revsync
// validate`. They only speak plain HTTP to 127.0.0.1; the workers and every child inherit this.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // The tests that drive other real tools as a user runs them (gitlab-ci-local over the CI recipes,
    // every sh block of the docs, ajv-cli and yaml-language-server over the schemas, zsh and fish over
    // completion) take about as long as all the others together: `npm run test:tools` runs them
    // (vitest.tools.config.ts). The tests whose subject is the process itself (signals, kill -9, two
    // real applies racing, a terminal, the built package, every byte a process writes) run the CLI as
    // processes, a third of the suite's CPU: `npm run test:slow` runs them (vitest.slow.config.ts). CI
    // runs both after `npm test`, and `npm run test:deep` (docs/development.md).
    exclude: ["**/node_modules/**", "**/*.tools.test.ts", "**/*.process.test.ts"],
    // A time limit ends a hang; it never judges speed (bench/ does). At 30 s some fifteen tests of a few
    // seconds each failed at a load average of 30 on two cores, and passed when run again.
    testTimeout: 90_000,
    hookTimeout: 90_000,
    // Some tests wait: on the emulator's injected latency, a time limit running out, the few child
    // processes left in npm test; most commands run in process (docs/architecture.md). So one worker
    // more than the 2 cores: `vitest run --maxWorkers N` on a quiet machine (2026-11-29, 1,082 tests),
    // wall 47.7 s with 2 (user+sys 75.6 s), 44.0, 44.9 and 46.7 s with 3 (82 to 85 s), 45.5 s with 4
    // (87 s): each worker loads the sources once. As processes, not threads: each child process is
    // forked from its worker, and forking copies the page tables of the whole process (threads shared
    // one of some 750 MB, and stalled one another meanwhile); two runs each on two loaded cores,
    // user+sys of the whole run: threads 95 s and 105 s, forks 90 s and 96 s.
    pool: "forks",
    maxWorkers: 3,
    // Test files of one worker share loaded modules (no file relies on module state of another).
    isolate: false,
    // Modules as transformed are kept on disk between runs (in the clone's ignored .revsync-tmp/, keyed by
    // content and config): a run after the first transforms only what changed. `vitest run
    // test/command-entry.e2e.test.ts`, user+sys: 8.0 s without, 5.2 s with a warm cache (load 20+).
    experimental: { fsModuleCache: true, fsModuleCachePath: ".revsync-tmp/vitest-cache" },
    // The order of files: those that mostly wait handed out among those that keep a core busy, learnt
    // from the last run's record in .revsync-tmp/test-load/ (docs/development.md); vitest's own order
    // (longest first) when there is none.
    setupFiles: ["./test/record-file-load.ts"],
    sequence: { sequencer: LoadSequencer },
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: ".revsync-tmp/vitest-results.json" }]],
  },
});
