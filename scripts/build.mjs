// Builds dist/ from src/ and records, in dist/.build-hash, a hash of what it was built from.
// `node scripts/build.mjs --if-stale` does nothing when dist/ was built from exactly these sources.
//
// Two steps. tsc type-checks and writes dist/ file by file (the benches import modules from it). Then
// esbuild bundles the CLI, dependencies included, into dist/bin.js and, for what only some commands
// need (each command, the HTTP client, the emulator, the spinner), dist/chunks/, loaded on demand: Node
// then resolves, reads and compiles a few files instead of some two hundred, the largest share of a
// command's start-up. The per-file dist/bin.js of tsc is replaced. Since the bundle holds the
// dependencies, package-lock.json is one of the hashed inputs (scripts/source-hash.mjs).
//
// Why --if-stale matters: npm runs `prepare` not only on `npm ci` but also the first time npx meets this
// folder (it installs the folder into its cache as a link and runs its prepare). A rebuild then rewrote
// dist/ under every CLI running at that moment: a command that loaded a half-written module failed.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceHash } from "./source-hash.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
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
const tsc = spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
rmSync(join(root, "dist", "chunks"), { recursive: true, force: true });
const { build } = await import("esbuild");
await build({
  absWorkingDir: root,
  entryPoints: { bin: "src/bin.ts" },
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
  // The CommonJS packages in the bundle (undici, yaml, commander) require Node's own modules.
  banner: { js: 'import { createRequire as __revsyncCreateRequire } from "node:module";\nconst require = __revsyncCreateRequire(import.meta.url);' },
});
chmodSync(join(root, "dist", "bin.js"), 0o755);
writeFileSync(STAMP, `${hash}\n`);
