import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Most tests wait on child processes (the CLI, the emulator), not on the CPU: more workers than cores.
    maxWorkers: 4,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: ".revsync-tmp/vitest-results.json" }]],
  },
});
