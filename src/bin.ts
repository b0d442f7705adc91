#!/usr/bin/env node
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runCli } from "./cli/main.js";
import { staleBuildWarning } from "./dev-build.js";

// undici parses HTTP/1 with llhttp compiled to WebAssembly, built when the first connection opens (after
// this line). V8 compiles it quickly (Liftoff), then, once a function has run enough, again with its
// optimizing compiler (TurboFan): about a quarter of the CPU of a whole `revsync plan` against a local
// service, for parsing that is already fast enough. A budget this large keeps the quick code for any
// run of a command; unlike --liftoff-only (a V8 testing flag that aborts the process where Liftoff
// cannot compile a function), V8 still falls back to TurboFan wherever it must.
setFlagsFromString("--wasm-tiering-budget=2000000000");

// A reader that goes away (revsync plan | head) ends the output, not the command: an apply finishes
// what it started and its exit code still tells. What is written after that is dropped.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
  });
}

const stale = await staleBuildWarning(join(dirname(fileURLToPath(import.meta.url)), ".."));
if (stale) process.stderr.write(`Warning: ${stale}\n`);

const code = await runCli(process.argv);
// 130: interrupted. A second signal leaves requests in flight on purpose (apply says which): exit now,
// without waiting for their sockets or for a retry's timer.
if (code === 130) process.exit(code);
process.exitCode = code;
