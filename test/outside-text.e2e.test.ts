import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmulatorState, TenantState } from "../src/emulator/state.js";
import { api, cli, DEMO_ENV, removeDir, startEmu, tempRepo, token, updateBody, type CliResult, type Emu } from "../src/testing/helpers.js";

// Text from outside is data, never an instruction (issue 33): what the service holds is written to git
// so that it reads back as the same text, a policy file reads only the variables its repo declares and
// never revsync's own credentials, a URL never carries a password, and no file is written through a
// link that leads out of its folder. Through the CLI's command entry against the emulator.
const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const SECRET = "MJ-${REVSYNC_PASSWORD}";

/** The service changed as `change` says, from outside revsync (the emulator's admin state). */
async function changeService(emu: Emu, change: (t: TenantState) => void): Promise<void> {
  const state = await emu.admin<EmulatorState>("GET", "state");
  const t = state.tenants[0];
  if (!t) throw new Error("no tenant");
  change(t);
  await emu.admin("POST", "reset", { state });
}

/** export, validate, then plan --detailed-exitcode in the repo: each clean, the plan "No changes". */
async function exportThenPlan(run: (args: string[]) => Promise<CliResult>): Promise<CliResult> {
  const e = await run(["export"]);
  expect(e.stderr).not.toMatch(/internal error/);
  expect(e.code).toBe(0);
  expect((await run(["validate"])).code).toBe(0);
  const p = await run(["plan", "--detailed-exitcode"]);
  expect(p.stdout).toMatch(/^No changes\./);
  expect(p.code).toBe(0);
  return p;
}

/** A folder outside any repo, holding one file that must stay untouched. */
function outsideFile(name: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "revsync-outside-"));
  writeFileSync(join(dir, name), "untouched\n");
  return { dir, file: join(dir, name) };
}

const contraOf = async (emu: Emu): Promise<unknown> =>
  (await emu.admin<EmulatorState>("GET", "state")).tenants[0]?.tenantConfigurations[0]?.compliance_spec?.[0]?.manual_journal_contra_account;

for (const profile of ["default", "literal"] as const) {
  describe(`service text reads back as itself (${profile} profile)`, () => {
    let emu: Emu;
    beforeAll(async () => {
      emu = await startEmu("demo", { profile });
    });
    afterAll(async () => emu.close());

    it("a secret's name set in the service by another user is exported as text: validate is clean, plan says No changes, apply sends nothing", async () => {
      await emu.reset();
      // bob, another user of the service, writes the text through its own interface.
      const bob = await token(emu.url, "bob");
      const live = (await api(emu.url, bob, "GET", TC)).body[0];
      const patched = await api(emu.url, bob, "PATCH", `${TC}/${live.compliance_id}`, updateBody(live, { manual_journal_contra_account: SECRET }, "bob"));
      expect(patched.status).toBe(200);
      await emu.admin("DELETE", "requests");

      // A repo that reads the field through ${contra_account} (its vars take the text), one that holds a
      // literal (spliced in place), and an empty one (new files).
      const viaVars = tempRepo(emu.url);
      const literal = tempRepo(emu.url);
      const empty = tempRepo(emu.url, {});
      // A policy the service lacks (plan would create it) is not what these repos are about.
      for (const r of [viaVars, literal]) rmSync(join(r, "policies", "ssp", "training.yaml"));
      const tcFile = join(literal, "policies", "tenant-configuration.yaml");
      writeFileSync(tcFile, readFileSync(tcFile, "utf8").replace("${contra_account}", "MJ-OLD"));
      try {
        for (const repo of [viaVars, literal, empty]) {
          const run = (args: string[]) => cli(args, { cwd: repo, env: DEMO_ENV });
          const p = await exportThenPlan(run);
          expect(p.stdout + p.stderr).not.toMatch(/redacted|alice-password/);
          if (repo !== viaVars) continue;
          const a = await run(["apply", "--auto-approve"]);
          expect(a.code).toBe(0);
          expect(a.stdout + a.stderr).not.toMatch(/redacted|alice-password/);
        }
        expect(readFileSync(join(viaVars, "revsync.yaml"), "utf8")).toContain('contra_account: "MJ-$${REVSYNC_PASSWORD}"');
        expect(readFileSync(join(viaVars, "policies", "tenant-configuration.yaml"), "utf8")).toContain("manual_journal_contra_account: ${contra_account}");
        expect(readFileSync(tcFile, "utf8")).toContain('manual_journal_contra_account: "MJ-$${REVSYNC_PASSWORD}"');
        const created = readdirSync(join(empty, "policies")).filter((f) => f.endsWith(".yaml"));
        expect(created.map((f) => readFileSync(join(empty, "policies", f), "utf8")).join("")).toContain(
          "manual_journal_contra_account: MJ-$${REVSYNC_PASSWORD}\n",
        );
        // The secret never reached the service: nothing was written, and it holds bob's text.
        expect(await emu.writes()).toEqual([]);
        expect(await contraOf(emu)).toBe(SECRET);
      } finally {
        for (const r of [viaVars, literal, empty]) removeDir(r);
      }
    }, 90_000);

    it("names, batch names and fields holding ${HOME}, $${, markup and quotes: export then plan is No changes", async () => {
      const odd = [
        "${HOME}",
        "$${HOME}",
        "<!-- x",
        "</details>",
        "a | b",
        "`tick`",
        "\u202eevil",
        " lead",
        "null",
        "yes",
        "123",
        "- item",
        "a: b # c",
        "'\"",
        "\\",
      ];
      await changeService(emu, (t) => {
        const spec = t.tenantConfigurations[0]?.compliance_spec?.[0];
        if (spec) Object.assign(spec, { manual_journal_contra_account: "${HOME}/x", prorate_method: odd.join(" "), ui_mode: "$${HOME}" });
        t.ssp.forEach((p, i) => {
          const name = `${odd[i % odd.length]} ${p.compliance_name}`;
          p.compliance_name = name;
          p.item.name = name;
          p.item.type = odd[(i + 1) % odd.length] ?? "";
          p.batches.forEach((b, j) => {
            b.policy_name = name;
            b.name = b.batch_name = `${b.name} ${odd[(i + j + 2) % odd.length]}`;
          });
        });
      });
      const repo = tempRepo(emu.url, {});
      const run = (args: string[]) => cli(args, { cwd: repo, env: { ...DEMO_ENV, HOME: "/home/someone" } });
      try {
        const p = await exportThenPlan(run);
        expect(p.stdout).not.toContain("/home/someone");
        const again = await run(["export"]);
        expect(again.stdout).toMatch(/^Nothing to export/m);
      } finally {
        removeDir(repo);
      }
    });
  });
}

describe("what a file may read, where a URL may point, where a file may be written", () => {
  let emu: Emu;
  beforeAll(async () => {
    emu = await startEmu("demo");
  });
  afterAll(async () => emu.close());
  const requests = async () => (await emu.admin<unknown[]>("GET", "requests")).length;

  it("a policy file or revsync.yaml naming ${REVSYNC_PASSWORD} (or another sign-in variable) is an error at file:line in validate and plan; nothing is sent", async () => {
    const repo = tempRepo(emu.url);
    const tcFile = join(repo, "policies", "tenant-configuration.yaml");
    writeFileSync(tcFile, readFileSync(tcFile, "utf8").replace("${contra_account}", "MJ-${REVSYNC_PASSWORD}"));
    const cfg = join(repo, "revsync.yaml");
    writeFileSync(cfg, readFileSync(cfg, "utf8").replace("    vars:\n", "    vars:\n      secret: ${REVSYNC_CLIENT_SECRET}\n"));
    const run = (args: string[]) => cli(args, { cwd: repo, env: DEMO_ENV });
    const message = (name: string) => `\${${name}} is one of revsync's own sign-in variables, which no file may read`;
    try {
      await emu.admin("DELETE", "requests");
      const v = await run(["validate"]);
      expect(v.code).toBe(1);
      expect(v.stdout).toContain(`policies/tenant-configuration.yaml:18:34: error: ${message("REVSYNC_PASSWORD")}`);
      expect(v.stdout).toContain(`revsync.yaml:9:15: error: environments.demo.vars.secret: ${message("REVSYNC_CLIENT_SECRET")}`);
      const p = await run(["plan"]);
      expect(p.code).toBe(1);
      expect(p.stderr).toContain(`revsync.yaml:9:15: error: environments.demo.vars.secret: ${message("REVSYNC_CLIENT_SECRET")}`);
      writeFileSync(cfg, readFileSync(cfg, "utf8").replace("      secret: ${REVSYNC_CLIENT_SECRET}\n", ""));
      const p2 = await run(["plan"]);
      expect(p2.code).toBe(1);
      expect(p2.stderr).toContain(`policies/tenant-configuration.yaml:18:34: error: ${message("REVSYNC_PASSWORD")}`);
      // In revsync.yaml's URLs too, offline.
      writeFileSync(cfg, readFileSync(cfg, "utf8").replace(/realm: demo/, "realm: ${REVSYNC_TOKEN}"));
      expect((await run(["validate"])).stdout).toContain(`revsync.yaml:7:12: error: environments.demo.realm: ${message("REVSYNC_TOKEN")}`);
      const out = [v, p, p2].map((r) => r.stdout + r.stderr).join("");
      expect(out).not.toContain("alice-password");
      expect(out).not.toContain("demo-secret");
      expect(await emu.writes()).toEqual([]);
    } finally {
      removeDir(repo);
    }
  });

  it("a base_url or auth_url with a user and password is refused at load, naming where it came from; the password appears nowhere", async () => {
    const PW = "hunter2-in-url";
    const withPw = emu.url.replace("http://", `http://someone:${PW}@`);
    const repo = tempRepo(emu.url);
    const cfg = join(repo, "revsync.yaml");
    const plain = readFileSync(cfg, "utf8");
    const evidence = join(repo, "audit");
    const run = (args: string[], env: Record<string, string> = {}) => cli(args, { cwd: repo, env: { ...DEMO_ENV, ...env } });
    const seen: string[] = [];
    try {
      await emu.admin("DELETE", "requests");
      // Written into revsync.yaml: validate (offline) and every command refuse it at its line.
      writeFileSync(cfg, plain.replace(`base_url: ${emu.url}`, `base_url: ${withPw}`));
      const v = await run(["validate"]);
      expect(v.code).toBe(1);
      expect(v.stdout).toMatch(
        /revsync\.yaml:5:15: error: environments\.demo\.base_url: it holds a user name and password \(http:\/\/\[credentials\]@127\.0\.0\.1:\d+\): credentials never go in a URL/,
      );
      seen.push(v.stdout + v.stderr);
      for (const args of [
        ["plan", "--out", "p.json", "--verbose"],
        ["apply", "--auto-approve", "--verbose", "--evidence", evidence],
        ["drift"],
        ["export"],
        ["ssp", "batches"],
      ]) {
        const r = await run(args);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain("revsync.yaml:5:15: error: environments.demo.base_url: it holds a user name and password");
        seen.push(r.stdout + r.stderr);
      }
      // From a variable: named with the variable and its line. From the override: named with it.
      writeFileSync(cfg, plain.replace(`auth_url: ${emu.url}`, "auth_url: ${AUTH}"));
      const fromVar = await run(["plan", "--verbose"], { AUTH: withPw });
      expect(fromVar.code).toBe(1);
      expect(fromVar.stderr).toContain("revsync.yaml:6:15: error: environments.demo.auth_url (from ${AUTH}): it holds a user name and password");
      writeFileSync(cfg, plain);
      const override = await run(["plan", "--verbose"], { REVSYNC_BASE_URL: withPw });
      expect(override.code).toBe(1);
      expect(override.stderr).toContain("REVSYNC_BASE_URL: it holds a user name and password");
      const noRepo = await cli(["approvals", "list", "--verbose"], { cwd: tmpdir(), env: { ...DEMO_ENV, REVSYNC_BASE_URL: withPw, REVSYNC_REALM: "demo" } });
      expect(noRepo.code).toBe(1);
      expect(noRepo.stderr).toContain("REVSYNC_BASE_URL: it holds a user name and password");
      const init = await cli(["init", join(repo, "new"), "--base-url", withPw], { cwd: repo });
      expect(init.code).toBe(1);
      expect(init.stderr).toContain("--base-url: it holds a user name and password");
      seen.push(...[fromVar, override, noRepo, init].map((r) => r.stdout + r.stderr));
      for (const text of seen) expect(text).not.toContain(PW);
      expect(existsSync(join(repo, "p.json"))).toBe(false);
      expect(existsSync(evidence) ? readdirSync(evidence) : []).toEqual([]);
      expect(existsSync(join(repo, "new"))).toBe(false);
      expect(await requests()).toBe(0);
    } finally {
      removeDir(repo);
    }
  });

  it("a values CSV linked outside the repo: export refuses it naming the link and writes nothing through it; the rest is written", async () => {
    await emu.reset();
    const repo = tempRepo(emu.url);
    const { dir: outsideDir, file: outside } = outsideFile("outside.csv");
    const link = join(repo, "policies", "ssp", "values", "hardware-fy26-h1.csv");
    rmSync(link);
    symlinkSync(outside, link);
    // The service's contra account differs from git's vars too: revsync.yaml is written.
    const cfg = readFileSync(join(repo, "revsync.yaml"), "utf8");
    try {
      const e = await cli(["export"], { cwd: repo, env: DEMO_ENV });
      expect(e.code).toBe(1);
      expect(e.stderr).toContain(
        `policies/ssp/values/hardware-fy26-h1.csv is a symbolic link to ${realpathSync(outside)}, outside the policy repo: nothing is written through it (values of ssp/Hardware SSP/batch/FY26-H1)`,
      );
      expect(e.stderr).toMatch(/export left 1 file outside the folder as it was/);
      expect(readFileSync(outside, "utf8")).toBe("untouched\n");
      expect(readFileSync(join(repo, "revsync.yaml"), "utf8")).not.toBe(cfg); // the rest is written
      const v = await cli(["validate"], { cwd: repo, env: DEMO_ENV });
      expect(v.stdout).toContain("is a link that leads outside the policy repo");
    } finally {
      removeDir(repo);
      removeDir(outsideDir);
    }
  });

  it("plan --out, init and evidence: of revsync.yaml never write through a link that leads out of their folder", async () => {
    await emu.reset();
    const repo = tempRepo(emu.url);
    const { dir: outsideDir, file: outside } = outsideFile("target.json");
    const run = (args: string[], cwd = repo) => cli(args, { cwd, env: DEMO_ENV });
    try {
      // A plan file named by the user: wherever it is named, but not through a link out of its folder.
      symlinkSync(outside, join(repo, "plan.json"));
      const p = await run(["plan", "--out", "plan.json"]);
      expect(p.code).toBe(1);
      expect(p.stderr).toContain(`plan.json is a symbolic link to ${realpathSync(outside)}, outside `);
      expect(readFileSync(outside, "utf8")).toBe("untouched\n");
      const elsewhere = join(outsideDir, "plan.json");
      expect((await run(["plan", "--out", elsewhere])).code).toBe(0);
      expect(JSON.parse(readFileSync(elsewhere, "utf8")).format_version).toBe("1");

      // init: a folder of the new repo that links out is refused before anything is written.
      const fresh = join(outsideDir, "fresh");
      mkdirSync(fresh);
      symlinkSync(outsideDir, join(fresh, ".vscode"));
      const i = await run(["init", fresh]);
      expect(i.code).toBe(1);
      expect(i.stderr).toMatch(/\.vscode is a symbolic link to .*, outside the folder init writes/);
      expect(readdirSync(fresh)).toEqual([".vscode"]);
      expect(existsSync(join(outsideDir, "settings.json"))).toBe(false);

      // evidence: of revsync.yaml is a path from a file: inside the repo only; --evidence may name any folder.
      const cfg = join(repo, "revsync.yaml");
      writeFileSync(cfg, readFileSync(cfg, "utf8").replace("environments:", `evidence: ${join(outsideDir, "audit")}\nenvironments:`));
      await emu.admin("DELETE", "requests");
      const a = await run(["apply", "--auto-approve"]);
      expect(a.code).toBe(1);
      expect(a.stderr).toMatch(/evidence: of revsync\.yaml: .*audit lies outside the policy repo: not written; nothing was sent/);
      expect(await emu.writes()).toEqual([]);
      expect(existsSync(join(outsideDir, "audit"))).toBe(false);
    } finally {
      removeDir(repo);
      removeDir(outsideDir);
    }
  });

  it("a name the service holds that git cannot hold (a control character, a dot segment) is left out by export, named; plan shows it as not in git (apply cannot manage it)", async () => {
    await changeService(emu, (t) => {
      const p = t.ssp.find((x) => x.compliance_name === "Professional Services SSP");
      if (p) {
        p.compliance_name = p.item.name = "Services\u0007SSP";
        p.batches.forEach((b) => (b.policy_name = "Services\u0007SSP"));
      }
      const hw = t.ssp.find((x) => x.compliance_name === "Hardware SSP");
      const b = hw?.batches[0];
      if (b) b.name = b.batch_name = "..";
    });
    const repo = tempRepo(emu.url, {});
    const run = (args: string[]) => cli(args, { cwd: repo, env: DEMO_ENV });
    try {
      const e = await run(["export"]);
      expect(e.code).toBe(0);
      expect(e.stderr).toContain('SSP policy "Services\\u0007SSP" (its name cannot be used in a policy file: "Services\\u0007SSP" holds a control character)');
      expect(e.stderr).toContain('ssp/Hardware SSP: batch ".." (its name cannot be used in a policy file: ".." is a dot segment');
      expect(readFileSync(join(repo, "policies", "ssp", "hardware-ssp.yaml"), "utf8")).toContain(
        '# batch "..": not listed, its name cannot be used in a policy file',
      );
      expect((await run(["validate"])).code).toBe(0);
      const p = await run(["plan", "--detailed-exitcode"]);
      expect(p.code).toBe(0);
      expect(p.stdout).toContain("(not in git)");
      expect(
        JSON.parse((await run(["plan", "--format", "json"])).stdout).changes.map((c: { address: string; action: string }) => [c.address, c.action]),
      ).toEqual([
        ["ssp/Hardware SSP/batch/..", "not_in_git"],
        ["ssp/Services\u0007SSP", "not_in_git"],
      ]);
    } finally {
      removeDir(repo);
    }
  });
});
