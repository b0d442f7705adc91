// npm test after the build check: the typecheck, lint, layers, format:check, functions and gen:check
// (generated files not stale) scripts of package.json, and the tests (`vitest run`, with what follows `--` passed on to it), all at the same
// time. Each check is one process on one core (one after another: 25 to 30 s of CPU in a fresh clone,
// their caches empty, 7 to 8 s with them) and the tests wait on child processes and the emulator for
// part of their run: started together, the checks fill those waits on the machine's two cores instead
// of coming first (docs/development.md has the figures). The tests print as they run; each check's
// output is printed whole after them, in this order, and the exit status is 1 when any failed.
//
// A check that passed leaves a stamp in the clone's ignored .revsync-tmp/checks/: the digest of every
// file of the clone that git does not ignore (tracked or not: the sources, the tests, the configs,
// package-lock.json, which fixes node_modules), of the check's command and of Node's version. The next
// run whose digest is the same does not run that check again and says so: nothing it reads has changed
// by a byte since it passed (a run after any change runs every check). Outside a git work tree there
// are no stamps: every check runs.
//
//   node scripts/checks.mjs              the six checks only
//   node scripts/checks.mjs --tests [ARGS]
//                                        the six checks and `vitest run ARGS` (npm test -- ARGS)
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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

/** The digest of the clone's files that git does not ignore, in path order (a file listed but gone counts
 *  as gone), with Node's version; undefined outside a git work tree. */
function cloneDigest() {
  let listed;
  try {
    listed = execFileSync("git", ["ls-files", "-z", "-c", "-o", "--exclude-standard"], { cwd: root, encoding: "utf8", maxBuffer: 64 << 20 });
  } catch {
    return undefined;
  }
  const hash = createHash("sha256").update(`${process.version}\0`);
  for (const path of [...new Set(listed.split("\0").filter(Boolean))].sort()) {
    let bytes;
    try {
      bytes = readFileSync(join(root, path));
    } catch {
      bytes = undefined;
    }
    hash.update(`${path}\0${bytes ? bytes.length : "gone"}\0`);
    if (bytes) hash.update(bytes);
  }
  return hash.digest("hex");
}

const digest = cloneDigest();
const stampOf = (name) => join(root, ".revsync-tmp", "checks", `${name.replace(/\W/g, "-")}.passed`);
const stampText = (name) => `${digest}\n${scripts[name]}\n`;

/** A check, unless it passed before on exactly these files (its stamp); a pass is stamped. */
async function check(name) {
  const stamp = stampOf(name);
  try {
    if (digest && readFileSync(stamp, "utf8") === stampText(name)) return { name, code: 0, out: "passed before on these same files: not run again\n" };
  } catch {
    // No stamp: the check runs.
  }
  const result = await buffered(name, scripts[name]);
  if (result.code === 0 && digest) {
    mkdirSync(dirname(stamp), { recursive: true });
    writeFileSync(stamp, stampText(name));
  }
  return result;
}

const checks = ["typecheck", "lint", "layers", "format:check", "functions", "gen:check"].map(check);
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
