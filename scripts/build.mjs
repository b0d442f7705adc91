// Builds dist/ from src/ with tsc and records, in dist/.build-hash, a hash of what it was built from.
// `node scripts/build.mjs --if-stale` does nothing when dist/ was built from exactly these sources.
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
chmodSync(join(root, "dist", "bin.js"), 0o755);
writeFileSync(STAMP, `${hash}\n`);
