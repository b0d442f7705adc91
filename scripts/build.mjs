// Builds dist/ from src/ and records, in dist/.build-hash, a hash of what it was built from.
// `node scripts/build.mjs --if-stale` does nothing when dist/ was built from exactly these sources.
//
// esbuild writes dist/ file by file (the benches import modules from it) and bundles the CLI,
// dependencies included, into dist/cli.cjs and its small loader into dist/bin.js: Node then reads one
// file instead of resolving, reading and compiling some two hundred. Last, `revsync demo` runs once to
// make dist/cli.cjs.cache, V8's code cache of what a command compiles (src/load-cli.ts says why).
// Since the bundle holds the dependencies, package-lock.json is one of the hashed inputs
// (scripts/source-hash.mjs). Type checking is tsc's, apart (npm run typecheck; npm run build and npm
// test run it): emitting dist/ with tsc took some 10 s of CPU, esbuild takes a fraction of one.
//
// Why --if-stale matters: npm runs `prepare` not only on `npm ci` but also the first time npx meets this
// folder (it installs the folder into its cache as a link and runs its prepare). A rebuild then rewrote
// dist/ under every CLI running at that moment: a command that loaded a half-written module failed.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildInputs, sourceHash } from "./source-hash.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const STAMP = join(root, "dist", ".build-hash");

const hash = await sourceHash(root);
if (process.argv.includes("--if-stale") && existsSync(join(root, "dist", "bin.js")) && existsSync(STAMP) && readFileSync(STAMP, "utf8").trim() === hash) {
  // Touched, so that the CLI's check of a clone (src/dev-build.ts) sees the sources as older and hashes nothing.
  const now = new Date();
  utimesSync(STAMP, now, now);
  console.error("dist/ is up to date with src/: not rebuilt");
  process.exit(0);
}
// The stamp goes first: a build that fails half-way leaves dist/ marked as built from nothing.
rmSync(STAMP, { force: true });
const { build } = await import("esbuild");
const common = { absWorkingDir: root, bundle: true, platform: "node", target: "node20", sourcemap: true, logLevel: "warning", write: false };
// The modules of src/, one file each (the benches import dist/testing/): not tests or declarations.
const modules = buildInputs(root).filter((f) => f.startsWith("src/") && !f.endsWith(".d.ts"));
const outputs = [
  ...(await build({ ...common, bundle: false, entryPoints: modules, outbase: "src", outdir: "dist", format: "esm" })).outputFiles,
  ...(
    await build({
      ...common,
      entryPoints: ["src/cli/main.ts"],
      outfile: "dist/cli.cjs",
      format: "cjs",
      // The bundle runs as CommonJS, where import.meta does not exist; revsync's modules use its url to
      // find the package's folder.
      define: { "import.meta.url": "__revsyncModuleUrl" },
      banner: { js: 'var __revsyncModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    })
  ).outputFiles,
  ...(await build({ ...common, entryPoints: ["src/bin.ts"], outfile: "dist/bin.js", format: "esm" })).outputFiles,
];
// Each file whole or not at all, for a command that starts meanwhile: written beside, then renamed.
for (const f of outputs) {
  mkdirSync(dirname(f.path), { recursive: true });
  writeFileSync(`${f.path}.tmp`, f.contents);
  renameSync(`${f.path}.tmp`, f.path);
}
chmodSync(join(root, "dist", "bin.js"), 0o755);

const cache = join(root, "dist", "cli.cjs.cache");
rmSync(cache, { force: true });
const demo = spawnSync(process.execPath, [join(root, "dist", "bin.js"), "demo"], {
  cwd: root,
  env: { ...process.env, REVSYNC_BUILD_CODE_CACHE: `${cache}.tmp`, NO_COLOR: "1" },
  encoding: "utf8",
});
if (demo.status === 0 && existsSync(`${cache}.tmp`)) renameSync(`${cache}.tmp`, cache);
else console.error(`revsync demo failed (exit ${demo.status}), so dist/ has no code cache and commands start slower:\n${demo.stderr}`);
writeFileSync(STAMP, `${hash}\n`);
