// Builds dist/, the CLI as revsync ships it: dist/cli.cjs (the CLI and its dependencies, bundled by
// esbuild: Node then reads one file instead of resolving, reading and compiling some two hundred) and
// dist/bin.js (its small loader). dist/ is committed, so that every commit installs by every route with
// nothing to build (docs/decisions.md, "How revsync is installed"), and dist/.build-hash records what it
// was built from and what it holds. The build is deterministic: the same sources give the same bytes.
//
//   node scripts/build.mjs            builds dist/ (npm run dist: gen:types and the type check first)
//   node scripts/build.mjs --check    builds nothing; exits 1 unless dist/ is what the build makes from
//                                     the sources as they are (npm test runs it first)
//   node scripts/build.mjs --modules  each module of src/ as its own file in build/ (not committed), with
//                                     source maps: what the benches import (npm run bench, npm run chaos)
//
// Since the bundle holds the dependencies, package-lock.json is one of the hashed inputs
// (scripts/source-hash.mjs). Type checking is tsc's, apart (npm run typecheck).
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceHash, srcModules } from "./source-hash.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(root, "dist");
const STAMP = join(DIST, ".build-hash");
const FIX = "run `npm run dist` and commit dist/";

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
/** Every file under dir, as posix paths relative to the repository, sorted. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)).split("\\").join("/"))
    .sort();
}
/** The stamp's text: the hash of the sources, then each file of dist/ with the hash of its bytes. */
const stampText = (sources, outputs) => [`sources ${sources}`, ...outputs.map(([f, bytes]) => `${f} ${sha256(bytes)}`)].join("\n") + "\n";

if (process.argv.includes("--check")) {
  const problems = [];
  const stamp = existsSync(STAMP) ? readFileSync(STAMP, "utf8") : "";
  const lines = new Map(
    stamp
      .split("\n")
      .filter(Boolean)
      .map((l) => [l.slice(0, l.lastIndexOf(" ")), l.slice(l.lastIndexOf(" ") + 1)]),
  );
  if (!stamp) problems.push("dist/.build-hash is missing");
  else if (lines.get("sources") !== (await sourceHash(root)))
    problems.push("it was built from other sources (src/, package-lock.json, the precompiled validators, the build)");
  const listed = [...lines.keys()].filter((k) => k !== "sources");
  const present = filesUnder(DIST).filter((f) => f !== "dist/.build-hash");
  for (const f of present) {
    if (!lines.has(f)) problems.push(`${f} is not one the build wrote`);
    else if (sha256(readFileSync(join(root, f))) !== lines.get(f)) problems.push(`${f} differs from what the build wrote (edited, or merged by git)`);
  }
  for (const f of listed) if (!present.includes(f)) problems.push(`${f} is missing`);
  if (problems.length) {
    console.error(`dist/ is not what the build makes from these sources: ${FIX}.\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    process.exit(1);
  }
  process.exit(0);
}

const { build } = await import("esbuild");
// preserveSymlinks: paths in the bundle stay under the repository when node_modules is a link to another
// clone's (npm run test:install builds so), and the bytes are the same.
const common = { absWorkingDir: root, bundle: true, platform: "node", target: "node20", preserveSymlinks: true, logLevel: "warning", write: false };

if (process.argv.includes("--modules")) {
  // The modules of src/, one file each, in a folder beside src/ (so that the package's folder is one
  // level above each module, as from src/): not tests or declarations.
  const modules = srcModules(root).filter((f) => !f.endsWith(".d.ts"));
  const out = await build({ ...common, bundle: false, sourcemap: true, entryPoints: modules, outbase: "src", outdir: "build", format: "esm" });
  rmSync(join(root, "build"), { recursive: true, force: true });
  for (const f of out.outputFiles) {
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, f.contents);
  }
  process.exit(0);
}

const hash = await sourceHash(root);
const outputs = [
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
].map((f) => [relative(root, f.path).split("\\").join("/"), f.contents]);

// The stamp goes first: a build that fails half-way leaves dist/ marked as built from nothing.
rmSync(STAMP, { force: true });
// What an older build wrote and this one does not (source maps, a code cache, per-module files) goes.
for (const name of existsSync(DIST) ? readdirSync(DIST) : [])
  if (!outputs.some(([o]) => o === `dist/${name}`)) rmSync(join(DIST, name), { recursive: true, force: true });
// Each file whole or not at all, for a command that starts meanwhile: written beside, then renamed.
for (const [f, bytes] of outputs) {
  const path = join(root, f);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
}
chmodSync(join(DIST, "bin.js"), 0o755);
writeFileSync(STAMP, stampText(hash, outputs));
