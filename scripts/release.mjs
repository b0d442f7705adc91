// Makes a release: a commit whose child of HEAD holds dist/ built, tagged v<version> (or --tag NAME),
// and prints its id. The branch does not move and the working tree is not touched.
//
// Why: `npm install -g <git URL>` runs a package's build (any of the scripts prepare, build, prepack,
// install…) by installing the clone with --global still set, and npm 11 then links the global
// package to the temporary clone it deletes right after: the install ends with a `revsync` that
// points nowhere, whatever the build does. A release commit needs no build: it holds dist/, and its
// package.json has none of those scripts. pre-commit and `npm install <git URL>` work from any
// commit, a release commit included (docs/decisions.md, "How revsync is installed").
//
//   node scripts/release.mjs [--tag NAME | --no-tag]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const git = (args, cwd = root) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};

const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const tag = process.argv.includes("--no-tag") ? undefined : (arg("--tag") ?? `v${version}`);
if (tag && spawnSync("git", ["rev-parse", "-q", "--verify", `refs/tags/${tag}`], { cwd: root }).status === 0) {
  console.error(`release: tag ${tag} exists already: give another with --tag NAME`);
  process.exit(1);
}
const head = git(["rev-parse", "HEAD"]);
const dir = mkdtempSync(join(tmpdir(), "revsync-release-"));
try {
  git(["worktree", "add", "--quiet", "--detach", dir, head]);
  // The build's dependencies, as this clone has them (npm ci installed them).
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  for (const s of ["prepare", "build", "prepack", "preinstall", "install", "postinstall"]) delete pkg.scripts[s];
  // Nothing to build, so no esbuild to install (it is a dependency only for the build on install).
  delete pkg.dependencies.esbuild;
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  const built = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: dir, stdio: "inherit" });
  if (built.status !== 0) throw new Error(`the build failed (exit ${built.status})`);
  rmSync(join(dir, "node_modules"));
  // What the package ships of dist/ (package.json's files), forced past .gitignore.
  git(["add", "--force", "package.json", "dist", ":!dist/testing"], dir);
  // Made by whoever runs it; a machine with no git identity (a fresh CI) signs as "revsync release".
  const known = spawnSync("git", ["config", "user.email"], { cwd: root }).status === 0;
  const who = known ? [] : ["-c", "user.name=revsync release", "-c", "user.email=release@revsync.invalid"];
  git([...who, "commit", "--quiet", "--no-verify", "-m", `Release ${tag ?? version}: dist/ built from ${head}, no build on install`], dir);
  const id = git(["rev-parse", "HEAD"], dir);
  if (tag) git([...who, "tag", "-a", tag, id, "-m", `revsync ${tag}`]);
  console.log(tag ? `${tag} ${id}` : id);
} catch (e) {
  console.error(`release: ${e.message}`);
  process.exitCode = 1;
} finally {
  spawnSync("git", ["worktree", "remove", "--force", dir], { cwd: root });
  rmSync(dir, { recursive: true, force: true });
}
