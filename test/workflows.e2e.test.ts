import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { api, npxShim, removeDir, ROOT, startEmu, token, updateBody, type Emu } from "../src/testing/helpers.js";

// Runs the shell steps of the CI recipes in examples/ci against the emulator (not GitHub or GitLab),
// so that the recipes cannot rot. `uses:` steps (checkout, artifacts, comments) and `npm ci` are the
// CI's own; everything else runs as written.
let emu: Emu;
let work: string;
const shim = npxShim();

beforeAll(async () => {
  emu = await startEmu();
});
afterAll(async () => {
  if (work) removeDir(work);
  await emu.close();
});
beforeEach(async () => {
  const demo: any = await emu.admin("GET", "state");
  const sandbox = structuredClone(demo.tenants[0]);
  sandbox.realm = "acme-sandbox";
  const production = structuredClone(demo.tenants[0]);
  production.realm = "acme";
  await emu.admin("POST", "reset", { state: { version: 1, seq: 5000, tokens: {}, tenants: [sandbox, production] } });
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
  };
}

/** Async on purpose: the emulator answers from this same process. */
function sh(script: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-e", "-c", script], { cwd: work, env });
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
async function runJob(workflow: string, job: string, env: string): Promise<{ code: number; out: string; step?: string }> {
  const wf = parse(readFileSync(join(ROOT, "examples", "ci", "github", workflow), "utf8"));
  let out = "";
  for (const step of wf.jobs[job].steps as { name?: string; run?: string; if?: string }[]) {
    if (!step.run || step.run.trim() === "npm ci") continue;
    if (step.if) {
      const m = /steps\.(\w+)\.outputs\.(\w+) == '(.*)'/.exec(step.if);
      if (m && outputs(env)[m[2] ?? ""] !== m[3]) continue;
    }
    const script = step.run
      .replace(/\$\{\{ matrix\.environment \}\}/g, env)
      .replace(/\$\{\{ steps\.\w+\.outputs\.(\w+) \}\}/g, (_m, k: string) => outputs(env)[k] ?? "");
    expect(script).not.toMatch(/\$\{\{/);
    const r = await sh(script, ciEnv(env));
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
    const files = ["github/revsync-plan.yml", "github/revsync-apply.yml", "github/revsync-drift.yml", "gitlab/.gitlab-ci.yml"];
    for (const f of files) {
      const text = readFileSync(join(ROOT, "examples", "ci", f), "utf8");
      const calls = text.match(/\bnpx\b.*/g) ?? [];
      expect(calls.length, f).toBeGreaterThan(0);
      for (const call of calls) expect(call, f).toMatch(/^npx --no -- revsync /);
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
      expect(readFileSync(join(work, `plan-${env}.md`), "utf8").startsWith(`<!-- revsync-plan:${env} -->`)).toBe(true);
      expect(readFileSync(join(work, `summary-${env}`), "utf8")).toContain(`### revsync plan for \`${env}\``);
      expect(outputs(env).changes).toBe("true");
    }
  });

  it("apply on merge: applies the reviewed plan, then confirms nothing is left", async () => {
    await runJob("revsync-plan.yml", "plan", "sandbox");
    mkdirSync(join(work, "reviewed"));
    cpSync(join(work, "plan-sandbox.json"), join(work, "reviewed", "plan-sandbox.json"));
    const ok = await runJob("revsync-apply.yml", "apply", "sandbox");
    expect(ok.out).toContain("Applying the reviewed plan reviewed/plan-sandbox.json");
    expect(ok.out).toContain("Apply complete:");
    expect(ok.code, ok.out).toBe(0);
    const none = await runJob("revsync-apply.yml", "apply", "production");
    expect(none.out).toContain("::warning title=revsync apply (production)::No reviewed plan found");
    expect(none.code, none.out).toBe(0);
  });

  it("apply refuses a reviewed plan made stale by a change outside git, and says so", async () => {
    await runJob("revsync-plan.yml", "plan", "production");
    mkdirSync(join(work, "reviewed"));
    cpSync(join(work, "plan-production.json"), join(work, "reviewed", "plan-production.json"));
    await changeOutside("acme");
    const r = await runJob("revsync-apply.yml", "apply", "production");
    expect(r.code, r.out).toBe(1);
    expect(r.step).toBe("Apply");
    expect(r.out).toMatch(
      /blocked: tenant-configuration\/Default Tenant Configuration changed in the service since the plan \(last changed by bob at \S+\): .*; nothing was sent for it/,
    );
    expect(r.out).toContain("::error title=revsync apply (production)::The reviewed plan could not be applied");
  });

  it("drift on a schedule: passes when in sync, fails with exit 2 and a report on drift", async () => {
    await runJob("revsync-apply.yml", "apply", "sandbox");
    const clean = await runJob("revsync-drift.yml", "drift", "sandbox");
    expect(clean.code, clean.out).toBe(0);
    expect(outputs("sandbox").code).toBe("0");
    await changeOutside("acme-sandbox");
    writeFileSync(join(work, "output-sandbox"), "");
    const drift = await runJob("revsync-drift.yml", "drift", "sandbox");
    expect(drift.code, drift.out).toBe(2);
    expect(drift.out).toContain("::error title=revsync drift (sandbox)::the service differs from git");
    expect(readFileSync(join(work, "drift-sandbox.md"), "utf8")).toContain("| changed | `tenant-configuration/Default Tenant Configuration` |");
  });
});

describe("GitLab CI recipe", () => {
  it("validate, plan, apply and drift jobs run as written", async () => {
    const ci = parse(readFileSync(join(ROOT, "examples", "ci", "gitlab", ".gitlab-ci.yml"), "utf8"));
    const job = (name: string, env: string) => {
      const script = (ci[name].script as string[]).join("\n");
      return sh(script, { ...ciEnv(env), GITLAB_API_TOKEN: "" });
    };
    // The job's output is the message: a failure says what the job printed.
    const exits = async (name: string, env: string, code: number) => {
      const r = await job(name, env);
      expect(r.code, r.out).toBe(code);
    };
    await exits("validate", "sandbox", 0);
    await exits("plan", "sandbox", 0);
    expect(existsSync(join(work, "plan-sandbox.json"))).toBe(true);
    await exits("apply", "sandbox", 0);
    await exits("drift", "sandbox", 0);
    await exits("drift", "production", 2);
  });
});
