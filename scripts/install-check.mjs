// npm run test:install: revsync installed every way a user installs it, each with today's real tool,
// from a clean clone of this repository's HEAD (commit first: what is not committed is not tested).
// CI runs it (.ci/run). It takes a few minutes: every step is a real install.
//
// - dist/ as committed is what the build makes in the clean clone, byte for byte;
// - pre-commit's latest release (pip, in a venv) runs both hooks of .pre-commit-hooks.yaml from a
//   .pre-commit-config.yaml naming the clone at a commit and at a tag, on a good and a broken policy
//   repo; so does Debian's pre-commit (apt-get, when missing), which installs by another route;
// - npm install -g of git+file://…#<commit>, pre-commit 4's own route with npm alone (npm install -g
//   --install-links git+file:// of a clone checked out at the commit), npm install of the git URL into
//   a project then npx --no (the recipes' route) and the GitHub Action's steps there, npx of the git
//   URL, and npm install -g of the tarball npm pack makes: each then runs revsync validate;
// - Python's jsonschema (pip, in the venv), reading as check-jsonschema reads, over every example and
//   over a plan and an evidence record the installed revsync wrote, each typo found.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { examples, oneDocumentEach, outputs, python, typos } from "./schema-validators.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const work = mkdtempSync(join(tmpdir(), "revsync-install-check-"));
const quiet = { NO_COLOR: "1", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
const DEMO_ENV = { REVSYNC_CLIENT_ID: "revsync", REVSYNC_CLIENT_SECRET: "demo-secret", REVSYNC_USERNAME: "alice", REVSYNC_PASSWORD: "alice-password" };
let failed = 0;

function run(cmd, args, opts = {}) {
  const started = Date.now();
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd ?? work,
    encoding: "utf8",
    env: { ...process.env, ...quiet, ...opts.env },
    input: opts.input,
    stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  return {
    code: r.status,
    stdout: r.stdout ?? "",
    out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? r.error.message : ""}`,
    seconds: (Date.now() - started) / 1000,
  };
}

function check(what, ok, r) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${r?.seconds !== undefined ? ` (${r.seconds.toFixed(1)} s)` : ""}`);
  if (!ok) {
    failed++;
    if (r) console.log(r.out.replace(/^/gm, "     | "));
  }
  return ok;
}

/** Debian's pre-commit: /usr/bin/pre-commit, installed now with apt-get when missing. */
function debianPreCommit() {
  const bin = "/usr/bin/pre-commit";
  if (run(bin, ["--version"]).code === 0) return bin;
  if (run("apt-get", ["--version"]).code !== 0) {
    check("Debian's pre-commit: not installed, and no apt-get to install it (apt-get install pre-commit)", false);
    return undefined;
  }
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  const update = run("apt-get", ["update", "-qq"], { env });
  const install = update.code === 0 ? run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "pre-commit"], { env }) : update;
  return check("Debian's pre-commit installed (apt-get)", install.code === 0, install) ? bin : undefined;
}

/** A venv with today's pre-commit, jsonschema and ruamel.yaml from pip (as configured: on this project's
 *  machines, a local package index). pip's default of five retries per package against an index it
 *  cannot reach took minutes: one try each. */
function venv() {
  const dir = join(work, "venv");
  let made;
  for (const python of ["python3", "/usr/bin/python3"]) {
    made = run(python, ["-m", "venv", dir]);
    if (made.code === 0) break;
  }
  if (!check("a Python venv (python3 -m venv; Debian: apt-get install python3-venv)", made.code === 0, made)) return undefined;
  const pip = run(join(dir, "bin", "pip"), ["install", "--quiet", "--retries", "0", "pre-commit", "jsonschema", "ruamel.yaml"]);
  if (!check("pip install pre-commit jsonschema ruamel.yaml (today's releases)", pip.code === 0, pip)) return undefined;
  const version = run(join(dir, "bin", "pre-commit"), ["--version"]);
  console.log(`     ${version.stdout.trim()} from pip`);
  return dir;
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

/** Both hooks, with the pre-commit at `bin`, from a .pre-commit-config.yaml naming the clone at `rev`,
 *  on the good and the broken repo. */
function hooks(label, bin, repoUrl, rev, good, bad) {
  const home = join(work, `pre-commit-home-${label.replace(/\W+/g, "-")}`);
  const config = `repos:\n  - repo: ${repoUrl}\n    rev: ${rev}\n    hooks:\n      - id: revsync-validate\n      - id: revsync-test\n`;
  for (const dir of [good, bad]) writeFileSync(join(dir, ".pre-commit-config.yaml"), config);
  const install = run(bin, ["install-hooks"], { cwd: good, env: { PRE_COMMIT_HOME: home } });
  if (!check(`${label}: installs the hooks (rev: ${rev})`, install.code === 0, install)) return;
  const pass = run(bin, ["run", "--all-files"], { cwd: good, env: { PRE_COMMIT_HOME: home } });
  check(
    `${label}: revsync validate and revsync test pass on a good policy repo`,
    pass.code === 0 && /revsync validate\.+Passed/.test(pass.out) && /revsync test\.+Passed/.test(pass.out),
    pass,
  );
  const fail = run(bin, ["run", "--all-files"], { cwd: bad, env: { PRE_COMMIT_HOME: home } });
  check(
    `${label}: both hooks fail on a broken policy repo, naming the file`,
    fail.code === 1 && /revsync validate\.+Failed/.test(fail.out) && /revsync test\.+Failed/.test(fail.out) && /policies\/broken\.yaml:\d+:\d+/.test(fail.out),
    fail,
  );
}

/** revsync validate, with the revsync an install put at `bin`, in the good repo. */
function runs(what, bin, good, args = []) {
  const r = run(bin, [...args, "validate"], { cwd: good });
  return check(`${what}: revsync validate runs`, r.code === 0 && /^Valid: /m.test(r.out), r);
}

/** An install of revsync itself runs nothing: every commit holds dist/ built. */
const noScripts = (what, r) => check(`${what}: no install script of revsync's, nothing to allow`, !/allowScripts|install-scripts|prepare/i.test(r.out), r);

/** The emulator of an installed revsync, on an OS-chosen port. */
function emulator(bin) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ["emulator", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...quiet } });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /^base_url (\S+)$/m.exec(out);
      if (m) resolve({ url: m[1], stop: () => new Promise((r) => (child.once("close", r), child.kill("SIGTERM"))) });
    });
    child.on("close", (code) => reject(new Error(`revsync emulator exited ${code}: ${out}`)));
  });
}

/** The schemas with Python's jsonschema: every example, and a plan and an evidence record that the
 *  installed revsync wrote against its emulator, and apply's JSON report, with a typo of each kind. */
async function schemas(pythonBin, bin) {
  const emu = await emulator(bin);
  try {
    const repo = join(work, "schemas-repo");
    cpSync(join(root, "policies"), join(repo, "policies"), { recursive: true });
    const config = readFileSync(join(root, "revsync.yaml"), "utf8").replaceAll("http://127.0.0.1:4010", emu.url);
    writeFileSync(join(repo, "revsync.yaml"), config.replace(/^tests: .*$/m, ""));
    const plan = run(bin, ["plan", "--out", "plan.json"], { cwd: repo, env: DEMO_ENV });
    const apply = run(bin, ["apply", "plan.json", "--auto-approve", "--evidence", "evidence", "--format", "json"], { cwd: repo, env: DEMO_ENV });
    if (!check("the installed revsync writes a plan and an evidence record", plan.code === 0 && apply.code === 0, { ...apply, out: plan.out + apply.out }))
      return;
    const record = readdirSync(join(repo, "evidence")).find((n) => n.endsWith(".json"));
    writeFileSync(join(repo, "apply-report.json"), apply.stdout);
    const checks = oneDocumentEach(
      [
        ...examples(),
        ...typos(join(work, "typos")),
        ...outputs(join(repo, "plan.json"), join(repo, "evidence", record), join(work, "typos"), join(repo, "apply-report.json")),
      ],
      join(work, "documents"),
    );
    const started = Date.now();
    const results = python(pythonBin, checks);
    const wrong = results.filter((r) => r.passed !== r.valid);
    check(
      `Python's jsonschema, read as check-jsonschema reads: ${results.filter((r) => r.valid).length} files pass, ${results.filter((r) => !r.valid).length} typos found`,
      wrong.length === 0,
      { seconds: (Date.now() - started) / 1000, out: wrong.map((r) => `${r.file} (${r.schema}): ${r.said}`).join("\n") },
    );
  } finally {
    await emu.stop();
  }
}

try {
  const src = join(work, "revsync");
  const clone = run("git", ["clone", "--quiet", root, src]);
  check("a clean clone of HEAD", clone.code === 0, clone);
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: src, encoding: "utf8" }).trim();
  run("git", ["-c", "user.name=check", "-c", "user.email=check@revsync.invalid", "tag", "-a", "v0.0.0-check", "-m", "check"], { cwd: src });

  // The build's dependencies, as this clone has them (npm ci installed them).
  symlinkSync(join(root, "node_modules"), join(src, "node_modules"), "dir");
  const built = run(process.execPath, ["scripts/build.mjs"], { cwd: src });
  const diff = run("git", ["status", "--porcelain", "--", "dist"], { cwd: src });
  check("dist/ as committed is what the build makes, byte for byte", built.code === 0 && diff.code === 0 && diff.stdout === "", {
    ...built,
    out: `${built.out}${diff.stdout}`,
  });
  rmSync(join(src, "node_modules"));
  run("git", ["checkout", "--quiet", "--", "dist"], { cwd: src });

  const good = policyRepo("policy-good", false);
  const bad = policyRepo("policy-broken", true);

  const env = venv();
  if (env) {
    hooks("pre-commit from pip, at a commit", join(env, "bin", "pre-commit"), src, head, good, bad);
    hooks("pre-commit from pip, at a tag", join(env, "bin", "pre-commit"), src, "v0.0.0-check", good, bad);
  }
  const debian = debianPreCommit();
  if (debian) {
    console.log(`     ${run(debian, ["--version"]).stdout.trim()} from Debian`);
    hooks("Debian's pre-commit, at a commit", debian, src, head, good, bad);
  }

  const globalGit = join(work, "global-git");
  const g = run("npm", ["install", "-g", "--prefix", globalGit, `git+file://${src}#${head}`]);
  if (check("npm install -g git+file://…#<commit>", g.code === 0, g)) {
    noScripts("npm install -g git+file://…#<commit>", g);
    runs("npm install -g of a commit", join(globalGit, "bin", "revsync"), good);
  }

  // pre-commit 4's route, with npm alone: its clone checked out at the rev, installed with
  // npm_config_prefix set to its environment.
  const preCommitClone = join(work, "pre-commit-clone");
  run("git", ["clone", "--quiet", src, preCommitClone]);
  run("git", ["checkout", "--quiet", "--detach", head], { cwd: preCommitClone });
  const prefix = join(work, "node-env");
  const p4 = run("npm", ["install", "--allow-git=root", "--install-links", "-g", `git+file://${preCommitClone}`], {
    env: { npm_config_prefix: prefix, NPM_CONFIG_PREFIX: prefix },
  });
  if (check("npm install --allow-git=root --install-links -g git+file://<clone at a commit> (pre-commit 4's route)", p4.code === 0, p4))
    runs("pre-commit 4's route", join(prefix, "bin", "revsync"), good);

  // The recipes' and the Action's route: the policy repo's package.json pins the git URL.
  const project = join(work, "project");
  cpSync(good, project, { recursive: true });
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify({ name: "policy-project", private: true, devDependencies: { revsync: `git+file://${src}#${head}` } }, null, 2)}\n`,
  );
  const local = run("npm", ["install"], { cwd: project });
  if (check("npm install of a package.json pinning git+file://…#<commit>", local.code === 0, local)) {
    noScripts("npm install of the pin", local);
    runs("npx --no -- revsync", "npx", project, ["--no", "--", "revsync"]);
    // The Action's shell steps (action.yml), with its inputs; setting up Node and commenting are GitHub's.
    const action = parse(readFileSync(join(src, "action.yml"), "utf8"));
    const inputs = { command: "validate", "working-directory": ".", "success-codes": "0" };
    const fill = (t) => t.replace(/\$\{\{ inputs\.([\w-]+) \}\}/g, (_m, k) => inputs[k] ?? "");
    let out = "";
    let code = 0;
    const started = Date.now();
    for (const step of action.runs.steps.filter((s) => s.run)) {
      const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, fill(v)]));
      const r = run("bash", ["-e", "-c", step.run], { cwd: project, env: { ...stepEnv, GITHUB_OUTPUT: join(work, "action-output") } });
      out += r.out;
      code ||= r.code;
    }
    check("the GitHub Action's steps: install what package.json pins, run revsync validate", code === 0 && /^Valid: /m.test(out), {
      seconds: (Date.now() - started) / 1000,
      out,
    });
  }

  const npx = run("npx", ["--yes", `git+file://${src}#${head}`, "validate"], { cwd: good, env: { npm_config_cache: join(work, "npx-cache") } });
  check("npx git+file://…#<commit> validate", npx.code === 0 && /^Valid: /m.test(npx.out), npx);

  const pack = run("npm", ["pack", "--pack-destination", work], { cwd: src });
  const tarball = pack.stdout.trim().split("\n").pop() ?? "";
  check("npm pack", pack.code === 0 && /^revsync-.*\.tgz$/.test(tarball), pack);
  const globalPack = join(work, "global-pack");
  const t = run("npm", ["install", "-g", "--prefix", globalPack, join(work, tarball)]);
  if (check("npm install -g of the npm pack tarball", t.code === 0, t)) runs("npm install -g of the tarball", join(globalPack, "bin", "revsync"), good);

  if (env && existsSync(join(globalGit, "bin", "revsync"))) await schemas(join(env, "bin", "python"), join(globalGit, "bin", "revsync"));
  else check("Python's jsonschema over the schemas: needs the venv and a global install", false);
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(
  failed
    ? `Install check failed: ${failed} step(s).`
    : "Install check passed: every way of installing revsync works, and Python's jsonschema reads the schemas.",
);
process.exitCode = failed ? 1 : 0;
