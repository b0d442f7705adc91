import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { noteFileLoad } from "./file-load.js";

// A setup file (vitest.config.ts): run before each test file, in its worker. Records what the file cost,
// for the next run's order of files (test/load-sequencer.ts).

const root = fileURLToPath(new URL("..", import.meta.url));
let cpuAtStart: NodeJS.CpuUsage;
let wallAtStart = 0;

beforeAll(() => {
  cpuAtStart = process.cpuUsage();
  wallAtStart = performance.now();
});

// vitest reads a hook's first parameter for fixtures, and asks for a destructuring pattern there.
// eslint-disable-next-line no-empty-pattern
afterAll(({}, suite) => {
  const cpu = process.cpuUsage(cpuAtStart);
  const path = suite.file?.filepath;
  if (typeof path !== "string") return;
  noteFileLoad(root, relative(root, path), { cpu: (cpu.user + cpu.system) / 1e6, wall: (performance.now() - wallAtStart) / 1000 });
});
