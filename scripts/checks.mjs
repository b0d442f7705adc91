// npm test after the build check: the typecheck, lint, layers, format:check, functions and gen:check
// (generated files not stale) scripts of package.json, and the tests (`vitest run`, with what follows `--` passed on to it), all at the same
// time. Each check is one process on one core (one after another: 25 to 30 s of CPU in a fresh clone,
// their caches empty, 7 to 8 s with them) and the tests wait on child processes and the emulator for
// part of their run: started together, the checks fill those waits on the machine's two cores instead
// of coming first (docs/development.md has the figures). The tests print as they run; each check's
// output is printed whole after them, in this order, and the exit status is 1 when any failed.
//
// A check that passed leaves a stamp in the clone's ignored .revsync-tmp/checks/: the digest of every
// file of the clone (cloneDigest: ignored ones too, the caches and node_modules aside, whose installs
// npm's own lock file inside it records), of the check's command and of Node's version, taken before the
// checks start and stamped only when the files are the same after them. The next run whose digest is
// the same does not run that check again and says so: nothing it reads has changed by a byte since it
// passed (a run after any change runs every check). A tool changed by hand inside node_modules is not
// seen: delete .revsync-tmp/checks/ after such an edit.
//
//   node scripts/checks.mjs              the six checks only
//   node scripts/checks.mjs --tests [ARGS]
//                                        the six checks and `vitest run ARGS` (npm test -- ARGS)
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
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

/** The digest of every file of the clone, in path order: its sources, tests and configs, what git ignores
 *  too (a folder a pattern ignores may still hold sources the type checker reads), folders behind links
 *  and nested repositories walked like any other; all but git's own folder, node_modules and
 *  .revsync-tmp (the caches), with node_modules/.package-lock.json, which npm writes on every install,
 *  and Node's version. Undefined when a folder cannot be read: then every check runs. */
function cloneDigest() {
  const hash = createHash("sha256").update(`${process.version}\0`);
  const seen = new Set();
  const walk = (rel) => {
    const real = realpathSync(join(root, rel));
    if (seen.has(real)) return;
    seen.add(real);
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? join(rel, name) : name;
      if (!rel && [".git", "node_modules", ".revsync-tmp"].includes(name)) continue;
      const st = statSync(join(root, path), { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(path);
      else if (st?.isFile()) hash.update(`${path}\0${st.size}\0`).update(readFileSync(join(root, path)));
      else hash.update(`${path}\0gone\0`);
    }
  };
  try {
    walk("");
    const npmLock = join(root, "node_modules", ".package-lock.json");
    hash.update(existsSync(npmLock) ? readFileSync(npmLock) : "no node_modules/.package-lock.json");
  } catch {
    return undefined;
  }
  return hash.digest("hex");
}

const digest = cloneDigest();
const stampOf = (name) => join(root, ".revsync-tmp", "checks", `${name.replace(/\W/g, "-")}.passed`);
const stampText = (name) => `${digest}\n${scripts[name]}\n`;

/** A check, unless it passed before on exactly these files (its stamp); `ran` when it ran. */
async function check(name) {
  try {
    if (digest && readFileSync(stampOf(name), "utf8") === stampText(name)) return { name, code: 0, out: "passed before on these same files: not run again\n" };
  } catch {
    // No stamp: the check runs.
  }
  return { ...(await buffered(name, scripts[name])), ran: true };
}

/** Stamps each check that ran and passed, when the clone's files are still what they were before the
 *  checks started (one changed meanwhile: what passed may not be what a stamp would name). */
function stamp(results) {
  if (!digest || !results.some((r) => r.ran && r.code === 0) || cloneDigest() !== digest) return;
  for (const { name, code, ran } of results) {
    if (!ran || code !== 0) continue;
    mkdirSync(dirname(stampOf(name)), { recursive: true });
    writeFileSync(stampOf(name), stampText(name));
  }
}

const checks = ["typecheck", "lint", "layers", "format:check", "functions", "gen:check"].map(check);
const tests = withTests
  ? new Promise((resolve) => {
      const child = spawn(join(root, "node_modules", ".bin", "vitest"), ["run", ...vitestArgs], { cwd: root, env, stdio: "inherit" });
      child.on("close", (code) => resolve(code));
    })
  : Promise.resolve(0);
const testCode = await tests;
const results = await Promise.all(checks);
stamp(results);
const failed = [];
for (const { name, code, out } of results) {
  process.stdout.write(`> ${name}: ${scripts[name]}\n${out}`);
  if (code !== 0) {
    failed.push(name);
    process.stdout.write(`${name} failed (exit ${code})\n`);
  }
}
if (testCode !== 0) failed.push("the tests");
if (failed.length) process.stdout.write(`npm test failed: ${failed.join(", ")} (above)\n`);
process.exit(failed.length ? 1 : 0);
