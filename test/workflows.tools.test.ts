import { spawn, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { api, cli, multiEnvState, needsTool, npxShim, removeDir, ROOT, startEmu, token, updateBody, type Emu } from "../src/testing/helpers.js";

// Runs the shell steps of the CI recipes in examples/ci against the emulator (not GitHub or GitLab),
// so that the recipes cannot rot. `uses:` steps (checkout, artifacts, comments) are the CI's own; the
// install step runs in repos made by init (below), whose package.json pins revsync; everything else
// runs as written.
let emu: Emu;
let work: string;
/** The emulator's state as started: each test's two tenants are copies of its tenant, whatever a test before applied. */
let seeded: { tenants: unknown[] };
const shim = npxShim();

beforeAll(async () => {
  emu = await startEmu();
  seeded = await emu.admin("GET", "state");
});
afterAll(async () => {
  if (work) removeDir(work);
  await emu.close();
});
beforeEach(async () => {
  await emu.admin("POST", "reset", { state: multiEnvState(seeded) });
  outcomes = {};
  if (work) removeDir(work);
  work = join(ROOT, ".revsync-tmp", `wf-${process.pid}-${Date.now()}`);
  mkdirSync(work, { recursive: true });
  cpSync(join(ROOT, "examples", "multi-env"), work, { recursive: true });
});

function ciEnv(env: string): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    PATH: `${shim}:${process.env.PATH ?? ""}`,
    NO_COLOR: "1",
    CI: "true",
    ENVIRONMENT: env,
    SANDBOX_BASE_URL: emu.url,
    SANDBOX_AUTH_URL: emu.url,
    PRODUCTION_BASE_URL: `${emu.url}/tenants/acme`,
    PRODUCTION_AUTH_URL: emu.url,
    REVSYNC_CLIENT_ID: "revsync",
    REVSYNC_CLIENT_SECRET: "demo-secret",
    REVSYNC_USERNAME: "alice",
    REVSYNC_PASSWORD: "alice-password",
    GITHUB_OUTPUT: join(work, `output-${env}`),
    GITHUB_STEP_SUMMARY: join(work, `summary-${env}`),
    GITHUB_ENV: join(work, `github-env-${env}`),
  };
}

/** The install step of a recipe: what the repo's package.json pins. */
const INSTALL = /\bnpm (ci|install)\b/;

/** Async on purpose: the emulator answers from this same process. */
function sh(script: string, env: Record<string, string>, cwd = work): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["--norc", "-e", "-c", script], { cwd, env });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, out: out.replace(/^npm warn Unknown (env|user) config "nodedir".*\n/gm, "") }));
  });
}

function outputs(env: string): Record<string, string> {
  const file = join(work, `output-${env}`);
  if (!existsSync(file)) return {};
  return Object.fromEntries(
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split("=", 2) as [string, string]),
  );
}

/** Runs a GitHub job's run steps in order; stops at the first failure, as Actions does. */
/** What the `uses:` steps (not run here) ended as, by step id: success unless a test says otherwise. */
let outcomes: Record<string, string> = {};
/** What earlier steps of the job wrote to GITHUB_ENV, as Actions passes it to the later steps. */
function githubEnv(env: string): Record<string, string> {
  const file = join(work, `github-env-${env}`);
  if (!existsSync(file)) return {};
  return Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

async function runJob(workflow: string, job: string, env: string, extra: Record<string, string> = {}): Promise<{ code: number; out: string; step?: string }> {
  const wf = parse(readFileSync(join(ROOT, "examples", "ci", "github", workflow), "utf8"));
  let out = "";
  const expr = (text: string) =>
    text.replace(/\$\{\{ matrix\.environment \}\}/g, env).replace(/\$\{\{ steps\.\w+\.outputs\.(\w+) \}\}/g, (_m, k: string) => outputs(env)[k] ?? "");
  for (const step of wf.jobs[job].steps as { name?: string; run?: string; if?: string; env?: Record<string, string> }[]) {
    if (!step.run || INSTALL.test(step.run)) continue;
    if (step.if) {
      const m = /steps\.(\w+)\.outputs\.(\w+) == '(.*)'/.exec(step.if);
      if (m && outputs(env)[m[2] ?? ""] !== m[3]) continue;
      const o = /steps\.(\w+)\.outcome != 'success'/.exec(step.if);
      if (o && (outcomes[o[1] ?? ""] ?? "success") === "success") continue;
    }
    const script = expr(step.run);
    expect(script).not.toMatch(/\$\{\{/);
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expr(v)]));
    const r = await sh(script, { ...ciEnv(env), ...githubEnv(env), ...extra, ...stepEnv });
    out += r.out;
    if (r.code !== 0) return { code: r.code, out, step: step.name };
  }
  return { code: 0, out };
}

async function changeOutside(realm: string): Promise<void> {
  const bob = await token(emu.url, "bob", realm);
  const base = realm === "acme" ? `${emu.url}/tenants/acme` : emu.url;
  const env = (await api(base, bob, "GET", "/apis/policy-sets/v1/policy/tenant-configurations")).body[0];
  const body = updateBody(env, { carves_allocation: false }, "bob");
  expect((await api(base, bob, "PATCH", `/apis/policy-sets/v1/policy/tenant-configurations/${env.compliance_id}`, body)).status).toBe(200);
}

describe("every recipe", () => {
  it("runs revsync as npx --no -- revsync: npx never fetches a registry package of that name with the tenant's credentials", () => {
    const files = [
      "github/revsync-plan.yml",
      "github/revsync-apply.yml",
      "github/revsync-drift.yml",
      "github/revsync-promote.yml",
      "gitlab/.gitlab-ci.yml",
      "gitlab/promote.gitlab-ci.yml",
    ];
    for (const f of files) {
      const text = readFileSync(join(ROOT, "examples", "ci", f), "utf8");
      const calls = text.match(/\bnpx\b.*/g) ?? [];
      expect(calls.length, f).toBeGreaterThan(0);
      for (const call of calls) expect(call, f).toMatch(/^npx --no -- revsync /);
    }
  });

  it("comments the saved plan (show of the plan file apply applies), never a second read of the tenant", () => {
    for (const f of ["github/revsync-plan.yml", "gitlab/.gitlab-ci.yml"]) {
      const text = readFileSync(join(ROOT, "examples", "ci", f), "utf8");
      expect(text.match(/revsync plan --env "\$ENVIRONMENT"/g), f).toHaveLength(f.startsWith("gitlab") ? 2 : 1);
      expect(text, f).toContain('npx --no -- revsync show "plan-$ENVIRONMENT.json" --format markdown > "plan-$ENVIRONMENT.md"');
      expect(text, f).not.toMatch(/revsync plan [^\n]*--format markdown/);
    }
  });
});

describe("GitHub Actions recipes", () => {
  it("plan on pull request: validate, then per environment the JSON plan, the markdown with its marker, the summary", async () => {
    {
      const v = await runJob("revsync-plan.yml", "validate", "sandbox");
      expect(v.code, v.out).toBe(0);
    }
    for (const env of ["sandbox", "production"]) {
      const r = await runJob("revsync-plan.yml", "plan", env);
      expect(r.out).toBe("");
      expect(r.code, r.out).toBe(0);
      const plan = JSON.parse(readFileSync(join(work, `plan-${env}.json`), "utf8"));
      expect(plan.environment).toBe(env);
      expect(plan.realm).toBe(env === "sandbox" ? "acme-sandbox" : "acme");
      expect(plan.summary).toMatchObject({ create: 1, update: 1 });
      const md = readFileSync(join(work, `plan-${env}.md`), "utf8");
      expect(md.startsWith(`<!-- revsync-plan:${env} -->`)).toBe(true);
      // The comment is the saved plan's markdown: what apply later applies, not a second read.
      expect(md).toBe((await cli(["show", join(work, `plan-${env}.json`), "--format", "markdown"], { cwd: work })).stdout);
      expect(readFileSync(join(work, `summary-${env}`), "utf8")).toContain(`### revsync plan for \`${env}\``);
      expect(outputs(env).changes).toBe("true");
      // The job's outcome for the summary job: the plan itself.
      expect(JSON.parse(readFileSync(join(work, `outcome-${env}.json`), "utf8"))).toEqual(plan);
    }
    // The summary job, once every plan job ended: one comment of every environment (the artifacts
    // download into the job's folder, here the same one).
    const wf = parse(readFileSync(join(ROOT, "examples", "ci", "github", "revsync-plan.yml"), "utf8"));
    expect(wf.jobs.summary).toMatchObject({ needs: "plan", if: "always()" });
    const steps = (job: string) => wf.jobs[job].steps as { uses?: string; if?: string; with?: Record<string, unknown> }[];
    expect(steps("plan").find((st) => st.with?.name === "outcome-${{ matrix.environment }}")).toMatchObject({ if: "always()" });
    expect(steps("summary").find((st) => st.uses?.startsWith("actions/download-artifact@"))?.with).toEqual({ pattern: "outcome-*", "merge-multiple": true });
    const sum = await runJob("revsync-plan.yml", "summary", "summary");
    expect(sum.code, sum.out).toBe(0);
    const md = readFileSync(join(work, "plan-summary.md"), "utf8");
    expect(md.startsWith("<!-- revsync-fleet:plan -->\n### revsync plan across 2 environments\n")).toBe(true);
    expect(md).toMatch(/^\| `sandbox` \| changes \| 1 to create, 1 to update/m);
    expect(md).toMatch(/^\| `production` \| changes \| 1 to create, 1 to update/m);
    expect(readFileSync(join(work, "summary-summary"), "utf8")).toBe(md);
    // A validate job, two plan jobs and the summary job's: some 12 s alone, over 30 s on loaded cores.
  }, 90_000);

  it("apply on merge: applies the reviewed plan, then confirms nothing is left", async () => {
    await runJob("revsync-plan.yml", "plan", "sandbox");
    mkdirSync(join(work, "reviewed"));
    cpSync(join(work, "plan-sandbox.json"), join(work, "reviewed", "plan-sandbox.json"));
    // The pull request the merge commit came from (the github-script step's output).
    writeFileSync(join(work, "output-sandbox"), "result=7\n");
    // A push to main, in GitHub Actions.
    const pushed = { GITHUB_ACTIONS: "true", GITHUB_EVENT_NAME: "push", GITHUB_REF: "refs/heads/main", GITHUB_SHA: "abc123" };
    const ok = await runJob("revsync-apply.yml", "apply", "sandbox", pushed);
    expect(ok.out).toContain("Applying the plan reviewed on pull request #7");
    expect(ok.out).toContain("Apply complete:");
    expect(ok.code, ok.out).toBe(0);
    // The run's evidence record, its chain checked in the job log, which keeps the latest hash.
    expect(ok.out).toMatch(/Evidence: \S+\/evidence\/sandbox-[0-9a-f]{8}-\d{6}\.json sha256:[0-9a-f]{64}/);
    expect(ok.out).toMatch(/1 record: every hash and every link holds\.\nLatest of sandbox: sha256:/);
    // The record names the merged pull request, though the run is a push's.
    const folder = join(work, "evidence");
    const recordOf = (name: string) => JSON.parse(readFileSync(join(folder, name), "utf8"));
    const [firstName] = readdirSync(folder).filter((f) => f.endsWith(".json"));
    expect(recordOf(firstName ?? "").ci).toMatchObject({ provider: "github", event: "push", pull_request: 7 });
    // The earlier evidence not fetched: the job log warns and the new record says why it starts a chain.
    outcomes = { earlier: "failure" };
    removeDir(folder);
    writeFileSync(join(work, "output-sandbox"), "result=\n");
    const lost = await runJob("revsync-apply.yml", "apply", "sandbox", { ...pushed, REVSYNC_ALLOW_UNREVIEWED: "true" });
    expect(lost.out).toContain("::warning title=revsync evidence (sandbox)::This run's record starts a new evidence chain: no artifact evidence-sandbox");
    expect(lost.out).toMatch(
      /this record starts a new chain because the earlier evidence of environment sandbox could not be fetched: no artifact evidence-sandbox/,
    );
    outcomes = {};
    // A merged pull request whose plan was not fetched: the job fails, in one line, and applies nothing.
    writeFileSync(join(work, "output-production"), "result=8\n");
    const unfetched = await runJob("revsync-apply.yml", "apply", "production", { REVSYNC_ALLOW_UNREVIEWED: "true" });
    expect(unfetched.out.trim()).toBe(
      "::error title=revsync apply (production)::The plan reviewed on pull request #8 was not fetched (reviewed/plan-production.json is missing).",
    );
    expect(unfetched.code).toBe(1);
    // No pull request merged the commit: fails unless REVSYNC_ALLOW_UNREVIEWED is true, and then says so.
    writeFileSync(join(work, "output-production"), "result=\n");
    const none = await runJob("revsync-apply.yml", "apply", "production");
    expect(none.out.trim()).toMatch(
      /^::error title=revsync apply \(production\)::No reviewed plan: no pull request merged this commit\. [^\n]*REVSYNC_ALLOW_UNREVIEWED[^\n]*$/,
    );
    expect(none.code).toBe(1);
    const allowed = await runJob("revsync-apply.yml", "apply", "production", { REVSYNC_ALLOW_UNREVIEWED: "true" });
    expect(allowed.out).toContain(
      "::warning title=revsync apply (production)::No pull request merged this commit, so no plan was reviewed; REVSYNC_ALLOW_UNREVIEWED is true",
    );
    expect(allowed.out).toContain("Apply complete:");
    expect(allowed.code, allowed.out).toBe(0);
    // seven CLI runs of three jobs: over 30 s on two loaded cores.
  }, 90_000);

  it("apply refuses a reviewed plan made stale by a change outside git, and says so", async () => {
    await runJob("revsync-plan.yml", "plan", "production");
    mkdirSync(join(work, "reviewed"));
    cpSync(join(work, "plan-production.json"), join(work, "reviewed", "plan-production.json"));
    await changeOutside("acme");
    writeFileSync(join(work, "output-production"), "result=9\n");
    const r = await runJob("revsync-apply.yml", "apply", "production");
    expect(r.code, r.out).toBe(1);
    expect(r.step).toBe("Apply");
    expect(r.out).toMatch(
      /blocked: tenant-configuration\/Default Tenant Configuration changed in the service since the plan \(last changed by bob at \S+\): .*; nothing was sent for it/,
    );
    expect(r.out).toContain("::error title=revsync apply (production)::The reviewed plan could not be applied");
  });

  it("drift on a schedule: a job per environment passes when in sync, fails with exit 2 and a report on drift; the summary job lists every environment, failures first", async () => {
    // sandbox in step with git (each test starts from the seeded tenants): drift's job then passes there.
    const applied = await cli(["apply", "--env", "sandbox", "--auto-approve", "--quiet"], { cwd: work, env: ciEnv("sandbox") });
    expect(applied.code, applied.stderr).toBe(0);
    const clean = await runJob("revsync-drift.yml", "drift", "sandbox");
    expect(clean.code, clean.out).toBe(0);
    expect(outputs("sandbox").code).toBe("0");
    await changeOutside("acme-sandbox");
    writeFileSync(join(work, "output-sandbox"), "");
    writeFileSync(join(work, "summary-sandbox"), "");
    const drift = await runJob("revsync-drift.yml", "drift", "sandbox");
    expect(drift.code, drift.out).toBe(2);
    expect(drift.out).toContain("::error title=revsync drift (sandbox)::the service differs from git");
    expect(JSON.parse(readFileSync(join(work, "drift-sandbox.json"), "utf8"))).toMatchObject({ environment: "sandbox", summary: { changed: 1 } });
    expect(readFileSync(join(work, "summary-sandbox"), "utf8")).toContain("| changed | `tenant-configuration/Default Tenant Configuration` |");
    expect((await runJob("revsync-drift.yml", "drift", "production")).code).toBe(2);
    const wf = parse(readFileSync(join(ROOT, "examples", "ci", "github", "revsync-drift.yml"), "utf8"));
    expect(wf.jobs.summary).toMatchObject({ needs: "drift", if: "always()" });
    const sum = await runJob("revsync-drift.yml", "summary", "summary");
    expect(sum.code, sum.out).toBe(0);
    expect(outputs("summary").code).toBe("2");
    const md = readFileSync(join(work, "drift-summary.md"), "utf8");
    expect(md).toContain("### revsync drift across 2 environments\n\n0 failed, 2 drifted, 0 without drift.");
    // A job that left no report (it failed before revsync ran): the summary says so, first.
    removeDir(join(work, "drift-production.json"));
    writeFileSync(join(work, "output-summary"), "");
    expect((await runJob("revsync-drift.yml", "summary", "summary")).code).toBe(0);
    expect(outputs("summary").code).toBe("1");
    const rows = readFileSync(join(work, "drift-summary.md"), "utf8")
      .split("\n")
      .filter((l) => l.startsWith("| `"));
    expect(rows[0]).toBe(
      "| `production` | **failed** | no output of revsync drift for this environment among the files given: its job did not run, or failed before revsync wrote its JSON |",
    );
    expect(rows[1]).toMatch(/^\| `sandbox` \| drift \| 1 changed/);
  });
});

/** A GitLab job's script: its own, else the first its `extends:` templates give (apply's is `.apply`'s). */
function scriptOf(ci: Record<string, { script?: string[]; extends?: string | string[] }>, name: string): string[] {
  const job = ci[name];
  const own =
    job?.script ??
    [job?.extends ?? []]
      .flat()
      .map((t) => ci[t]?.script)
      .find(Boolean);
  if (!own) throw new Error(`GitLab job ${name} has no script`);
  return own;
}

/** The multi-env example with production receiving its changes from sandbox (promote_from). */
function promoteFromSandbox(dir = work): void {
  const file = join(dir, "revsync.yaml");
  writeFileSync(file, readFileSync(file, "utf8").replace("    realm: acme\n", "    realm: acme\n    promote_from: sandbox\n"));
}

describe("promotion recipes", () => {
  const pushed = { GITHUB_ACTIONS: "true", GITHUB_EVENT_NAME: "push", GITHUB_REF: "refs/heads/main", GITHUB_SHA: "abc123" };

  it("GitHub: on merge the source is applied, its policy tests run live, production is planned (each write promoted) and the gated job applies that plan; a plan with writes blocked for promotion fails its job, offering the gate nothing", async () => {
    promoteFromSandbox();
    // Before sandbox holds the change, production's plan job fails, naming how many writes are blocked.
    const early = await runJob("revsync-promote.yml", "plan", "production");
    expect(early.code, early.out).toBe(1);
    expect(early.out).toMatch(/::error title=revsync promote \(production\)::\d+ writes of the plan are blocked for promotion/);
    expect(readFileSync(join(work, "summary-production"), "utf8")).toContain("not yet in sandbox");
    // The merged pull request's reviewed plan of sandbox, as revsync-plan.yml made it.
    await runJob("revsync-plan.yml", "plan", "sandbox");
    mkdirSync(join(work, "reviewed"));
    cpSync(join(work, "plan-sandbox.json"), join(work, "reviewed", "plan-sandbox.json"));
    writeFileSync(join(work, "output-sandbox"), "result=7\n");
    const source = await runJob("revsync-promote.yml", "source", "sandbox", pushed);
    expect(source.code, source.out).toBe(0);
    expect(source.out).toContain("Applying the plan reviewed on pull request #7");
    const tests = await runJob("revsync-promote.yml", "test", "sandbox");
    expect(tests.code, tests.out).toBe(0);
    writeFileSync(join(work, "summary-production"), "");
    const plan = await runJob("revsync-promote.yml", "plan", "production");
    expect(plan.code, plan.out).toBe(0);
    expect(outputs("production").changes).toBe("true");
    const saved = JSON.parse(readFileSync(join(work, "plan-production.json"), "utf8"));
    expect(saved.promotion).toMatchObject({ from: "sandbox", realm: "acme-sandbox", blocked: 0 });
    expect(saved.promotion.promoted).toBeGreaterThan(0);
    expect(readFileSync(join(work, "summary-production"), "utf8")).toContain("#### Promotion from `sandbox`");
    // The production job: GitHub holds it until a required reviewer of the environment releases it.
    const wf = parse(readFileSync(join(ROOT, "examples", "ci", "github", "revsync-promote.yml"), "utf8"));
    expect(wf.jobs.production).toMatchObject({ needs: "plan", environment: "production", if: "needs.plan.outputs.changes == 'true'" });
    expect(wf.jobs.plan.needs).toBe("test");
    expect(wf.jobs.test.needs).toBe("source");
    const production = await runJob("revsync-promote.yml", "production", "production", pushed);
    expect(production.code, production.out).toBe(0);
    expect(production.out).toContain("Apply complete:");
    expect(production.out).toMatch(/Latest of production: sha256:/);
  }, 90_000);

  it("GitLab: included beside .gitlab-ci.yml, apply goes to the source alone; the tests run live, production is planned and its manual job in the protected environment applies the promoted plan", async () => {
    promoteFromSandbox();
    const main = parse(readFileSync(join(ROOT, "examples", "ci", "gitlab", ".gitlab-ci.yml"), "utf8"));
    const promote = parse(readFileSync(join(ROOT, "examples", "ci", "gitlab", "promote.gitlab-ci.yml"), "utf8"));
    expect(promote.apply.parallel.matrix).toEqual([{ ENVIRONMENT: ["sandbox"] }]);
    expect(promote["apply production"]).toMatchObject({
      extends: [".install", ".apply"],
      needs: ["plan production"],
      variables: { ENVIRONMENT: "production" },
    });
    expect(promote["apply production"].rules[0].when).toBe("manual");
    expect(main[".apply"].environment).toEqual({ name: "$ENVIRONMENT" });
    const job = (script: string[], env: string, extra: Record<string, string> = {}) => sh(script.join("\n"), { ...ciEnv(env), GITLAB_API_TOKEN: "", ...extra });
    const source = await job(main[".apply"].script, "sandbox", { REVSYNC_ALLOW_UNREVIEWED: "true" });
    expect(source.code, source.out).toBe(0);
    const tests = await job(promote["test source"].script, "sandbox");
    expect(tests.code, tests.out).toBe(0);
    const plan = await job(promote["plan production"].script, "production");
    expect(plan.code, plan.out).toBe(0);
    expect(plan.out).toContain("Promotion from sandbox");
    const apply = await job(main[".apply"].script, "production", { ...promote["apply production"].variables });
    expect(apply.code, apply.out).toBe(0);
    expect(apply.out).toContain("Applying the promoted plan plan-production.json, released in this pipeline");
    expect(readdirSync(join(work, "evidence", "production")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
  }, 90_000);
});

describe("GitLab CI recipe", () => {
  it("validate, plan, apply and drift jobs run as written", async () => {
    const ci = parse(readFileSync(join(ROOT, "examples", "ci", "gitlab", ".gitlab-ci.yml"), "utf8"));
    const job = (name: string, env: string, extra: Record<string, string> = {}) => {
      const script = scriptOf(ci, name).join("\n");
      return sh(script, { ...ciEnv(env), GITLAB_API_TOKEN: "", ...extra });
    };
    // The job's output is the message: a failure says what the job printed.
    const exits = async (name: string, env: string, code: number) => {
      const r = await job(name, env);
      expect(r.code, r.out).toBe(code);
    };
    await exits("validate", "sandbox", 0);
    await exits("test", "sandbox", 0);
    await exits("plan", "sandbox", 0);
    expect(existsSync(join(work, "plan-sandbox.json"))).toBe(true);
    // No GITLAB_API_TOKEN: no reviewed plan, so the job fails in one line and applies nothing...
    const refused = await job("apply", "sandbox");
    expect(refused.out.trim()).toMatch(/^revsync apply \(sandbox\): no reviewed plan: GITLAB_API_TOKEN is not set[^\n]*REVSYNC_ALLOW_UNREVIEWED[^\n]*$/);
    expect(refused.code).toBe(1);
    // ...unless REVSYNC_ALLOW_UNREVIEWED is true, and then it says so.
    const allowed = await job("apply", "sandbox", { REVSYNC_ALLOW_UNREVIEWED: "true" });
    expect(allowed.out).toContain("GITLAB_API_TOKEN is not set and REVSYNC_ALLOW_UNREVIEWED is true: planning and applying now, without a reviewed plan.");
    expect(allowed.code, allowed.out).toBe(0);
    // The apply job's evidence record, in the folder its artifact keeps.
    const kept = readdirSync(join(work, "evidence", "sandbox")).filter((f) => f.endsWith(".json"));
    expect(kept).toHaveLength(1);
    // Without the token no earlier evidence can be fetched: said in the log and in the record.
    expect(allowed.out).toContain("WARNING: this run's evidence record starts a new chain: GITLAB_API_TOKEN is not set");
    expect(JSON.parse(readFileSync(join(work, "evidence", "sandbox", kept[0] ?? ""), "utf8")).chain_note).toMatch(
      /could not be fetched: GITLAB_API_TOKEN is not set/,
    );
    await exits("drift", "sandbox", 0);
    await exits("drift", "production", 2);
    // The summary jobs: every environment, failures first; an environment without output is one.
    await exits("drift summary", "", 0);
    expect(readFileSync(join(work, "drift-summary.md"), "utf8")).toContain("0 failed, 1 drifted, 1 without drift.");
    await exits("plan summary", "", 0);
    const planSummary = readFileSync(join(work, "plan-summary.md"), "utf8");
    const planRows = planSummary
      .slice(0, planSummary.indexOf("<details>"))
      .split("\n")
      .filter((l) => l.startsWith("| `"));
    expect(planRows.map((l) => l.split(" | ").slice(0, 2).join(" | "))).toEqual(["| `production` | **failed**", "| `sandbox` | changes"]);
    // five jobs of CLI runs, the apply job's now looking for the reviewed plan first: about 9 s alone, over 30 s on loaded cores.
  }, 90_000);
});

describe("GitLab CI recipe, with GITLAB_API_TOKEN set", () => {
  // A stand-in for the GitLab API's few answers the recipe reads; each case sets what it answers.
  let answer: (path: string) => { status: number; body: string | Buffer; location?: string } = () => ({ status: 500, body: "" });
  let gitlab: Server;
  let gitlabUrl = "";
  beforeAll(async () => {
    gitlab = createServer((req, res) => {
      const a = answer(req.url ?? "");
      res.writeHead(a.status, { "content-type": "application/json", ...(a.location ? { location: a.location } : {}) }).end(a.body);
    });
    await new Promise<void>((r) => gitlab.listen(0, "127.0.0.1", r));
    gitlabUrl = `http://127.0.0.1:${(gitlab.address() as AddressInfo).port}/api/v4`;
  });
  afterAll(() => new Promise<void>((r) => gitlab.close(() => r())));

  // Production: the service differs from git there, so an apply would show.
  const run = (name: string, apiUrl: string, extra: Record<string, string> = {}) => {
    const ci = parse(readFileSync(join(ROOT, "examples", "ci", "gitlab", ".gitlab-ci.yml"), "utf8"));
    const env = {
      ...ciEnv("production"),
      GITLAB_API_TOKEN: "glpat-test",
      CI_API_V4_URL: apiUrl,
      CI_PROJECT_ID: "42",
      CI_COMMIT_SHA: "abc123",
      CI_MERGE_REQUEST_IID: "7",
      REVSYNC_ALLOW_UNREVIEWED: "true",
      ...extra,
    };
    return sh(scriptOf(ci, name).join("\n"), env);
  };
  const unchanged = async () =>
    expect((await cli(["plan", "--env", "production", "--detailed-exitcode"], { cwd: work, env: ciEnv("production") })).code).toBe(2);

  it("a reviewed plan that cannot be found or fetched fails the apply job in one line, never a stack trace, and nothing is applied, even where unreviewed applies are allowed", async () => {
    const cases: [string, string, typeof answer, RegExp][] = [
      [
        "the API unreachable",
        "http://127.0.0.1:9/api/v4",
        answer,
        /could not read the merge requests of commit abc123 from the GitLab API \(curl: \(7\)[^\n]*\): is GITLAB_API_TOKEN valid/,
      ],
      ["an empty answer", gitlabUrl, () => ({ status: 200, body: "" }), /the GitLab API's answer for the merge requests of commit abc123 is not a JSON list/],
      ["a refused token", gitlabUrl, () => ({ status: 401, body: '{"message":"401 Unauthorized"}' }), /could not read the merge requests [^\n]*401/],
      ["no merged merge request", gitlabUrl, () => ({ status: 200, body: '[{"iid":3,"state":"opened"}]' }), /no merged merge request holds commit abc123/],
      [
        "no plan job",
        gitlabUrl,
        (p) => ({
          status: 200,
          body:
            p.includes("/merge_requests?") || p.endsWith("/merge_requests") ? '[{"iid":3,"state":"merged"}]' : p.includes("/pipelines/") ? "[]" : '[{"id":11}]',
        }),
        /pipeline 11 of merge request !3 has no successful plan job for production/,
      ],
      [
        "the artifact gone",
        gitlabUrl,
        (p) => ({
          status: p.includes("/artifacts/") ? 404 : 200,
          body:
            p.includes("/merge_requests?") || p.endsWith("/merge_requests")
              ? '[{"iid":3,"state":"merged"}]'
              : p.includes("/pipelines/")
                ? '[{"id":99,"name":"plan: [production]"}]'
                : '[{"id":11}]',
        }),
        /could not fetch plan-production\.json from job 99 of merge request !3 \(curl: \(22\)[^\n]*404/,
      ],
    ];
    for (const [what, url, answers, reason] of cases) {
      answer = answers;
      const r = await run("apply", url);
      expect(r.code, `${what}: ${r.out}`).toBe(1);
      const lines = r.out.trim().split("\n");
      expect(lines, what).toHaveLength(1);
      expect(lines[0], what).toMatch(/^revsync apply \(production\): /);
      expect(lines[0], what).toMatch(reason);
      expect(r.out, what).not.toMatch(/SyntaxError| {4}at /);
    }
    await unchanged();
  });

  it("apply on merge: the evidence of the latest earlier apply job with an artifact, a failed one included, is fetched through a redirect; the record names the merge request", async () => {
    // An earlier apply's record, kept as its job's artifact (evidence/production/ in a zip).
    const env = ciEnv("production");
    expect((await cli(["apply", "--env", "production", "--auto-approve", "--evidence", "evidence/production"], { cwd: work, env })).code).toBe(0);
    const [earlier] = readdirSync(join(work, "evidence", "production"));
    const earlierHash = JSON.parse(readFileSync(join(work, "evidence", "production", earlier ?? ""), "utf8")).hash;
    expect(spawnSync("python3", ["-m", "zipfile", "-c", "earlier.zip", "evidence"], { cwd: work }).status).toBe(0);
    const zip = readFileSync(join(work, "earlier.zip"));
    removeDir(join(work, "evidence"));
    removeDir(join(work, "earlier.zip"));
    expect((await cli(["plan", "--env", "production", "--out", "reviewed.json"], { cwd: work, env })).code).toBe(0);
    const reviewed = readFileSync(join(work, "reviewed.json"));
    removeDir(join(work, "reviewed.json"));
    // The policy repo as CI checks it out: its own git repository, with the .gitignore init writes.
    expect((await cli(["init", "."], { cwd: work })).code).toBe(0);
    const git = (...args: string[]) => spawnSync("git", ["-c", "user.name=ci", "-c", "user.email=ci@example.com", ...args], { cwd: work, encoding: "utf8" });
    for (const args of [
      ["init", "--quiet", "-b", "main"],
      ["add", "-A"],
      ["commit", "--quiet", "-m", "policies"],
    ])
      expect(git(...args).status).toBe(0);
    const seen: string[] = [];
    answer = (p) => {
      seen.push(p);
      if (p.includes("/repository/commits/")) return { status: 200, body: '[{"iid":3,"state":"merged"}]' };
      if (p.endsWith("/merge_requests/3/pipelines")) return { status: 200, body: '[{"id":11}]' };
      if (p.includes("/pipelines/11/jobs")) return { status: 200, body: '[{"id":99,"name":"plan: [production]"}]' };
      if (p.endsWith("/jobs/99/artifacts/plan-production.json")) return { status: 200, body: reviewed };
      if (p.includes("/projects/42/jobs?")) {
        const job = (id: number, status: string, artifacts: boolean) => ({
          id,
          name: "apply: [production]",
          ref: "main",
          status,
          artifacts: artifacts ? [{ file_type: "archive" }] : [],
        });
        return { status: 200, body: JSON.stringify([job(130, "running", false), job(120, "failed", true), job(110, "success", true)]) };
      }
      if (p.endsWith("/jobs/120/artifacts")) return { status: 302, body: "", location: "/download/evidence.zip" };
      if (p === "/download/evidence.zip") return { status: 200, body: zip };
      return { status: 404, body: "{}" };
    };
    const r = await run("apply", gitlabUrl, { CI_COMMIT_REF_NAME: "main", CI_JOB_ID: "130", GITLAB_CI: "true", CI_PIPELINE_SOURCE: "push" });
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toMatch(/WARNING|could not be fetched/);
    expect(seen).toContain("/download/evidence.zip");
    const names = readdirSync(join(work, "evidence", "production")).sort();
    expect(names).toHaveLength(2);
    const latest = JSON.parse(readFileSync(join(work, "evidence", "production", names[1] ?? ""), "utf8"));
    expect(latest).toMatchObject({ sequence: 2, prev: earlierHash, ci: { provider: "gitlab", pull_request: 3, event: "push" } });
    expect(latest).not.toHaveProperty("chain_note");
    // The reviewed plan the job fetched (reviewed/plan-production.json) is one the .gitignore leaves out:
    // the record finds the tree the commit holds.
    expect(existsSync(join(work, "reviewed", "plan-production.json"))).toBe(true);
    expect(latest.git).toEqual({ commit: git("rev-parse", "HEAD").stdout.trim(), clean: true });
    // The artifact gone: the job log warns, and the new chain's first record says why.
    removeDir(join(work, "evidence"));
    const fetched = answer;
    answer = (p) => (p.endsWith("/jobs/120/artifacts") ? { status: 404, body: "{}" } : fetched(p));
    const lost = await run("apply", gitlabUrl, { CI_COMMIT_REF_NAME: "main", CI_JOB_ID: "131", GITLAB_CI: "true", CI_PIPELINE_SOURCE: "push" });
    expect(lost.code, lost.out).toBe(0);
    expect(lost.out).toMatch(
      /WARNING: this run's evidence record starts a new chain: the artifact of apply job 120 could not be fetched \(curl: \(22\)[^\n]*404/,
    );
    const [only] = readdirSync(join(work, "evidence", "production"));
    expect(JSON.parse(readFileSync(join(work, "evidence", "production", only ?? ""), "utf8")).chain_note).toMatch(
      /^the earlier evidence of environment production could not be fetched: the artifact of apply job 120 could not be fetched/,
    );
    // three apply jobs, each fetching and checking the evidence chain: over 30 s on two loaded cores.
  }, 90_000);

  it("the plan job's note: an API failure is one line, not a stack trace", async () => {
    answer = () => ({ status: 200, body: "" });
    const r = await run("plan", gitlabUrl);
    expect(r.code, r.out).toBe(1);
    expect(r.out.trim()).toBe("revsync plan (production): the GitLab API's answer for the merge request's notes is not a JSON list");
  });
});

// A repo as a newcomer makes it: init --ci, a policy and a test case. Its recipes' install step runs
// for real (npm, with package.json pinning this revsync by --pin file:), and the test step runs the
// revsync it installed (the real npx, no shim): the first workflow run of a new repo works.
describe("recipes and the Action in a repo made by init", () => {
  const POLICY =
    "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Training SSP }\nspec: { method: formula, expression: unit_list_price * 0.8, active: true, hierarchy_no: 10, when: [] }\n";
  const CASES =
    "apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n  - name: a course\n    line: { product_id: TRN-1, currency_code: EUR, date: 2026-03-01, unit_list_price: 1200 }\n    expect: { policy: Training SSP, ssp: 960 }\n";

  async function initRepo(ci: "github" | "gitlab"): Promise<{ dir: string; env: Record<string, string> }> {
    const dir = join(ROOT, ".revsync-tmp", `init-${ci}-${process.pid}-${Date.now()}`);
    const made = await sh(`${process.execPath} ${join(ROOT, "dist", "bin.js")} init ${dir} --realm demo --ci ${ci} --pin file:${ROOT}`, ciEnv("sandbox"), ROOT);
    expect(made.code, made.out).toBe(0);
    writeFileSync(join(dir, "policies", "training.yaml"), POLICY);
    mkdirSync(join(dir, "tests"));
    writeFileSync(join(dir, "tests", "cases.yaml"), CASES);
    // The real npx: the revsync the install step put in node_modules, nothing else.
    return { dir, env: { ...ciEnv("sandbox"), PATH: process.env.PATH ?? "" } };
  }

  /** Runs steps in order, as the CI would, each with bash -e in the repo. */
  async function steps(scripts: string[], dir: string, env: Record<string, string>): Promise<string> {
    let out = "";
    for (const script of scripts) {
      const r = await sh(script, env, dir);
      out += r.out;
      expect(r.code, `${script}\n${out}`).toBe(0);
    }
    return out;
  }

  const junitCase = /<testcase classname="tests\/cases\.yaml" name="a course" time="[\d.]+"\/>/;

  it("GitHub: package.json pins revsync; the plan workflow's install and policy test steps run, writing the JUnit the reporter publishes; so do the Action's steps", async () => {
    const { dir, env } = await initRepo("github");
    try {
      expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).devDependencies).toEqual({ revsync: `file:${ROOT}` });
      const wf = parse(readFileSync(join(dir, ".github", "workflows", "revsync-plan.yml"), "utf8"));
      const validate = wf.jobs.validate.steps as { name?: string; run?: string; uses?: string; with?: Record<string, string> }[];
      const install = validate.find((s) => s.run && INSTALL.test(s.run));
      const test = validate.find((s) => s.run?.includes("revsync test"));
      expect(install && test).toBeTruthy();
      await steps([install?.run ?? "", test?.run ?? ""], dir, env);
      expect(readFileSync(join(dir, "policy-tests.xml"), "utf8")).toMatch(junitCase);
      const reporter = validate.find((s) => s.uses?.startsWith("dorny/test-reporter@"));
      expect(reporter?.with).toMatchObject({ path: "policy-tests.xml", reporter: "java-junit" });

      // The Action: its run steps, with its inputs, in the same repo (setup-node and the comment are GitHub's).
      const action = parse(readFileSync(join(ROOT, "action.yml"), "utf8"));
      expect(action.runs.using).toBe("composite");
      const inputs: Record<string, string> = { command: "test --format junit", "working-directory": ".", "success-codes": "0" };
      const runs = (action.runs.steps as { run?: string; env?: Record<string, string> }[]).filter((s) => s.run);
      expect(runs.map((s) => s.run).some((r) => r && INSTALL.test(r))).toBe(true);
      const fill = (t: string): string => t.replace(/\$\{\{ inputs\.([\w-]+) \}\}/g, (_m, k: string) => inputs[k] ?? "");
      let out = "";
      for (const s of runs) {
        const stepEnv = Object.fromEntries(Object.entries(s.env ?? {}).map(([k, v]) => [k, fill(v)]));
        expect(s.run).not.toMatch(/\$\{\{/);
        out += await steps([s.run ?? ""], dir, { ...env, ...stepEnv, GITHUB_OUTPUT: join(dir, "action-output") });
      }
      expect(out).toMatch(junitCase);
      expect(readFileSync(join(dir, "action-output"), "utf8")).toMatch(/^exit-code=0\noutput=\S+\n$/);
      // A failing case fails the step with revsync's exit code.
      writeFileSync(join(dir, "tests", "cases.yaml"), CASES.replace("ssp: 960", "ssp: 961"));
      const failing = runs.find((s) => s.run?.includes("npx --no -- revsync"));
      const env2 = Object.fromEntries(Object.entries(failing?.env ?? {}).map(([k, v]) => [k, fill(v)]));
      const r = await sh(failing?.run ?? "", { ...env, ...env2 }, dir);
      expect(r.code).toBe(1);
      expect(r.out).toContain("::error title=revsync::revsync test exited 1");
    } finally {
      removeDir(dir);
    }
    // init, two npm installs and some ten CLI runs: about 13 s alone, well over 30 s when the suite shares two loaded cores.
  }, 90_000);

  /** The GitLab repo made by the test before, for gitlab-ci-local's run of its apply job. */
  let gitlab: { dir: string; env: Record<string, string> } | undefined;
  afterAll(() => {
    if (gitlab) removeDir(gitlab.dir);
  });

  it("GitLab: the install before_script and the test job run; the JUnit is the job's test report", async () => {
    gitlab = await initRepo("gitlab");
    const { dir, env } = gitlab;
    const ci = parse(readFileSync(join(dir, ".gitlab-ci.yml"), "utf8"));
    expect(ci.test.extends).toBe(".install");
    expect(ci.test.artifacts.reports.junit).toBe("policy-tests.xml");
    await steps([...(ci[".install"].before_script as string[]), ...(ci.test.script as string[])], dir, env);
    expect(readFileSync(join(dir, "policy-tests.xml"), "utf8")).toMatch(junitCase);
    // What the jobs write is left out of git by the .gitignore init wrote.
    for (const f of ["policy-tests.xml", "plan-sandbox.json", "plan-sandbox.md", "drift-sandbox.md", "reviewed/plan-sandbox.json"])
      expect(spawnSync("git", ["check-ignore", "--no-index", "-q", f], { cwd: dir }).status, f).toBe(0);
    // init, an npm install and the test job: a few seconds alone, far more on loaded cores.
  }, 90_000);

  it("GitLab: the apply job as gitlab-ci-local runs it fails with its reason in one line when the API is unreachable, nothing applied", async (ctx) => {
    // The apply job as GitLab runs it (gitlab-ci-local, shell executor: rules, the matrix, the
    // before_script, the multi-line script), with GITLAB_API_TOKEN set and the API unreachable: the job
    // fails with its reason in one line, no stack trace, and nothing is applied. gitlab-ci-local copies
    // the repo with rsync before any job, whatever the executor: CI installs it (.ci/run) and fails
    // without it; a machine without it does not run this case and says so (the job's script itself runs
    // through bash in "GitLab CI recipe, with GITLAB_API_TOKEN set"). No stand-in for rsync: what is
    // tested here is the real tool's reading of the recipe.
    needsTool(ctx, "rsync", ["--version"], "apt-get install rsync", "the GitLab apply job through gitlab-ci-local, which copies the repo with rsync,");
    if (!gitlab) throw new Error("the GitLab repo of the test before was not made");
    const { dir, env } = gitlab;
    await steps(
      [
        "git init --quiet -b main",
        "git add -A",
        "git -c user.name=ci -c user.email=ci@example.com commit --quiet -m policies",
        "git remote add origin https://gitlab.example.com/acme/policies.git",
      ],
      dir,
      env,
    );
    const gcl = await sh(
      [
        join(ROOT, "node_modules", ".bin", "gitlab-ci-local"),
        "--force-shell-executor --ignore-predefined-vars CI_API_V4_URL --no-color",
        "--variable GITLAB_API_TOKEN=glpat-test --variable CI_API_V4_URL=http://127.0.0.1:9/api/v4",
        `--variable SANDBOX_BASE_URL=${emu.url}`,
        "'apply: [sandbox]'",
      ].join(" "),
      env,
      dir,
    );
    expect(gcl.code, gcl.out).toBe(1);
    const said = gcl.out.split("\n").filter((l) => l.startsWith("apply: [sandbox] > revsync apply"));
    expect(said, gcl.out).toEqual([
      expect.stringMatching(
        /^apply: \[sandbox\] > revsync apply \(sandbox\): could not read the merge requests of commit [0-9a-f]{40} from the GitLab API \(curl: \(7\) [^)]*\): is GITLAB_API_TOKEN valid, with api scope\?$/,
      ),
    ]);
    expect(gcl.out).not.toMatch(/SyntaxError|Applying|planning and applying/);
  }, 90_000);

  it("GitLab: the scheduled pipeline under gitlab-ci-local: a drift job per environment of the matrix, then the summary job of them all, though they failed", async (ctx) => {
    needsTool(ctx, "rsync", ["--version"], "apt-get install rsync", "the GitLab drift pipeline through gitlab-ci-local, which copies the repo with rsync,");
    // The two tenants as seeded (earlier cases of this file applied to them), so that both drift.
    await emu.reset("multi-env");
    // The two environments of examples/multi-env (the work folder), with the recipes init fits to them.
    const made = await sh(`${process.execPath} ${join(ROOT, "dist", "bin.js")} init . --ci gitlab --pin file:${ROOT}`, ciEnv("sandbox"));
    expect(made.code, made.out).toBe(0);
    const env: Record<string, string> = { ...ciEnv("sandbox"), PATH: process.env.PATH ?? "" };
    await sh("git init --quiet -b main && git add -A && git -c user.name=ci -c user.email=ci@example.com commit --quiet -m policies", env);
    const vars = [
      "SANDBOX_BASE_URL",
      "SANDBOX_AUTH_URL",
      "PRODUCTION_BASE_URL",
      "PRODUCTION_AUTH_URL",
      "REVSYNC_CLIENT_ID",
      "REVSYNC_CLIENT_SECRET",
      "REVSYNC_USERNAME",
      "REVSYNC_PASSWORD",
    ];
    const gcl = await sh(
      [
        join(ROOT, "node_modules", ".bin", "gitlab-ci-local"),
        // Each job in a folder of its own, as a runner clones the repo for each: the jobs' npm installs
        // never share one, and the summary job has only what its needs' artifacts give it.
        "--force-shell-executor --shell-isolation --no-color --variable CI_PIPELINE_SOURCE=schedule",
        ...vars.map((v) => `--variable ${v}=${env[v]}`),
      ].join(" "),
      env,
    );
    // Both tenants drift, so both drift jobs fail (exit 2), and so does the pipeline; the summary runs all the same.
    expect(gcl.code, gcl.out).not.toBe(0);
    const lines = gcl.out.split("\n");
    // gitlab-ci-local writes each line of a job's log as "<job name, padded> > <line>".
    const said = (job: string) => lines.flatMap((l) => (l.startsWith(job) && /^ *> /.test(l.slice(job.length)) ? [l.slice(l.indexOf("> ") + 2)] : []));
    expect(said("drift: [sandbox]").join("\n"), gcl.out).toContain('Drift in environment "sandbox"');
    expect(said("drift: [production]").join("\n"), gcl.out).toContain('Drift in environment "production"');
    const summary = said("drift summary");
    expect(summary, gcl.out).toContain("<!-- revsync-fleet:drift -->");
    expect(summary).toContain("0 failed, 2 drifted, 0 without drift.");
    expect(summary.filter((l) => l.startsWith("| `"))).toEqual([
      "| `sandbox` | drift | 1 changed, 1 missing, 4 batch statuses |",
      "| `production` | drift | 1 changed, 1 missing, 4 batch statuses |",
    ]);
    // gitlab-ci-local, three npm installs and five CLI runs: 20 to 50 s on two loaded cores.
  }, 240_000);

  it("GitLab: gitlab-ci-local reads promote.gitlab-ci.yml included from .gitlab-ci.yml: on a push to main, apply goes to sandbox alone, then its tests live, production's plan, and production's apply waiting for a person", async () => {
    const dir = join(work, "gitlab-promote");
    mkdirSync(dir);
    const gitlabDir = join(ROOT, "examples", "ci", "gitlab");
    cpSync(join(gitlabDir, "promote.gitlab-ci.yml"), join(dir, "promote.gitlab-ci.yml"));
    writeFileSync(join(dir, ".gitlab-ci.yml"), `${readFileSync(join(gitlabDir, ".gitlab-ci.yml"), "utf8")}\ninclude:\n  - local: promote.gitlab-ci.yml\n`);
    const env = ciEnv("sandbox");
    await steps(["git init --quiet -b main", "git add -A", "git -c user.name=ci -c user.email=ci@example.com commit --quiet -m ci"], dir, env);
    const bin = join(ROOT, "node_modules", ".bin", "gitlab-ci-local");
    const gcl = await sh(`${bin} --list --no-color --ignore-predefined-vars CI_PIPELINE_SOURCE --variable CI_PIPELINE_SOURCE=push`, env, dir);
    expect(gcl.code, gcl.out).toBe(0);
    // The listing: name, stage, when, allow_failure, needs; the jobs of a push to main.
    const jobs = gcl.out
      .split("\n")
      .map((l) => /^(\S.*?)\s{2,}(\S+)\s+(on_success|manual|always)\s+(?:true|false)\s*(.*)$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => [m[1], m[2], m[3], m[4]?.trim()]);
    expect(jobs, gcl.out).toEqual([
      ["apply: [sandbox]", "apply", "on_success", ""],
      ["test source", "apply", "on_success", "[apply]"],
      ["plan production", "apply", "on_success", "[test source]"],
      ["apply production", "apply", "manual", "[plan production]"],
    ]);
    // gitlab-ci-local parsing and validating two files: seconds alone, over 30 s on loaded cores.
  }, 90_000);

  it("the apply recipe finds the reviewed plan by the merged pull request, never by the merge commit", () => {
    const text = readFileSync(join(ROOT, "examples", "ci", "github", "revsync-apply.yml"), "utf8");
    expect(text).not.toContain("github.event.after");
    const apply = parse(text).jobs.apply.steps as { id?: string; uses?: string; with?: Record<string, string>; if?: string }[];
    const pr = apply.find((s) => s.id === "pr");
    expect(pr?.with?.script).toContain("listPullRequestsAssociatedWithCommit");
    const fetch = apply.find((s) => s.uses?.startsWith("dawidd6/action-download-artifact@"));
    expect(fetch?.with).toMatchObject({ workflow: "revsync-plan.yml", pr: "${{ steps.pr.outputs.result }}" });
    expect(fetch?.with?.commit).toBeUndefined();
    expect(readFileSync(join(ROOT, "examples", "ci", "gitlab", ".gitlab-ci.yml"), "utf8")).toContain("repository/commits/$CI_COMMIT_SHA/merge_requests");
  });

  it("pre-commit hooks run revsync validate and revsync test on the files of a policy repo", async () => {
    const hooks = parse(readFileSync(join(ROOT, ".pre-commit-hooks.yaml"), "utf8")) as { id: string; entry: string; files: string; language: string }[];
    expect(hooks.map((h) => [h.id, h.entry, h.language])).toEqual([
      ["revsync-validate", "revsync validate", "node"],
      ["revsync-test", "revsync test", "node"],
    ]);
    for (const h of hooks) {
      const files = new RegExp(h.files);
      for (const f of ["revsync.yaml", "policies/ssp/hardware.yaml", "policies/ssp/values/hw-fy26.csv", "tests/cases.yaml"])
        expect(files.test(f), f).toBe(true);
      for (const f of ["README.md", "src/x.ts", ".github/workflows/revsync-plan.yml"]) expect(files.test(f), f).toBe(false);
      // The entry as pre-commit runs it: revsync on PATH (the shim stands for the installed one), in the repo.
      const r = await sh(h.entry.replace(/^revsync /, "npx --no -- revsync "), ciEnv("sandbox"), join(ROOT, "examples", "policy-tests"));
      expect(r.code, r.out).toBe(0);
    }
  });
});
