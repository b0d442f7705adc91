// npm test after the build check: the typecheck, lint, layers, format:check, functions and gen:check
// (generated files not stale) scripts of package.json, and the tests (`vitest run`, with what follows `--` passed on to it), all at the same
// time. Each check is one process on one core (one after another: 25 to 30 s of CPU in a fresh clone,
// their caches empty, 7 to 8 s with them) and the tests wait on child processes and the emulator for
// part of their run: started together, the checks fill those waits on the machine's two cores instead
// of coming first (docs/development.md has the figures). The tests print as they run; each check's
// output is printed whole after them, in this order, and the exit status is 1 when any failed.
//
//   node scripts/checks.mjs              the six checks only
//   node scripts/checks.mjs --tests [ARGS]
//                                        the six checks and `vitest run ARGS` (npm test -- ARGS)
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
// As npm runs a script: from the package's folder, its node_modules/.bin first on the PATH.
const env = { ...process.env, PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}` };
const argv = process.argv.slice(2);
const withTests = argv[0] === "--tests";
const vitestArgs = withTests ? argv.slice(argv[1] === "--" ? 2 : 1) : [];

/** A command run as npm runs a script, its output kept for later. */
function buffered(name, command) {
  return new Promise((resolve) => {
    const child = spawn(command, { cwd: root, env, shell: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ name, code, out }));
  });
}

const checks = ["typecheck", "lint", "layers", "format:check", "functions", "gen:check"].map((name) => buffered(name, scripts[name]));
const tests = withTests
  ? new Promise((resolve) => {
      const child = spawn(join(root, "node_modules", ".bin", "vitest"), ["run", ...vitestArgs], { cwd: root, env, stdio: "inherit" });
      child.on("close", (code) => resolve(code));
    })
  : Promise.resolve(0);
const testCode = await tests;
const failed = [];
for (const run of checks) {
  const { name, code, out } = await run;
  process.stdout.write(`> ${name}: ${scripts[name]}\n${out}`);
  if (code !== 0) {
    failed.push(name);
    process.stdout.write(`${name} failed (exit ${code})\n`);
  }
}
if (testCode !== 0) failed.push("the tests");
if (failed.length) process.stdout.write(`npm test failed: ${failed.join(", ")} (above)\n`);
process.exit(failed.length ? 1 : 0);
