import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planChecksum } from "../src/plan/model.js";
import { cli, DEMO_ENV, removeDir, ROOT, token, useEmulatorRepo } from "../src/testing/helpers.js";

// Guardrails and freeze windows (issue 44) through the CLI in process against the emulator, each run
// judged at a moment the test gives (the run's clock): the emulator's request journal is the witness of
// what was written.

const fx = useEmulatorRepo({ freshRepo: true });
const BOB = { REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "bob-password" };
const TC = "tenant-configuration/Default Tenant Configuration";
const H1 = "ssp/Hardware SSP/batch/FY26-H1";
const run = (now: string, args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env }, now });
const guard = (yaml: string) => appendFileSync(join(fx.repo, "revsync.yaml"), yaml);
/** The writes the emulator received since the journal was last cleared. */
const writes = async (): Promise<string[]> =>
  (await fx.emu.admin<{ method: string; path: string }[]>("GET", "requests"))
    .filter((r) => r.method !== "GET" && !r.path.includes("/token"))
    .map((r) => `${r.method} ${r.path}`);
const planJson = async (now: string, extra: string[] = []) => {
  const r = await run(now, ["plan", "--format", "json", "--target", TC, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

describe("each effect", () => {
  it("deny holds apply back, nothing written; override_by's unlisted identity is refused, a listed one overrides it with a reason the evidence keeps", async () => {
    guard(`guardrails:
  - name: big-move
    match: { actions: [approve], addresses: ["ssp/*/batch/*"] }
    when: mid_point_move_pct > 2.9
    effect: deny
    override_by: [carol]
`);
    await fx.emu.admin("DELETE", "requests");
    const denied = await run("2026-05-04T12:00:00Z", ["apply", "--auto-approve", "--target", H1], BOB);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(`big-move denies ${H1} (approve): mid_point_move_pct > 2.9: mid_point_move_pct = 3`);
    expect(denied.stderr).toContain("nothing was sent");
    const unlisted = await run("2026-05-04T12:00:00Z", ["apply", "--auto-approve", "--target", H1, "--override", "big-move", "--reason", "signed off"], BOB);
    expect(unlisted.code).toBe(1);
    expect(unlisted.stderr).toContain("--override big-move: only carol may override it, and the approvers here are bob (the approver identity)");
    expect(await writes()).toEqual([]);

    writeFileSync(join(fx.repo, "revsync.yaml"), readFileSync(join(fx.repo, "revsync.yaml"), "utf8").replace("override_by: [carol]", "override_by: [bob]"));
    const reason = "CFO <b>signed</b> off @finance";
    const md = await run("2026-05-04T12:00:00Z", ["plan", "--format", "markdown", "--target", H1, "--override", "big-move", "--reason", reason], BOB);
    expect(md.stdout.indexOf("#### Guardrails")).toBeLessThan(md.stdout.indexOf("| Action | Count |"));
    expect(md.stdout).toContain("overridden by bob: CFO &lt;b&gt;signed&lt;/b&gt; off &#64;&#8288;finance");
    expect(md.stdout).not.toContain("<b>signed");
    const listed = await run(
      "2026-05-04T12:00:00Z",
      ["apply", "--auto-approve", "--target", H1, "--override", "big-move", "--reason", reason, "--evidence", "ev"],
      BOB,
    );
    expect(listed.code, listed.stderr).toBe(0);
    expect(await writes()).toEqual([expect.stringMatching(/^PATCH .*\/approve\//)]);
    const file = readdirSync(join(fx.repo, "ev")).find((n) => n.endsWith(".json")) as string;
    const record = JSON.parse(readFileSync(join(fx.repo, "ev", file), "utf8"));
    expect(record.guardrails.overrides).toEqual([{ name: "big-move", reason, by: "bob" }]);
    expect(record.guardrails.approvers).toEqual([{ user: "bob", via: "approver identity" }]);
    expect(record.changes.find((c: any) => c.address === H1).guardrails).toEqual([
      expect.objectContaining({ rule: "big-move", outcome: "overridden", override: { by: "bob", reason } }),
    ]);
    expect((await run("2026-05-04T12:00:00Z", ["evidence", "verify", "ev"])).code).toBe(0);
    const shown = await run("2026-05-04T12:00:00Z", ["evidence", "show", "ev"]);
    expect(shown.stdout).toContain(`big-move overridden by bob: ${reason}; nothing held the plan back`);
    expect(shown.stdout).toContain("guardrails: big-move overridden: overridden by bob");
  });

  it("an approver token counts for override_by only once the service accepts it: a JWT made up, or an opaque token named by REVSYNC_APPROVER_USER, overrides nothing", async () => {
    guard(`guardrails:
  - name: frozen-config
    match: { actions: [update] }
    effect: deny
    override_by: [carol, bob]
`);
    await fx.emu.admin("DELETE", "requests");
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const madeUp = `${part({ alg: "none" })}.${part({ preferred_username: "carol", sub: "carol", exp: 4102444800 })}.bm90LWEtc2lnbmF0dXJl`;
    const override = ["apply", "--auto-approve", "--target", TC, "--override", "frozen-config", "--reason", "quarter close sign-off"];
    const forged = await run("2026-05-04T12:00:00Z", override, { REVSYNC_APPROVER_TOKEN: madeUp });
    expect(forged.code).toBe(1);
    expect(forged.stderr).toContain("the service refused the approver identity's token");
    // An opaque token the service issued to alice names nobody: REVSYNC_APPROVER_USER's text is no identity.
    await fx.emu.admin("POST", "settings", { opaque_tokens: true });
    const opaque = await token(fx.emu.url, "alice");
    await fx.emu.admin("POST", "settings", { opaque_tokens: false });
    const named = await run("2026-05-04T12:00:00Z", override, { REVSYNC_APPROVER_TOKEN: opaque, REVSYNC_APPROVER_USER: "bob" });
    expect(named.code).toBe(1);
    expect(named.stderr).toContain("--override frozen-config: only carol, bob may override it, and no approver is known to this run");
    // plan --override shows what apply would do: the variable's text overrides nothing there either.
    const planned = await run("2026-05-04T12:00:00Z", ["plan", ...override.slice(2)], { REVSYNC_APPROVER_TOKEN: opaque, REVSYNC_APPROVER_USER: "bob" });
    expect(planned.code).toBe(1);
    expect(planned.stderr).toContain("--override frozen-config: only carol, bob may override it, and no approver is known to this run");
    expect(await writes()).toEqual([]);
    const real = await run("2026-05-04T12:00:00Z", override, { REVSYNC_APPROVER_TOKEN: await token(fx.emu.url, "bob") });
    expect(real.code, real.stderr).toBe(0);
    expect(await writes()).toEqual([expect.stringMatching(/^PATCH .*tenant-configurations/)]);
  });

  it("warn is shown and never holds back; require_approval waits for count of from, and the approver identity counts", async () => {
    guard(`guardrails:
  - name: carves-on
    match: { fields: [carves_allocation] }
    when: before.carves_allocation == false and after.carves_allocation == true
    effect: warn
  - name: contra-account
    match: { actions: [update] }
    when: after.manual_journal_contra_account != before.manual_journal_contra_account
    effect: require_approval
    count: 1
    from: [bob, carol]
`);
    const plan = await planJson("2026-05-04T12:00:00Z");
    expect(plan.guardrails.rules.map((r: any) => [r.name, r.effect])).toEqual([
      ["carves-on", "warn"],
      ["contra-account", "require_approval"],
    ]);
    expect(plan.changes[0].guardrails.map((o: any) => [o.rule, o.outcome])).toEqual([
      ["carves-on", "warn"],
      ["contra-account", "approval_needed"],
    ]);
    expect(plan.changes[0].facts).toMatchObject({ kind: "tenant-configuration", action: "update", fields_changed: 2 });
    await fx.emu.admin("DELETE", "requests");
    const waiting = await run("2026-05-04T12:00:00Z", ["apply", "--auto-approve", "--target", TC]);
    expect(waiting.code).toBe(1);
    expect(waiting.stderr).toContain(`contra-account needs approvals for ${TC} (update): needs 1 approval of bob, carol`);
    expect(await writes()).toEqual([]);
    const approved = await run("2026-05-04T12:00:00Z", ["apply", "--auto-approve", "--target", TC], BOB);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stderr).toMatch(/approved +contra-account: .*approved by bob \(the approver identity\)/);
    expect(approved.stderr).toMatch(/warn +carves-on: /);
    expect(await writes()).toEqual([expect.stringMatching(/^PATCH .*tenant-configurations/)]);
  });

  it("an exception excepts its address up to its until day (in the calendar's time zone), then lapses", async () => {
    guard(`fiscal_calendar: { timezone: America/Los_Angeles }
guardrails:
  - name: frozen-config
    match: { actions: [update] }
    effect: deny
    exceptions:
      - { address: "tenant-configuration/*", reason: "migration to the new contra account (FIN-12)", until: "2026-07-01" }
`);
    // 2 July 05:00 UTC is still 1 July in Los Angeles.
    const before = await planJson("2026-07-02T05:00:00Z");
    expect(before.changes[0].guardrails).toEqual([
      expect.objectContaining({
        outcome: "excepted",
        message: "excepted until 2026-07-01: migration to the new contra account (FIN-12); every change it matches",
      }),
    ]);
    expect(before.guardrails.held_back).toEqual([]);
    const after = await planJson("2026-07-02T08:00:00Z");
    expect(after.changes[0].guardrails).toEqual([expect.objectContaining({ outcome: "deny" })]);
    expect(after.guardrails.held_back).toEqual([`frozen-config denies ${TC} (update): every change it matches`]);
  });
});

describe("freeze windows", () => {
  it("quarter_end goes by the fiscal calendar's days in its time zone, across the fiscal year's end; plan says when it ends; apply inside refuses every write", async () => {
    guard(`fiscal_calendar: { fiscal_year_start: "02-01", timezone: America/New_York }
environments:
`);
    writeFileSync(
      join(fx.repo, "revsync.yaml"),
      readFileSync(join(fx.repo, "revsync.yaml"), "utf8")
        .replace(
          "      contra_account: MJ-CONTRA-100\n",
          "      contra_account: MJ-CONTRA-100\n    freeze:\n      - name: quarter-close\n        quarter_end: { days_before: 2, days_after: 1 }\n",
        )
        .replace(/environments:\n$/, ""),
    );
    // 2 February 04:30 UTC is 1 February 23:30 in New York: the new fiscal year's first day, still frozen.
    const inside = await run("2026-02-02T04:30:00Z", ["plan", "--target", TC]);
    expect(inside.stdout).toContain(
      "freeze quarter-close: in force until 2026-02-02 00:00 America/New_York (2 days before to 1 days after each fiscal quarter's end)",
    );
    await fx.emu.admin("DELETE", "requests");
    const refused = await run("2026-02-02T04:30:00Z", ["apply", "--auto-approve", "--target", TC]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("freeze window quarter-close is in force until 2026-02-02 00:00 America/New_York");
    expect(await writes()).toEqual([]);
    const out = await planJson("2026-02-02T05:30:00Z");
    expect(out.guardrails.freeze).toEqual([
      expect.objectContaining({
        name: "quarter-close",
        in_force: false,
        from_local: "2026-04-29 00:00 America/New_York",
        until_local: "2026-05-02 00:00 America/New_York",
      }),
    ]);
    const opened = await planJson("2026-01-30T05:00:00Z");
    expect(opened.guardrails.freeze[0]).toMatchObject({ in_force: true, from: "2026-01-30T05:00:00.000Z", until: "2026-02-02T05:00:00.000Z" });
  });

  it("a one-off window from and to, in its own time zone; a weekly cron for a duration, across a daylight-saving change", async () => {
    writeFileSync(
      join(fx.repo, "revsync.yaml"),
      readFileSync(join(fx.repo, "revsync.yaml"), "utf8").replace(
        "      contra_account: MJ-CONTRA-100\n",
        `      contra_account: MJ-CONTRA-100
    freeze:
      - { name: audit, from: "2026-06-01", to: "2026-06-02", timezone: Europe/Berlin }
      - { name: weekend, cron: "0 18 * * FRI", duration: 60h, timezone: Europe/Berlin }
`,
      ),
    );
    const state = async (now: string) =>
      Object.fromEntries((await planJson(now)).guardrails.freeze.map((w: any) => [w.name, w.in_force ? `until ${w.until_local}` : "closed"]));
    // 2 June 23:30 in Berlin: the last day of the audit; 3 June 00:30: over.
    expect(await state("2026-06-02T21:30:00Z")).toEqual({ audit: "until 2026-06-03 00:00 Europe/Berlin", weekend: "closed" });
    expect(await state("2026-06-02T22:30:00Z")).toEqual({ audit: "closed", weekend: "closed" });
    // Friday 27 March 18:00 CET, 60 hours on: the clocks go forward on Sunday, so it ends Monday 07:00 CEST.
    expect(await state("2026-03-28T10:00:00Z")).toEqual({ audit: "closed", weekend: "until 2026-03-30 07:00 Europe/Berlin" });
    expect(await state("2026-03-30T05:30:00Z")).toEqual({ audit: "closed", weekend: "closed" });
  });

  it("a saved plan made before a window opened is refused once it is open: apply judges it again, nothing written", async () => {
    writeFileSync(
      join(fx.repo, "revsync.yaml"),
      readFileSync(join(fx.repo, "revsync.yaml"), "utf8").replace(
        "      contra_account: MJ-CONTRA-100\n",
        '      contra_account: MJ-CONTRA-100\n    freeze:\n      - { name: close, from: "2026-03-28T18:00", to: "2026-04-03" }\n',
      ),
    );
    const made = await run("2026-03-28T17:00:00Z", ["plan", "--target", TC, "--out", "p.json"]);
    expect(made.stdout).toContain("freeze close: not in force; next from 2026-03-28 18:00 UTC to 2026-04-04 00:00 UTC");
    expect(JSON.parse(readFileSync(join(fx.repo, "p.json"), "utf8")).guardrails.held_back).toEqual([]);
    await fx.emu.admin("DELETE", "requests");
    const applied = await run("2026-03-28T18:00:00Z", ["apply", "p.json", "--auto-approve"]);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain("freeze window close is in force until 2026-04-04 00:00 UTC (from 2026-03-28T18:00 to 2026-04-03): every write waits");
    expect(await writes()).toEqual([]);
    // show prints the saved plan as it was judged.
    expect((await run("2026-03-30T00:00:00Z", ["show", "p.json"])).stdout).toContain("freeze close: not in force; next from 2026-03-28 18:00 UTC");
  });

  it("a window that opens while the prompt waits for its answer holds the writes back: apply judges again right before the first write", async () => {
    const yaml = readFileSync(join(fx.repo, "revsync.yaml"), "utf8");
    const freeze = '    freeze:\n      - { name: close, from: "2026-03-28T18:00", to: "2026-04-03" }\n';
    writeFileSync(join(fx.repo, "revsync.yaml"), yaml.replace("      contra_account: MJ-CONTRA-100\n", `      contra_account: MJ-CONTRA-100\n${freeze}`));
    await fx.emu.admin("DELETE", "requests");
    // Judged at 17:59, a minute before the window opens; the answer comes at 18:01 (the run's clock moves on).
    const opts = {
      cwd: fx.repo,
      env: DEMO_ENV,
      now: "2026-03-28T17:59:00Z",
      input: "yes\n",
      stdinTty: true,
      when: { stderr: "Do you want to perform these actions?", act: () => (opts.now = "2026-03-28T18:01:00Z") },
    };
    const late = await cli(["apply", "--target", TC], opts);
    expect(late.stderr).toContain("freeze close: not in force; next from 2026-03-28 18:00 UTC");
    expect(late.code).toBe(1);
    expect(late.stderr).toContain("freeze window close is in force until 2026-04-04 00:00 UTC");
    expect(await writes()).toEqual([]);
  });

  it("a saved plan's facts are not taken on its word: apply computes them again from git and the service, so facts edited to pass a deny (checksum recomputed) hold it back still", async () => {
    guard(`guardrails:
  - name: big-move
    match: { actions: [approve] }
    when: mid_point_move_pct > 2.9
    effect: deny
`);
    expect((await run("2026-05-04T12:00:00Z", ["plan", "--target", H1, "--out", "p.json"])).stdout).toContain("deny           big-move");
    const plan = JSON.parse(readFileSync(join(fx.repo, "p.json"), "utf8"));
    for (const c of plan.changes) if (c.facts) c.facts.mid_point_move_pct = 0;
    plan.checksum = planChecksum(plan);
    writeFileSync(join(fx.repo, "p.json"), JSON.stringify(plan));
    await fx.emu.admin("DELETE", "requests");
    const applied = await run("2026-05-04T12:00:00Z", ["apply", "p.json", "--auto-approve"], BOB);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain(`big-move denies ${H1} (approve): mid_point_move_pct > 2.9: mid_point_move_pct = 3`);
    expect(await writes()).toEqual([]);
  });
});

describe("checked offline, tested like code", () => {
  it("validate names each problem at revsync.yaml:line:col: an unknown fact, a bad expression, an unknown environment, a window that cannot be read", async () => {
    guard(`guardrails:
  - name: typo
    when: mid_point_mov_pct > 20
    effect: deny
  - name: broken
    when: after.carves_allocation == false and
    effect: deny
  - name: elsewhere
    match: { environments: [prod] }
    effect: warn
`);
    writeFileSync(
      join(fx.repo, "revsync.yaml"),
      readFileSync(join(fx.repo, "revsync.yaml"), "utf8").replace(
        "      contra_account: MJ-CONTRA-100\n",
        '      contra_account: MJ-CONTRA-100\n    freeze:\n      - { name: weekly, cron: "0 25 * * *", duration: 2h }\n      - { name: zone, from: "2026-01-01", to: "2026-01-02", timezone: Mars/Olympus }\n',
      ),
    );
    const r = await run("2026-05-04T12:00:00Z", ["validate"]);
    expect(r.code).toBe(1);
    const lines = r.stdout.split("\n").filter((l) => l.startsWith("revsync.yaml:"));
    expect(lines).toEqual([
      'revsync.yaml:11:31: error: freeze window weekly: cron "0 25 * * *" cannot be read: CronPattern: Invalid value for hour: 25',
      'revsync.yaml:12:71: error: freeze window zone: timezone "Mars/Olympus" is not a time zone this machine knows (an IANA name: America/New_York, UTC)',
      'revsync.yaml:15:11: error: guardrail typo: when: unknown fact "mid_point_mov_pct" (did you mean mid_point_move_pct?); docs/guardrails.md lists the facts',
      // Where the expression ends too early: its last column.
      "revsync.yaml:18:47: error: guardrail broken: when: the expression ends too early",
      'revsync.yaml:21:29: error: guardrail elsewhere: match.environments: no environment "prod" in revsync.yaml; it has: demo',
    ]);
    // plan refuses the repo before reading anything.
    await fx.emu.admin("DELETE", "requests");
    const plan = await run("2026-05-04T12:00:00Z", ["plan"]);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain("the guardrails of revsync.yaml have errors");
    expect(await fx.emu.admin<unknown[]>("GET", "requests")).toEqual([]);
  });

  it("revsync test runs the GuardrailTest files of the docs' recipes (examples/guardrails), and a broken expectation fails with its file and line, in JUnit as today", async () => {
    const ok = await cli(["test"], { cwd: join(ROOT, "examples", "guardrails") });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain("Guardrail tests passed: 13 passed, 0 failed.");
    const dir = mkdtempSync(join(tmpdir(), "revsync-guardrails-"));
    try {
      cpSync(join(ROOT, "examples", "guardrails"), dir, { recursive: true });
      const f = join(dir, "tests", "carves-allocation.yaml");
      writeFileSync(f, readFileSync(f, "utf8").replace("keep-carves-allocation: pass", "keep-carves-allocation: deny"));
      const bad = await cli(["test", "--format", "junit"], { cwd: dir });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain('failures="1" errors="0"');
      expect(bad.stdout).toContain('<failure message="tests/carves-allocation.yaml:15: keep-carves-allocation: expected deny, got pass">');
    } finally {
      removeDir(dir);
    }
  });
});
