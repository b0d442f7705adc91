import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, DEMO_ENV, removeDir, useEmulatorRepo } from "../src/testing/helpers.js";

// From an existing tenant to a reviewed repo (issue 13), through the real CLI.
const fx = useEmulatorRepo();
const run = (args: string[], env: Record<string, string | undefined> = {}, cwd = fx.repo) => cli(args, { cwd, env: { ...DEMO_ENV, ...env } });
const writes = () => fx.emu.writes();

describe("adopting an existing tenant", () => {
  it("init into an empty folder, export, validate, plan --detailed-exitcode exits 0; schemas, settings and schema lines resolve", async () => {
    const parent = mkdtempSync(join(tmpdir(), "revsync-adopt-"));
    try {
      const init = await cli(["init", "policy-repo", "--realm", "demo", "--ci", "gitlab"], { cwd: parent });
      expect(init.code).toBe(0);
      expect(init.stdout).toContain("export SANDBOX_BASE_URL=… REVSYNC_CLIENT_ID=…");
      // revsync is not installed in the new repo: the steps install the pin first and run it with
      // npx --no, which never fetches a package named revsync from the npm registry.
      expect(init.stdout).toContain("\n  npm install   ");
      expect(init.stdout).toContain("\n  npx --no -- revsync export ");
      expect(init.stdout).not.toMatch(/npx revsync/);
      const dir = join(parent, "policy-repo");
      for (const f of [
        "revsync.yaml",
        ".gitignore",
        ".vscode/settings.json",
        ".gitlab-ci.yml",
        ".revsync/schemas/policy-file.schema.json",
        ".revsync/schemas/revsync-config.schema.json",
      ]) {
        expect({ f, exists: existsSync(join(dir, f)) }).toEqual({ f, exists: true });
      }
      expect(existsSync(join(dir, "package.json"))).toBe(true);
      // Without recipes there is nothing to install: no package.json, so that `npx revsync` in the repo
      // never looks for a pinned revsync on the npm registry.
      const bare = await cli(["init", "bare-repo", "--realm", "demo"], { cwd: parent });
      expect(bare.code).toBe(0);
      expect(existsSync(join(parent, "bare-repo", "revsync.yaml"))).toBe(true);
      expect(existsSync(join(parent, "bare-repo", "package.json"))).toBe(false);
      expect(bare.stdout).not.toMatch(/npx revsync/);
      const pinned = await cli(["init", "pinned-repo", "--realm", "demo", "--pin", "git+https://example.com/org/revsync.git#v9"], { cwd: parent });
      expect(pinned.stdout).toContain("\n  npm install   ");
      expect(pinned.stdout).toContain("\n  npx --no -- revsync validate\n");
      // Without a pin init knows (this clone's origin is a path on this machine, or none), the install
      // step names the placeholder and how to fill it; every step runs revsync with npx --no.
      expect(bare.stdout).toMatch(/\n {2}npm install --save-dev '(git\+[^']+)' +# (pins revsync in package\.json|fill in the git URL and tag of your revsync)/);
      expect(bare.stdout.indexOf("npm install --save-dev")).toBeLessThan(bare.stdout.indexOf("npx --no -- revsync export"));
      const settings = JSON.parse(readFileSync(join(dir, ".vscode/settings.json"), "utf8"));
      expect(settings["yaml.schemas"]["./.revsync/schemas/policy-file.schema.json"]).toEqual([
        "policies/**/*.yaml",
        "policies/**/*.yml",
        "tests/**/*.yaml",
        "tests/**/*.yml",
      ]);
      expect(readFileSync(join(dir, ".gitlab-ci.yml"), "utf8")).toMatch(/ENVIRONMENT: \[sandbox\]/);

      const env = { SANDBOX_BASE_URL: fx.emu.url };
      const exp = await run(["export"], env, dir);
      expect(exp.code).toBe(0);
      expect(exp.stdout).toContain("wrote policies/ssp/hardware-ssp.yaml");
      // Every exported file's schema line resolves to a file in the repo.
      for (const f of ["policies/default-tenant-configuration.yaml", "policies/ssp/hardware-ssp.yaml"]) {
        const ref = /^# yaml-language-server: \$schema=(\S+)/.exec(readFileSync(join(dir, f), "utf8"))?.[1] ?? "";
        expect(ref).not.toMatch(/node_modules|dist|\/work\//);
        expect(existsSync(resolve(dirname(join(dir, f)), ref))).toBe(true);
      }
      expect((await run(["validate"], env, dir)).code).toBe(0);
      const plan = await run(["plan", "--detailed-exitcode"], env, dir);
      expect(plan.stdout.trim()).toBe('No changes. Environment "sandbox" matches the policy repo.');
      expect(plan.code).toBe(0);
      // The drift cron the CI recipes install is green on day one.
      expect((await run(["drift"], env, dir)).code).toBe(0);

      // The next day: a file renamed and commented by the team, a batch reviewed in the service. Export
      // finds the policy's file by metadata.name and changes that one line where it stands.
      const first = join(dir, "policies/ssp/hardware-ssp.yaml");
      const renamed = join(dir, "policies/ssp/hw.yaml");
      writeFileSync(renamed, readFileSync(first, "utf8").replace("batches:", "# FY26-H2 goes live in July\nbatches:"));
      rmSync(first);
      const state: any = await fx.emu.admin("GET", "state");
      state.tenants[0].ssp.find((p: any) => p.compliance_name === "Hardware SSP").batches.find((b: any) => b.batch_name === "FY26-H2").status = "reviewed";
      await fx.emu.admin("POST", "reset", { state });
      const kept = readFileSync(renamed, "utf8");
      const dry = await run(["export", "--dry-run"], env, dir);
      expect(dry.stdout).toBe(
        "would update policies/ssp/hw.yaml (ssp/Hardware SSP: batch FY26-H2 status)\n\nDry run: 1 file would be written (0 new, 1 updated); nothing was written.\n",
      );
      expect(readFileSync(renamed, "utf8")).toBe(kept);
      const reexport = await run(["export"], env, dir);
      expect(reexport.stdout).toBe("updated policies/ssp/hw.yaml (ssp/Hardware SSP: batch FY26-H2 status)\n");
      expect(readFileSync(renamed, "utf8")).toBe(kept.replace(/(- name: FY26-H2\n\s+status:) file uploaded/, "$1 reviewed"));
      expect(existsSync(first)).toBe(false);
      expect((await run(["validate"], env, dir)).code).toBe(0);
      expect((await run(["plan", "--detailed-exitcode"], env, dir)).code).toBe(0);

      // In a repo that exists, init adds only what is missing, fitted to its revsync.yaml, and touches
      // nothing that exists without --force.
      const config = join(dir, "revsync.yaml");
      writeFileSync(
        config,
        readFileSync(config, "utf8").replace("environments:\n", "environments:\n  production:\n    base_url: ${PROD_URL}\n    realm: acme\n"),
      );
      const before = statSync(config).mtimeMs;
      const gitignore = join(dir, ".gitignore");
      writeFileSync(gitignore, "# ours\n");
      const added = await cli(["init", "policy-repo", "--ci", "github", "--realm", "other"], { cwd: parent });
      expect(added.code).toBe(0);
      expect(added.stdout).toMatch(/^Added to a revsync policy repo in policy-repo:\n.*\n {2}wrote \.github\/workflows\/revsync-plan\.yml\n/);
      // The repo's own .gitignore gets the lines it lacks, under its own.
      expect(added.stdout).toContain("  added plan.json, plan-*.json, *.plan.json, plan-*.md, drift-*.md, policy-tests.xml, node_modules/ to .gitignore\n");
      expect(added.stdout).toContain("  unchanged, already as init writes them: revsync.yaml, .vscode/settings.json, package.json, .revsync/schemas/\n");
      expect(added.stderr).toContain("revsync.yaml exists and is left as it is: --env, --base-url and --realm shape a new one only");
      expect(statSync(config).mtimeMs).toBe(before);
      expect(readFileSync(gitignore, "utf8")).toMatch(
        /^# ours\n# Saved plans .*\nplan\.json\nplan-\*\.json\n\*\.plan\.json\nplan-\*\.md\ndrift-\*\.md\npolicy-tests\.xml\nnode_modules\/\n$/,
      );
      const recipe = readFileSync(join(dir, ".github/workflows/revsync-plan.yml"), "utf8");
      expect(recipe).toContain("environment: [production, sandbox]");
      expect(recipe).toContain("PROD_URL: ${{ vars.PROD_URL }}\n      SANDBOX_BASE_URL: ${{ vars.SANDBOX_BASE_URL }}\n");
      expect((await cli(["init", "policy-repo", "--realm", "other", "--force"], { cwd: parent })).code).toBe(0);
      expect(readFileSync(config, "utf8")).toContain('realm: "other"');
    } finally {
      removeDir(parent);
    }
    // Some fifteen CLI runs in a row (init, export twice, validate, plan, drift, init again): about 14 s
    // alone, over 30 s when the suite shares two loaded cores.
  }, 90_000);
});

describe("init in a repo that has its own .gitignore and package.json", () => {
  it("adds the lines and the pin they lack (--pin is honoured), says so, and a second run says what it left unchanged, with no empty Next:", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-init-own-"));
    try {
      writeFileSync(join(dir, ".gitignore"), "dist/\n*.plan.json");
      writeFileSync(join(dir, "package.json"), '{\n    "name": "mine",\n    "devDependencies": { "x": "1" }\n}\n');
      const pin = "git+https://example.com/org/revsync.git#v9";
      const first = await cli(["init", ".", "--ci", "github", "--pin", pin, "--realm", "demo"], { cwd: dir });
      expect(first.code).toBe(0);
      expect(first.stdout).toContain("  added plan.json, plan-*.json, plan-*.md, drift-*.md, policy-tests.xml, node_modules/ to .gitignore\n");
      expect(first.stdout).toContain(`  added devDependencies.revsync in package.json: "${pin}"\n`);
      expect(first.stdout).toContain("  npm install   ");
      expect(readFileSync(join(dir, ".gitignore"), "utf8")).toMatch(
        /^dist\/\n\*\.plan\.json\n# Saved plans .*\nplan\.json\nplan-\*\.json\nplan-\*\.md\ndrift-\*\.md\npolicy-tests\.xml\nnode_modules\/\n$/,
      );
      expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))).toEqual({ name: "mine", devDependencies: { x: "1", revsync: pin } });
      // Only the pin is added: the file's own layout (four spaces, a one-line object) is kept.
      expect(readFileSync(join(dir, "package.json"), "utf8")).toBe(`{\n    "name": "mine",\n    "devDependencies": { "revsync": "${pin}", "x": "1" }\n}\n`);
      // Another --pin changes it; the same run again changes nothing and says so.
      const other = await cli(["init", ".", "--ci", "github", "--pin", `${pin}0`], { cwd: dir });
      expect(other.stdout).toContain(`  changed devDependencies.revsync in package.json: "${pin}0" (was "${pin}")\n`);
      const again = await cli(["init", ".", "--ci", "github", "--pin", `${pin}0`], { cwd: dir });
      expect(again.code).toBe(0);
      expect(again.stdout).toContain("  nothing: every file init writes is there\n");
      expect(again.stdout).toContain(
        "  unchanged, already as init writes them: revsync.yaml, .gitignore, .vscode/settings.json, package.json, .github/workflows/revsync-plan.yml, .github/workflows/revsync-apply.yml, .github/workflows/revsync-drift.yml, .revsync/schemas/\n",
      );
      expect(again.stdout).not.toContain("Next:");
    } finally {
      removeDir(dir);
    }
  });
});

describe("init --ci in a repo whose package.json pins revsync at a path on this machine", () => {
  it("warns on stderr that a CI runner cannot fetch it, naming the spec and what to pin instead; a git+https pin gets no such warning", async () => {
    for (const spec of ["file:../revsync", "git+file:///srv/git/revsync.git#v1", "../revsync", "link:../revsync"]) {
      const dir = mkdtempSync(join(tmpdir(), "revsync-init-pinned-"));
      try {
        writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "mine", devDependencies: { revsync: spec } }, null, 2)}\n`);
        const r = await cli(["init", ".", "--ci", "github", "--realm", "demo"], { cwd: dir });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr, spec).toContain(`package.json pins revsync at ${JSON.stringify(spec)}, a path on this machine: a CI runner cannot fetch it`);
        expect(r.stderr, spec).toContain(
          "Pin a version from an npm registry your CI reaches, or a git+https URL at a release tag or full commit id (init --pin ",
        );
        expect(r.stdout).not.toContain("a CI runner cannot fetch it");
        // The pin is the user's: left as it was.
        expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).devDependencies.revsync).toBe(spec);
      } finally {
        removeDir(dir);
      }
    }
    const dir = mkdtempSync(join(tmpdir(), "revsync-init-pinned-"));
    try {
      writeFileSync(join(dir, "package.json"), '{ "devDependencies": { "revsync": "git+https://example.com/org/revsync.git#v1" } }\n');
      const r = await cli(["init", ".", "--ci", "gitlab", "--realm", "demo"], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain("cannot fetch");
    } finally {
      removeDir(dir);
    }
  });
});

describe("targets mean what they say", () => {
  it("a batch address works in plan, apply and drift; exact and case-sensitive", async () => {
    const target = "ssp/Hardware SSP/batch/FY26-H1";
    const plan = JSON.parse((await run(["plan", "--target", target, "--format", "json"])).stdout);
    expect(plan.changes.map((c: any) => `${c.action} ${c.address}`)).toEqual([`approve ${target}`]);
    const drift = await run(["drift", "--target", target, "--format", "json"]);
    expect(JSON.parse(drift.stdout).drift.map((d: any) => `${d.class} ${d.address}`)).toEqual([`batch_status ${target}`]);
    const apply = await run(["apply", "--target", target, "--auto-approve"]);
    expect(apply.stdout).toContain("Apply complete: 1 done, 0 failed, 0 skipped.");
    expect((await writes()).map((w) => w.path)).toEqual(["/apis/policy-sets/v1/policy/ssp/approve/SSP-HW/FY26-H1"]);
  });

  it("a target that matches nothing is an error naming the closest addresses, in plan, apply and drift; nothing sent", async () => {
    for (const cmd of [["plan"], ["apply", "--auto-approve"], ["drift"]]) {
      const r = await run([...cmd, "--target", "ssp/hardware ssp", "--target", "ssp/Nope"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`"ssp/hardware ssp": did you mean --target 'ssp/Hardware SSP'?`);
      expect(r.stderr).toContain('"ssp/Nope"');
      expect(r.stdout).toBe("");
    }
    expect(await writes()).toEqual([]);
  });
});

describe("machine output is pure", () => {
  it("--format json on an invalid repo: stdout holds only a JSON error with the diagnostics; the words go to stderr", async () => {
    const bad = join(fx.repo, "policies", "bad.yaml");
    writeFileSync(bad, "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Bad }\nspec: { method: nope }\n");
    try {
      const json = await run(["plan", "--format", "json"]);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout).format_version).toBe("1");
      const err = JSON.parse(json.stdout).error;
      expect(err.kind).toBe("policy");
      expect(err.diagnostics[0]).toMatchObject({ file: "policies/bad.yaml", line: 4, column: 17 });
      expect(json.stderr).toMatch(/policies\/bad\.yaml:4:17: error: spec\.method: expected one of/);
      const md = await run(["plan", "--format", "markdown"]);
      expect(md.code).toBe(1);
      expect(md.stdout).toBe("");
    } finally {
      removeDir(bad);
    }
  });

  it("--format json with a wrong command line: the JSON error object on stdout, 'Error: …' on stderr", async () => {
    for (const args of [
      ["plan", "--format", "json", "--bogus"],
      ["plan", "--bogus", "--format=json"],
    ]) {
      const r = await run(args);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toEqual({ format_version: "1", error: { kind: "user", message: "unknown option '--bogus'" } });
      expect(r.stderr).toBe("Error: unknown option '--bogus'\n");
    }
  });

  it("drift --all-envs --format json: one entry per environment, the failed one with its error; apply's JSON report has format_version", async () => {
    const cfg = join(fx.repo, "revsync.yaml");
    const original = readFileSync(cfg, "utf8");
    writeFileSync(cfg, `${original}  broken:\n    base_url: http://127.0.0.1:9\n    realm: demo\n    vars: { contra_account: MJ-CONTRA-100 }\n`);
    try {
      const r = await run(["drift", "--all-envs", "--format", "json"], { REVSYNC_MAX_RETRY_WAIT_MS: "1" });
      expect(r.code).toBe(1);
      const all = JSON.parse(r.stdout);
      expect(all.format_version).toBe("1");
      const entries = all.environments;
      expect(entries.map((e: any) => e.environment)).toEqual(["demo", "broken"]);
      expect(entries[0].drift.length).toBeGreaterThan(0);
      expect(entries[1].error).toMatchObject({ kind: "service", status: 0 });
      // An override names one tenant: over every environment it would make each report that tenant's state.
      await fx.emu.admin("DELETE", "requests");
      const blurred = await run(["drift", "--all-envs"], { REVSYNC_BASE_URL: fx.emu.url });
      expect(blurred.code).toBe(1);
      expect(blurred.stderr).toContain(
        "Error: REVSYNC_BASE_URL is set, and --all-envs reads every environment: it would point each of them at the same tenant, so nothing was read",
      );
      expect(blurred.stderr).toContain(
        "Hint: unset REVSYNC_BASE_URL to check every environment with the URLs of revsync.yaml, or check the one environment it is for with --env NAME",
      );
      expect(await fx.emu.admin("GET", "requests")).toEqual([]);
      // Named with --env, the override applies to that environment alone.
      const one = await run(["drift", "--env", "broken"], { REVSYNC_BASE_URL: fx.emu.url, REVSYNC_AUTH_URL: fx.emu.url });
      expect(one.stdout).toContain('environment "broken"');
      expect(one.code).toBe(2);
    } finally {
      writeFileSync(cfg, original);
    }
    const apply = JSON.parse((await run(["apply", "--auto-approve", "--format", "json"])).stdout);
    expect(apply.format_version).toBe("1");
  });
});

describe("files a user names", () => {
  it("--out and --output: a folder or an unwritable place is a plain error naming the path; missing parents are created", async () => {
    const folder = join(fx.repo, "a-folder");
    mkdirSync(folder, { recursive: true });
    for (const args of [
      ["plan", "--out", folder],
      ["ssp", "download", "FILE-SSP-HW-2", "--output", folder],
      ["ssp", "template", "--output", "/proc/version/template.csv"],
    ]) {
      const r = await run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /Error: cannot write .*(a-folder|template\.csv)[^:]*: (it is a folder|a part of the path is a file, not a folder|no such file or folder|permission denied|the file system is read-only)/,
      );
      expect(r.stderr).not.toMatch(/internal error/);
    }
    const nested = join(fx.repo, "out", "deeper", "hw.csv");
    expect((await run(["ssp", "download", "FILE-SSP-HW-2", "--output", nested])).code).toBe(0);
    expect(readFileSync(nested, "utf8")).toMatch(/^product_id,/);
    expect((await run(["plan", "--out", join(fx.repo, "plans", "new", "p.plan.json")])).code).toBe(0);
  });
});

describe("exit codes and small things a user saw", () => {
  it("--detailed-exitcode: 0 with a warning when only entries apply does not act on remain; drift still 2", async () => {
    expect((await run(["apply", "--auto-approve"])).code).toBe(0);
    const hw = join(fx.repo, "policies", "ssp", "hardware.yaml");
    const original = readFileSync(hw, "utf8");
    writeFileSync(hw, original.replace("hierarchy_no: 10", "hierarchy_no: 11"));
    try {
      const plan = await run(["plan", "--detailed-exitcode"]);
      expect(plan.code).toBe(0);
      expect(plan.stderr).toContain("only entries that revsync does not apply remain (1 unsupported, listed with their reasons): apply would do nothing");
      expect((await run(["drift"])).code).toBe(2);
    } finally {
      writeFileSync(hw, original);
    }
  });

  it("TLS failures in plain words; the verbose log shows query strings; hints are never garbled by the redactor", async () => {
    // Answered at once: nothing was sent, and sending again cannot help (the sign-in, and a request
    // made with a given token).
    const https = { REVSYNC_BASE_URL: fx.emu.url.replace("http:", "https:"), REVSYNC_AUTH_URL: fx.emu.url.replace("http:", "https:") };
    for (const env of [https, { ...https, REVSYNC_TOKEN: "a-bearer-token-1" }]) {
      const tls = await run(["plan", "--verbose"], env);
      expect(tls.code).toBe(1);
      expect(tls.stderr).toContain("the server did not answer TLS: is the URL http?");
      expect(tls.stderr).not.toMatch(/retry|attempts/);
    }
    const verbose = await run(["plan", "--verbose"]);
    expect(verbose.stderr).toMatch(/http GET \/apis\/policy-sets\/v1\/policy\/ssp\?policy_name=Hardware\+SSP 200/);
    // A wrong password that is also a word of revsync's advice: redacted in what the service said, never in the hint.
    const wrong = await run(["plan"], { REVSYNC_PASSWORD: "REVSYNC_USERNAME" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("Hint: check REVSYNC_CLIENT_ID, REVSYNC_CLIENT_SECRET, REVSYNC_USERNAME and REVSYNC_PASSWORD");
  });
});

describe("the emulator", () => {
  it("refuses a structurally wrong --state with the field, exit 1", async () => {
    const file = join(fx.repo, "bad-state.json");
    writeFileSync(
      file,
      JSON.stringify({ version: 1, seq: 1, tokens: {}, tenants: [{ realm: "demo", environment: "sandbox", clients: {}, users: { alice: { password: 7 } } }] }),
    );
    const r = await cli(["emulator", "--port", "0", "--state", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot read --state");
    expect(r.stderr).toContain("state.tenants[0].users.alice.password must be a string");
  });
});
