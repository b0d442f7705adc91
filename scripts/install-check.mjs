// npm run test:install: revsync installed every way a user installs it, each with the real tool, from
// a clean clone of this repository's HEAD (commit first: what is not committed is not tested). CI runs
// it (.ci/run). It takes a few minutes: every step is a real npm install.
//
// - pre-commit (Debian's package, installed with apt-get when missing) runs both hooks of
//   .pre-commit-hooks.yaml from a .pre-commit-config.yaml naming the clone and a commit, on a good and a
//   broken policy repo: once at HEAD (a plain commit, built on install) and once at a release commit
//   (scripts/release.mjs: dist/ committed, nothing built on install);
// - npm install -g of the release commit's git URL, npm install of HEAD's git URL into a project, and
//   npm install -g of the tarball npm pack makes: each then runs revsync validate.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const work = mkdtempSync(join(tmpdir(), "revsync-install-check-"));
const quiet = { NO_COLOR: "1", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
let failed = 0;

function run(cmd, args, opts = {}) {
  const started = Date.now();
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd ?? work,
    encoding: "utf8",
    env: { ...process.env, ...quiet, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return {
    code: r.status,
    stdout: r.stdout ?? "",
    out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? r.error.message : ""}`,
    seconds: (Date.now() - started) / 1000,
  };
}

function check(what, ok, r) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${r ? ` (${r.seconds.toFixed(1)} s)` : ""}`);
  if (!ok) {
    failed++;
    if (r) console.log(r.out.replace(/^/gm, "     | "));
  }
}

/** pre-commit on PATH, or Debian's, installed now: apt-get update once, then the package. */
function preCommit() {
  if (run("pre-commit", ["--version"]).code === 0) return true;
  if (run("apt-get", ["--version"]).code !== 0) {
    console.log(
      "FAIL pre-commit is not installed and apt-get is not here to install it: install pre-commit (Debian's package, or pip install pre-commit) and run again",
    );
    return false;
  }
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  const update = run("apt-get", ["update", "-qq"], { env });
  const install = update.code === 0 ? run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "pre-commit"], { env }) : update;
  check("pre-commit installed from Debian's packages (apt-get)", install.code === 0, install);
  return install.code === 0;
}

/** A policy repo (git, files staged) from the quick start's policies and policy tests; broken: a
 *  policy file the schema refuses and a case that expects the wrong policy. */
function policyRepo(name, broken) {
  const dir = join(work, name);
  cpSync(join(root, "policies"), join(dir, "policies"), { recursive: true });
  mkdirSync(join(dir, "tests"));
  let cases = readFileSync(join(root, "policy-tests", "demo.yaml"), "utf8");
  writeFileSync(join(dir, "revsync.yaml"), readFileSync(join(root, "revsync.yaml"), "utf8").replace(/^tests: .*$/m, "tests: tests"));
  if (broken) {
    writeFileSync(
      join(dir, "policies", "broken.yaml"),
      "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata:\n  name: Broken SSP\nspec:\n  hierarchy_no: first\n",
    );
    cases = cases.replace(/expect: \{ policy: ([^,}]+)/, "expect: { policy: Nonexistent SSP");
  }
  writeFileSync(join(dir, "tests", "demo.yaml"), cases);
  run("git", ["init", "--quiet"], { cwd: dir });
  run("git", ["add", "-A"], { cwd: dir });
  return dir;
}

/** Both hooks from a .pre-commit-config.yaml naming the clone at `rev`, on the good and the broken repo. */
function hooks(label, repoUrl, rev, good, bad) {
  const home = join(work, `pre-commit-home-${label.replace(/\W+/g, "-")}`);
  const config = `repos:\n  - repo: ${repoUrl}\n    rev: ${rev}\n    hooks:\n      - id: revsync-validate\n      - id: revsync-test\n`;
  for (const dir of [good, bad]) writeFileSync(join(dir, ".pre-commit-config.yaml"), config);
  const install = run("pre-commit", ["install-hooks"], { cwd: good, env: { PRE_COMMIT_HOME: home } });
  check(`pre-commit installs the hooks at ${label} (rev: ${rev})`, install.code === 0, install);
  if (install.code !== 0) return;
  const pass = run("pre-commit", ["run", "--all-files"], { cwd: good, env: { PRE_COMMIT_HOME: home } });
  check(
    `pre-commit at ${label}: revsync validate and revsync test pass on a good policy repo`,
    pass.code === 0 && /revsync validate\.+Passed/.test(pass.out) && /revsync test\.+Passed/.test(pass.out),
    pass,
  );
  const fail = run("pre-commit", ["run", "--all-files"], { cwd: bad, env: { PRE_COMMIT_HOME: home } });
  check(
    `pre-commit at ${label}: both hooks fail on a broken policy repo, naming the file`,
    fail.code === 1 && /revsync validate\.+Failed/.test(fail.out) && /revsync test\.+Failed/.test(fail.out) && /policies\/broken\.yaml:\d+:\d+/.test(fail.out),
    fail,
  );
}

/** revsync validate, with the revsync an install put at `bin`, in the good repo. */
function runs(what, bin, good) {
  const r = run(bin, ["validate"], { cwd: good });
  check(`${what}: revsync validate runs`, r.code === 0 && /^Valid: /m.test(r.out), r);
}

try {
  const src = join(work, "revsync");
  const clone = run("git", ["clone", "--quiet", root, src]);
  check("a clean clone of HEAD", clone.code === 0, clone);
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: src, encoding: "utf8" }).trim();
  // The release script builds with this clone's dependencies (npm ci installed them).
  symlinkSync(join(root, "node_modules"), join(src, "node_modules"), "dir");
  const release = run(process.execPath, ["scripts/release.mjs", "--tag", "v0.0.0-check"], { cwd: src });
  const tags = run("git", ["tag"], { cwd: src });
  check(
    "scripts/release.mjs makes a release commit and its tag",
    release.code === 0 && /^v0\.0\.0-check [0-9a-f]{40}$/m.test(release.out) && /^v0\.0\.0-check$/m.test(tags.out),
    { ...release, out: `${release.out}\ntags: ${tags.out}` },
  );
  const good = policyRepo("policy-good", false);
  const bad = policyRepo("policy-broken", true);

  if (preCommit()) {
    hooks("a plain commit", src, head, good, bad);
    hooks("a release tag", src, "v0.0.0-check", good, bad);
  }

  const globalRelease = join(work, "global-release");
  const g = run("npm", ["install", "-g", "--prefix", globalRelease, `git+file://${src}#v0.0.0-check`]);
  check("npm install -g git+file://…#<release tag>", g.code === 0, g);
  if (g.code === 0) runs("npm install -g of the release tag", join(globalRelease, "bin", "revsync"), good);

  const project = join(work, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), '{ "name": "policy-project", "private": true }\n');
  const local = run("npm", ["install", `git+file://${src}#${head}`], { cwd: project });
  check("npm install git+file://…#<commit> into a project (built on install)", local.code === 0, local);
  if (local.code === 0) runs("npm install of a commit", join(project, "node_modules", ".bin", "revsync"), good);

  const pack = run("npm", ["pack", "--pack-destination", work], { cwd: src });
  const tarball = pack.stdout.trim().split("\n").pop() ?? "";
  check("npm pack", pack.code === 0 && /^revsync-.*\.tgz$/.test(tarball), pack);
  const globalPack = join(work, "global-pack");
  const t = run("npm", ["install", "-g", "--prefix", globalPack, join(work, tarball)]);
  check("npm install -g of the npm pack tarball", t.code === 0, t);
  if (t.code === 0) runs("npm install -g of the tarball", join(globalPack, "bin", "revsync"), good);
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(failed ? `Install check failed: ${failed} step(s).` : "Install check passed: every way of installing revsync works.");
process.exitCode = failed ? 1 : 0;
