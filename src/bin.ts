#!/usr/bin/env node
import { runCli } from "./cli/main.js";

const code = await runCli(process.argv);
// 130: interrupted. A second signal leaves requests in flight on purpose (apply says which): exit now,
// without waiting for their sockets or for a retry's timer.
if (code === 130) process.exit(code);
process.exitCode = code;
