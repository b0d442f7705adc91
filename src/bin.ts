#!/usr/bin/env node
import { join } from "node:path";
import { loadCli } from "./load-cli.js";
import { PACKAGE_ROOT } from "./package-root.js";

// A reader that goes away (revsync plan | head) ends the output, not the command: an apply finishes
// what it started and its exit code still tells. What is written after that is dropped.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
  });
}

const { runCli } = loadCli(join(PACKAGE_ROOT, "dist", "cli.cjs"));
const code = await runCli(process.argv);
// 130: interrupted. A second signal leaves requests in flight on purpose (apply says which): exit now,
// without waiting for their sockets or for a retry's timer.
if (code === 130) process.exit(code);
process.exitCode = code;
