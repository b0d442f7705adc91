import { execFileSync, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { LocalLock, machineLockDir } from "../src/lock/local-lock.js";
import { api, cli, cliProcess, DEMO_ENV, ROOT, sspCreateBody, token, updateBody, useEmulator, type CliResult } from "../src/testing/helpers.js";

// Two applies at once against one environment, as a team meets them (a retried pipeline, a laptop during
// a CI run), against the emulator run as the interface promises the service (--ignore-if-match: no
// If-Match to rely on). The lock's git backend is tested for real: a bare repository on disk as the
// remote, reached through file://, and `revsync apply` as real processes where two processes are the point.

const fx = useEmulator({ honourIfMatch: false, clear: ["faults"] });
const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const SSP = "/apis/policy-sets/v1/policy/ssp";

const tenantYaml = (spec: string) => `apiVersion: revsync/v1
kind: TenantConfiguration
metadata: { name: Default Tenant Configuration }
spec: { ${spec} }
`;
const sspYaml = (name: string, hierarchyNo: number, extra = "", method = "formula") => `apiVersion: revsync/v1
kind: SspPolicy
metadata: { name: ${name} }
spec:
  method: ${method}
  active: true
  hierarchy_no: ${hierarchyNo}
  data_identifiers: [product_id]
  floor_percentage: 85
  ceiling_percentage: 115
${method === "formula" ? "  expression: unit_list_price * 0.8\n" : ""}  when: [{ field_name: product_family, operator: equality, value: ${name.replace(/\W/g, "")} }]
${extra}`;

/** A policy repo of its own, aimed at the emulator; `lock` goes into its environment as written. */
function repo(files: Record<string, string>, lock?: string, dir = mkdtempSync(join(tmpdir(), "revsync-two-"))): string {
  if (!fx.dirs.includes(dir)) fx.dirs.push(dir);
  writeFileSync(
    join(dir, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: ${fx.emu.url}\n    realm: demo\n${lock ? `    lock: ${lock}\n` : ""}`,
  );
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, "policies", name, ".."), { recursive: true });
    writeFileSync(join(dir, "policies", name), text);
  }
  return dir;
}

/** A bare repository on disk, the remote every clone pushes its lock ref to (as a team's git host). */
function bareRemote(): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-remote-"));
  fx.dirs.push(dir);
  execFileSync("git", ["init", "-q", "--bare", dir]);
  return `file://${dir}`;
}
function cloneOf(remote: string, files: Record<string, string>): string {
  const dir = repo(files, "git");
  execFileSync("git", ["init", "-q", dir]);
  execFileSync("git", ["-C", dir, "remote", "add", "origin", remote]);
  return dir;
}

const run = (dir: string, args: string[], opts: Parameters<typeof cli>[1] = {}) => cli(args, { cwd: dir, ...opts, env: { ...DEMO_ENV, ...opts.env } });
const state = async (): Promise<any> => fx.emu.admin("GET", "state");
const liveTc = async (): Promise<Record<string, unknown>> => (await state()).tenants[0].tenantConfigurations[0].compliance_spec[0];
const activeAt = async (n: number): Promise<string[]> =>
  (await state()).tenants[0].ssp.filter((p: any) => p.item.hierarchy_no === n && p.item.active !== false).map((p: any) => p.compliance_name);
async function asBob(method: string, path: string, body: unknown): Promise<void> {
  const bob = await token(fx.emu.url, "bob");
  const b = typeof body === "function" ? body((await api(fx.emu.url, bob, "GET", TC)).body[0]) : body;
  const res = await api(fx.emu.url, bob, method, path, b);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}
/** apply --format json's report, checked against schemas/apply-report.schema.json with ajv (a standard
 *  JSON Schema validator), and the evidence record against its own schema. */
const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
const schemaOf = (f: string): object => JSON.parse(readFileSync(join(ROOT, "schemas", f), "utf8")) as object;
ajv.addSchema(schemaOf("evidence-record.schema.json"));
const validReport = ajv.compile(schemaOf("apply-report.schema.json"));
function reportOf(stdout: string): any {
  const report = JSON.parse(stdout);
  expect(validReport(report) ? null : validReport.errors).toBeNull();
  return report;
}
function evidenceOf(dir: string): any {
  const folder = join(dir, "evidence");
  const [file] = readdirSync(folder).filter((f) => f.endsWith(".json"));
  const record = JSON.parse(readFileSync(join(folder, file ?? ""), "utf8"));
  const valid = ajv.getSchema("urn:revsync:schema:evidence-record");
  expect(valid?.(record) ? null : valid?.errors).toBeNull();
  return record;
}

/** A test of all stderr so far (cli's `when`) that runs each step, in turn and one after another, once its
 *  text has appeared: the steps hold and let go of the service's answers as the apply goes, so that what
 *  another user does lands where the test puts it, whatever the machine's speed. `done`: every step run. */
function inTurn(steps: [string | RegExp, () => Promise<unknown>][]): {
  when: { stderr: (e: string) => boolean; act: () => void };
  done: () => Promise<unknown>;
} {
  let next = 0;
  let chain: Promise<unknown> = Promise.resolve();
  const seen = (e: string, text: string | RegExp): boolean => (typeof text === "string" ? e.includes(text) : text.test(e));
  const stderr = (e: string): boolean => {
    for (let step = steps[next]; step && seen(e, step[0]); step = steps[++next]) chain = chain.then(step[1]);
    return false;
  };
  return { when: { stderr, act: () => undefined }, done: () => chain };
}

describe("a write that knows when it was undone", () => {
  it("bob's write lands right after revsync's tenant update: 'overwritten … by bob at …', exit 1, the same outcome in JSON and evidence, never done", async () => {
    const dir = repo({ "tc.yaml": tenantYaml("ui_mode: Modern") });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    // Bob's screen shows the configuration as it was before revsync's write; he saves it, with a change of
    // his own, while the read right after revsync's PATCH is held. (revsync's PATCH is held until that
    // read's hold is set.)
    const bobsView = (await api(fx.emu.url, await token(fx.emu.url, "bob"), "GET", TC)).body[0];
    const hold = (method: string, path: string) => ({ kind: "latency", latency_ms: 600_000, method, path });
    await fx.emu.admin("POST", "faults", hold("PATCH", "/tenant-configurations/"));
    const bob = inTurn([
      ["sending the update", () => fx.emu.admin("POST", "faults", hold("GET", "/tenant-configurations"))],
      [/PATCH \S*tenant-configurations\/\S+ 200/, () => asBob("PATCH", `${TC}/TC-0001`, updateBody(bobsView, { carves_allocation: true }, "bob"))],
      [/PATCH \S*tenant-configurations\/\S+ 200/, () => fx.emu.admin("DELETE", "faults")],
    ]);
    const r = await run(dir, ["apply", "p.json", "--auto-approve", "--format", "json", "--verbose", "--evidence", "evidence"], { when: bob.when });
    await bob.done();
    expect(r.code).toBe(1);
    const report = reportOf(r.stdout);
    const [entry] = report.outcomes;
    expect(entry).toMatchObject({ action: "update", status: "failed", outcome: "overwritten" });
    // Every field the body carried is compared: git's, which bob's stale screen put back, and one git does
    // not set.
    expect(entry.message).toMatch(
      /^overwritten after revsync's write by bob at \d{4}-\S+Z: (?=.*ui_mode "Modern" -> "Classic")(?=.*carves_allocation false -> true)/,
    );
    expect(report.summary).toEqual({ done: 0, already: 0, confirmed: 0, blocked: 0, failed: 0, unknown: 0, skipped: 0, overwritten: 1, breached: 0 });
    const rec = evidenceOf(dir);
    expect(rec.summary).toMatchObject({ ...report.summary, not_applied: expect.any(Number) });
    expect(rec.changes.find((c: any) => c.action === "update")).toMatchObject({
      outcome: "overwritten",
      why: entry.message,
      requests: expect.arrayContaining([expect.objectContaining({ method: "PATCH", body: expect.objectContaining({ user_name: "alice" }) })]),
    });
    expect(rec.lock).toMatchObject({ backend: "local", released: true });
    expect((await run(dir, ["evidence", "show", "evidence"])).stdout).toContain(
      `  lock        ${rec.lock.where}, id ${rec.lock.id}, taken ${rec.lock.acquired_at}\n`,
    );
    expect((await liveTc()).ui_mode).toBe("Classic");
  });

  it("a second live policy at the create's hierarchy_no right after it: overwritten, exit 1; the same plan again is blocked, never 'already'", async () => {
    const dir = repo({ "a.yaml": sspYaml("Race A", 70) });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    // Bob's policy is created while the read right after revsync's POST is held (revsync's POST is held
    // until that read's hold is set).
    const hold = (method: string, path: string) => ({ kind: "latency", latency_ms: 600_000, method, path });
    await fx.emu.admin("POST", "faults", hold("POST", "/policy/ssp"));
    const bob = inTurn([
      ["sending the create", () => fx.emu.admin("POST", "faults", hold("GET", "/policy/ssp"))],
      [/POST \S*\/policy\/ssp 20\d/, () => asBob("POST", SSP, sspCreateBody("Bob's Policy", { hierarchy_no: 70 }))],
      [/POST \S*\/policy\/ssp 20\d/, () => fx.emu.admin("DELETE", "faults")],
    ]);
    const r = await run(dir, ["apply", "p.json", "--auto-approve", "--verbose"], { when: bob.when });
    await bob.done();
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^overwritten create {3}ssp\/Race A: overwritten after revsync's write by bob at \S+Z: the active policy "Bob's Policy" holds hierarchy_no 70 too/m,
    );
    expect(r.stdout).toContain("Apply finished with failures: 0 done, 0 failed, 0 skipped, 1 overwritten.");
    await fx.emu.admin("DELETE", "faults");
    const again = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(
      /^blocked create {3}ssp\/Race A: blocked: ssp\/Race A is in the service as git has it, but hierarchy_no 70 is held now by .*Bob's Policy/m,
    );
  });
});

describe("a create that meets another of its name", () => {
  it("someone else's policy of the same name lands with revsync's create (a service that answers no 409 to a duplicate name): overwritten, exit 1, never done; the same plan again is blocked", async () => {
    const dir = repo({ "a.yaml": sspYaml("Race C", 71) });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    const hold = (method: string, path: string) => ({ kind: "latency", latency_ms: 600_000, method, path });
    await fx.emu.admin("POST", "faults", hold("POST", "/policy/ssp"));
    // Bob's "Race C" (hierarchy 5, unit_list_price * 3) goes in beside revsync's while the read after its
    // POST is held: loaded as state, as the emulator itself answers a duplicate name 409.
    const twin = async (): Promise<void> => {
      const s = await state();
      const ours = s.tenants[0].ssp.find((p: any) => p.compliance_name === "Race C");
      const theirs = structuredClone(ours);
      Object.assign(theirs, { compliance_id: "SSP-BOB", created_by: "bob", last_modified_by: "bob" });
      Object.assign(theirs.item, { hierarchy_no: 5, expression: "unit_list_price * 3" });
      s.tenants[0].ssp.push(theirs);
      await fx.emu.admin("POST", "reset", { state: s });
      await fx.emu.admin("DELETE", "faults");
    };
    const bob = inTurn([
      ["sending the create", () => fx.emu.admin("POST", "faults", hold("GET", "/policy/ssp"))],
      [/POST \S*\/policy\/ssp 20\d/, twin],
    ]);
    const r = await run(dir, ["apply", "p.json", "--auto-approve", "--verbose"], { when: bob.when });
    await bob.done();
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^overwritten create {3}ssp\/Race C: overwritten after revsync's write by bob at \S+Z: the service holds 2 SSP policies named "Race C" now/m,
    );
    const again = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/^blocked create {3}ssp\/Race C: blocked: the service holds 2 SSP policies named "Race C" now/m);
  });
});

describe("retries are idempotent", () => {
  const values =
    "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\nED-1,USD,Amount,90,100,110,2026-01-01,2026-12-31\n";

  it("a saved plan creating an upload policy with a batch: applied again after it landed, each entry 'already', nothing sent, exit 0; after it landed in part, the rest is done", async () => {
    const dir = repo({
      "edge.yaml": sspYaml("Edge SSP", 80, "batches:\n  - { name: B1, status: approved, values: edge-b1.csv }\n", "upload"),
      "edge-b1.csv": values,
    });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    // The approve refused once: the create and review landed, the approve did not.
    await fx.emu.admin("POST", "faults", { kind: "error_array", method: "PATCH", path: "/ssp/approve/", times: 1 });
    const first = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain("Apply finished with failures: 2 done, 1 failed, 0 skipped.");
    const partly = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(partly.stdout).toMatch(/^already create {3}ssp\/Edge SSP: already applied/m);
    expect(partly.stdout).toMatch(/^already review {3}ssp\/Edge SSP\/batch\/B1: already reviewed/m);
    expect(partly.stdout).toContain("Apply complete: 1 done, 2 already, 0 failed, 0 skipped.");
    expect(partly.code).toBe(0);
    await fx.emu.admin("DELETE", "requests");
    const whole = await run(dir, ["apply", "p.json", "--auto-approve", "--format", "json"]);
    expect(whole.code).toBe(0);
    expect(reportOf(whole.stdout).outcomes.map((o: any) => o.outcome)).toEqual(["already", "already", "already"]);
    expect(await fx.emu.writes()).toEqual([]);
  });
});

describe("one count", () => {
  it("a run that ends done, failed and unknown: the closing line counts what the evidence record counts, by the same names; a blocked re-apply's JSON has its blocked key", async () => {
    const dir = repo({});
    for (const f of readdirSync(join(process.cwd(), "policies"), { recursive: true }) as string[]) {
      const from = join(process.cwd(), "policies", f);
      if (f.endsWith(".yaml") || f.endsWith(".csv")) {
        mkdirSync(join(dir, "policies", f, ".."), { recursive: true });
        writeFileSync(join(dir, "policies", f), readFileSync(from));
      }
    }
    writeFileSync(join(dir, "revsync.yaml"), `${readFileSync(join(dir, "revsync.yaml"), "utf8")}    vars: { contra_account: MJ-CONTRA-100 }\n`);
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    await fx.emu.admin("POST", "faults", {
      faults: [
        // The create lands and its answer is lost; reading it back fails: unknown.
        { kind: "drop", after_commit: true, method: "POST", path: "/policy/ssp" },
        { kind: "status", status: 503, method: "GET", query: "policy_name=Training" },
        // A batch's guard cannot read its policy: failed, nothing sent.
        { kind: "status", status: 503, method: "GET", query: "policy_name=Hardware" },
      ],
    });
    const r = await run(dir, ["apply", "p.json", "--auto-approve", "--concurrency", "1", "--evidence", "evidence"]);
    expect(r.code).toBe(1);
    const line = /^Apply finished with failures: (.*)\.$/m.exec(r.stdout)?.[1] ?? "";
    const counted = Object.fromEntries(line.split(", ").map((p) => [p.split(" ")[1], Number(p.split(" ")[0])]));
    const { not_applied: _, ...summary } = evidenceOf(dir).summary;
    expect(counted).toEqual({ done: 4, failed: 2, unknown: 1, skipped: 0 });
    expect(Object.fromEntries(Object.entries(summary).filter(([, n]) => n))).toEqual(Object.fromEntries(Object.entries(counted).filter(([, n]) => n)));

    // Bob changes the tenant configuration: the same plan again blocks its update, and its JSON says so.
    await fx.emu.admin("DELETE", "faults");
    await asBob("PATCH", `${TC}/TC-0001`, (env: unknown) => updateBody(env, { ui_mode: "Modern" }, "bob"));
    const blocked = await run(dir, ["apply", "p.json", "--auto-approve", "--format", "json"]);
    expect(blocked.code).toBe(1);
    expect(reportOf(blocked.stdout).summary).toMatchObject({ blocked: 1, overwritten: 0, unknown: 0 });
  });
});

describe("one writer per environment", () => {
  /** Two plans saved from the same state, each changing its own field and creating a policy at
   *  hierarchy_no 70, applied by two real processes started together (bench/race.mjs runs it again and
   *  again, with and without faults: npm run race). The writes are held by the emulator until the one
   *  that waits says it waits, so that the two meet however long either takes to start. */
  async function race(): Promise<{ a: CliResult; b: CliResult }> {
    await fx.emu.reset();
    await fx.emu.admin("DELETE", "faults");
    const remote = bareRemote();
    const a = cloneOf(remote, { "tc.yaml": tenantYaml("ui_mode: Modern"), "a.yaml": sspYaml("Race A", 70) });
    const b = cloneOf(remote, { "tc.yaml": tenantYaml("manual_journal_contra_account: MJ-RACE-B"), "b.yaml": sspYaml("Race B", 70) });
    for (const dir of [a, b]) expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    await fx.emu.admin("POST", "faults", {
      faults: [
        { kind: "latency", latency_ms: 600_000, method: "PATCH" },
        { kind: "latency", latency_ms: 600_000, method: "POST", path: "/policy/ssp" },
      ],
    });
    const args = ["apply", "p.json", "--auto-approve", "--format", "json", "--lock-timeout", "30s"];
    const opts = { env: DEMO_ENV, when: { stderr: "is locked by another apply", act: () => fx.emu.admin("DELETE", "faults") } };
    const [ra, rb] = await Promise.all([cliProcess(args, { cwd: a, ...opts }), cliProcess(args, { cwd: b, ...opts })]);
    return { a: ra as CliResult, b: rb as CliResult };
  }

  /** Never two "done" with one change lost; never two policies at one hierarchy_no with both exit 0. */
  async function checkRace(r: { a: CliResult; b: CliResult }): Promise<void> {
    const tc = await liveTc();
    const wrote = { a: ["ui_mode", "Modern"], b: ["manual_journal_contra_account", "MJ-RACE-B"] } as const;
    for (const k of ["a", "b"] as const) {
      const report = reportOf(r[k].stdout);
      for (const o of report.outcomes ?? []) {
        if (o.outcome !== "done") continue;
        if (o.action === "update") expect(tc[wrote[k][0]], `${k}'s update, reported done, holds`).toBe(wrote[k][1]);
        if (o.action === "create") expect(await activeAt(70)).toEqual([k === "a" ? "Race A" : "Race B"]);
      }
    }
    expect([r.a.code, r.b.code].filter((c) => c === 0).length, `${r.a.stderr}\n${r.b.stderr}`).toBe(1);
  }

  it("two real applies started together, the writes held until the second waits: one writes, the other waits naming it, then finds what changed since its plan and writes nothing over it", async () => {
    const r = await race();
    await checkRace(r);
    const waiter = r.a.code === 0 ? r.b : r.a;
    const holder = r.a.code === 0 ? r.a : r.b;
    const lockId = /lock id ([0-9a-f]{40})/.exec(holder.stderr)?.[1];
    expect(waiter.stderr).toMatch(
      new RegExp(
        `environment "demo" is locked by another apply: \\S+ on host ${hostname()} \\(pid \\d+\\), since \\S+Z \\(\\d+s ago\\), applying plan sha256:[0-9a-f]{64} as service user alice, lock id ${lockId}; waiting up to \\d+s \\(--lock-timeout\\)`,
      ),
    );
    expect(reportOf(waiter.stdout).summary).toMatchObject({ done: 0, blocked: 2 });
    expect(await activeAt(70)).toHaveLength(1);
  });

  it("a lock left by a killed apply: the next apply names it and writes nothing; revsync unlock releases it; the apply after goes on", async () => {
    const remote = bareRemote();
    const dir = cloneOf(remote, { "tc.yaml": tenantYaml("ui_mode: Modern"), "a.yaml": sspYaml("Race A", 70) });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"])).code).toBe(0);
    await fx.emu.admin("POST", "faults", { kind: "latency", latency_ms: 2000, method: "PATCH" });
    let pid = 0;
    // Its requests' cap (REVSYNC_TIMEOUT_MS, twice over) is what its lock records: once unlock released
    // it, the next apply waits that long for any write it sent.
    const killed = await cliProcess(["apply", "p.json", "--auto-approve"], {
      cwd: dir,
      env: { ...DEMO_ENV, REVSYNC_TIMEOUT_MS: "400" },
      when: {
        stderr: "Locked environment",
        act: (child: ChildProcess) => {
          pid = child.pid ?? 0;
          child.kill("SIGKILL");
        },
      },
    });
    expect(killed.code).toBe(null);
    await fx.emu.admin("DELETE", "faults");
    const status = await run(dir, ["lock", "status", "--env", "demo"]);
    // Named by the tenant (its URL and realm), in the remote this clone's origin names (its URL shown).
    expect(status.stdout).toMatch(
      new RegExp(
        `is locked \\(git remote origin \\(${remote}\\), ref refs/revsync/tenant-locks/localhost-\\d+-demo-[0-9a-f]{16}\\):\\n  held by \\S+ on host \\S+ \\(pid ${pid}\\)`,
      ),
    );
    // Killed: its process is no longer running on this host.
    const id = /lock id ([0-9a-f]{40})/.exec(status.stdout)?.[1] ?? "";
    // Without a terminal (as here, and in CI) the command each hint names carries --force: unlock asks
    // nobody there and refuses without it.
    expect(status.stdout).toContain(`Its process (pid ${pid}) is no longer running on this host: release it: revsync unlock --env demo ${id} --force\n`);
    const next = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(next.code).toBe(1);
    expect(next.stderr).toContain(`(pid ${pid})`);
    const hint =
      /if that apply is dead \(killed, its runner gone\), release its lock \(the next apply then waits 0\.8s, its request deadline, for any write it sent to land\): (revsync unlock .*)$/m.exec(
        next.stderr,
      )?.[1];
    expect(hint).toBe(`revsync unlock --env demo ${id} --force`);
    // Another id than the lock held now releases nothing; the id given is quoted as outside text is.
    // The environment is named, never guessed.
    const wrong = await run(dir, ["unlock", "--env", "demo", "01234 56789"]);
    expect(wrong.stderr).toContain(`Error: the lock of environment "demo" is ${id}, not "01234 56789": held by `);
    expect(wrong.stderr).toContain("nothing was released");
    expect((await run(dir, ["unlock", id])).stderr).toContain("unlock needs --env NAME");
    // Without a terminal to confirm on, unlock needs --force.
    const unconfirmed = await run(dir, ["unlock", "--env", "demo", id.slice(0, 12)]);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain("without a terminal to confirm on, it needs --force; nothing was released");
    // The hint apply printed, run as printed (its words: the id is hex, nothing to unquote).
    const unlock = await run(dir, (hint ?? "").split(" ").slice(1));
    expect(unlock.code).toBe(0);
    expect(unlock.stdout).toContain(`Released the lock ${id} of environment "demo"`);
    expect(unlock.stdout).toContain("The next apply waits 0.8s (that apply's request deadline) for any write it sent to land");
    const after = await run(dir, ["apply", "p.json", "--auto-approve"]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).toContain("took over a lock released while a write sent under it may still land (released by revsync unlock");
    expect(after.stderr).toContain("waiting 0.8s (its request deadline) for any write it sent to land");
    expect((await run(dir, ["lock", "status", "--env", "demo", "--format", "json"])).stdout).toContain('"locked": false');
  });

  it("a service on loopback: the lock is a file of this machine; a second apply meets it, a dead holder's is taken over, --lock=false is said in the evidence", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "revsync-locks-"));
    fx.dirs.push(tmp);
    const env = { TMPDIR: tmp };
    const dir = repo({ "tc.yaml": tenantYaml("ui_mode: Modern") });
    expect((await run(dir, ["plan", "--out", "p.json", "--quiet"], { env })).code).toBe(0);
    // The write is held until the other apply has met the lock, however the two runs interleave.
    await fx.emu.admin("POST", "faults", { kind: "latency", latency_ms: 600_000, method: "PATCH" });
    const meets = { env, when: { stderr: "is locked by another apply", act: () => fx.emu.admin("DELETE", "faults") } };
    const both = await Promise.all([run(dir, ["apply", "p.json", "--auto-approve"], meets), run(dir, ["apply", "p.json", "--auto-approve"], meets)]);
    expect(both.map((r) => r.code).sort()).toEqual([0, 1]);
    expect(both.find((r) => r.code === 1)?.stderr).toMatch(/is locked by another apply: .* lock id [0-9a-f]{40}; nothing was written/);
    await fx.emu.admin("DELETE", "faults");

    // A holder of this machine whose process is gone (killed): the next apply takes over, and says so.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const local = new LocalLock(machineLockDir(), { baseUrl: fx.emu.url, realm: "demo" });
    await local.take({
      request_deadline_ms: 30,
      environment: "demo",
      user: "carol",
      service_user: "alice",
      host: hostname(),
      pid: dead,
      ci_run_url: null,
      since: new Date().toISOString(),
      plan_checksum: null,
      revsync_version: "0.1.0",
    });
    const over = await run(dir, ["apply", "p.json", "--auto-approve"], { env });
    expect(over.stderr).toContain(`took over the lock of an apply on this machine that is no longer running: carol on host ${hostname()} (pid ${dead})`);
    expect(over.stderr).toContain("waiting 0.03s (its request deadline) for any write it sent to land");
    expect(over.code).toBe(0);

    const off = await run(dir, ["apply", "p.json", "--auto-approve", "--lock=false", "--evidence", "evidence", "--format", "json"], { env });
    expect(off.stderr).toContain("--lock=false: this apply takes no lock");
    const none = { disabled: true, note: "--lock=false: applied without the environment's lock" };
    expect(evidenceOf(dir).lock).toEqual(none);
    expect(reportOf(off.stdout).lock).toEqual(none);
  });
});

describe("where the lock is kept", () => {
  const yaml = (env: string) => `version: 1\nenvironments:\n  production:\n${env}`;
  const at = (text: string) => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-lockcfg-"));
    fx.dirs.push(dir);
    mkdirSync(join(dir, "policies"));
    writeFileSync(join(dir, "revsync.yaml"), yaml(text));
    return dir;
  };
  it("a service not on loopback: a file of one machine is refused, a password in the remote's URL too; no such remote stops with what to do", async () => {
    const local = await run(at("    base_url: https://revenue.example.com\n    realm: acme\n    lock: local\n"), ["lock", "status"]);
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('environment "production": lock: local keeps the lock in a file of this machine, which a CI runner or another laptop');
    const secret = await run(
      at("    base_url: https://revenue.example.com\n    realm: acme\n    lock: { remote: 'https://ci:hunter2@git.example.com/p.git' }\n"),
      ["lock", "status"],
    );
    expect(secret.stderr).toContain(
      "environments.production.lock.remote: it holds a password (https://[credentials]@git.example.com): credentials never live in files",
    );
    expect(secret.stdout + secret.stderr).not.toContain("hunter2");
    // The default for such a service: the git remote origin, which a folder outside git does not have.
    const dir = at("    base_url: https://revenue.example.com\n    realm: acme\n");
    expect((await run(dir, ["validate"])).code).toBe(0);
    const none = await run(dir, ["lock", "status"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/cannot read the lock of environment "production": the policy repo \(\S+\) is not a git repository/);
    expect(none.stderr).toContain("--lock=false");
  });
});
