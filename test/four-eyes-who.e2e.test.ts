import { appendFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { PROFILES } from "../src/emulator/profile.js";
import { cli, DEMO_ENV, removeDir, ROOT, token, useEmulatorRepo } from "../src/testing/helpers.js";

// Four eyes takes who approved from the service, not from a variable: an approve is read back right
// after it lands, and the service's word on who approved it is the record's. The batch's uploader is one
// of its preparers. A plan made by a CI job that does not know the approver says so. In process, against
// the emulator in both answer profiles; its request journal names the user of every request.

type Entry = { method: string; path: string; status: number; user?: string };
const approveLine = (stdout: string, address: string): string | undefined =>
  stdout.split("\n").find((l) => new RegExp(`^\\S+ +approve +${address.replace(/[/]/g, "\\/")}:`).test(l));

describe.each(PROFILES)("who approved, against the emulator's %s profile", (profile) => {
  const fx = useEmulatorRepo({ profile, freshRepo: true });
  const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env } });
  const approvesSent = async (): Promise<Entry[]> =>
    (await fx.emu.admin<Entry[]>("GET", "requests")).filter((e) => e.method === "PATCH" && e.path.includes("/approve/"));

  it("an approver token that is alice's with REVSYNC_APPROVER_USER=bob, under four eyes: the service's token names alice, the sign-in's user, so apply refuses before anything is sent; an opaque token names nobody, refused too", async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    await fx.emu.admin("DELETE", "requests");
    const same = await run(["apply", "--auto-approve"], { REVSYNC_APPROVER_TOKEN: await token(fx.emu.url, "alice"), REVSYNC_APPROVER_USER: "bob" });
    expect(same.code, same.stdout + same.stderr).toBe(1);
    expect(same.stderr).toContain("the approver identity is alice, the same user as revsync's own sign-in");
    expect(await fx.emu.writes()).toEqual([]);
    // A service whose tokens are no JWTs: who approves cannot be told from the token, and a variable is
    // not the service's word.
    await fx.emu.admin("POST", "settings", { opaque_tokens: true });
    const opaque = await run(["apply", "--auto-approve"], { REVSYNC_APPROVER_TOKEN: await token(fx.emu.url, "bob"), REVSYNC_APPROVER_USER: "bob" });
    expect(opaque.code, opaque.stdout + opaque.stderr).toBe(1);
    expect(opaque.stderr).toContain(
      "four eyes: the token the service issued to the approver identity names no user (no preferred_username or sub claim), so who approves cannot be told (bob is what a variable says, not the service); nothing was sent",
    );
    expect(await fx.emu.writes()).toEqual([]);
  });

  it("an approver token that is a JWT naming bob: apply says, before it writes, that the name is the token's own unverified claim", async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString("base64url");
    const jwt = `${part({ alg: "none" })}.${part({ preferred_username: "bob" })}.${part({ signature: "none" })}`;
    const applied = await run(["apply", "--auto-approve", "--target", "ssp/Hardware SSP/batch/FY26-H1"], { REVSYNC_APPROVER_TOKEN: jwt });
    expect(applied.stderr).toContain(
      "four eyes: approves go as a bearer token whose user, bob, comes from the token's own claims (preferred_username, read without verifying it), unverified until the service answers",
    );
    // The service does not take the token: nothing was approved.
    expect(applied.code).toBe(1);
    expect((await approvesSent()).filter((e) => e.status === 200)).toEqual([]);
  });

  it("without four_eyes, an opaque approver token that is alice's with REVSYNC_APPROVER_USER=bob: the service shows alice approved, a breach reported after the approve (text, JSON, evidence), and verify flags the record", async () => {
    await fx.emu.admin("POST", "settings", { opaque_tokens: true });
    const aliceToken = async () => ({ REVSYNC_APPROVER_TOKEN: await token(fx.emu.url, "alice"), REVSYNC_APPROVER_USER: "bob" });
    await fx.emu.admin("DELETE", "requests");
    const applied = await run(["apply", "--auto-approve", "--evidence", "ev", "--target", "ssp/Hardware SSP/batch/FY26-H1"], await aliceToken());
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    expect(approveLine(applied.stdout, "ssp/Hardware SSP/batch/FY26-H1")).toBe(
      "breached approve  ssp/Hardware SSP/batch/FY26-H1: approved, but four eyes is broken: the service shows it approved by alice, not by bob, the user it was sent as (its credentials sign in as alice); the batch is approved in the service as it stands: have its approval reviewed there, and give REVSYNC_APPROVER_* the approver's own credentials (a token's user is what the service says, not what a variable or the token's unverified claims name)",
    );
    expect((await approvesSent()).map((e) => [e.status, e.user])).toEqual([[200, "alice"]]);
    const [file] = readdirSync(join(fx.repo, "ev"));
    const record = JSON.parse(readFileSync(join(fx.repo, "ev", file ?? ""), "utf8"));
    expect(record.summary.breached).toBe(1);
    expect(record.changes.find((c: any) => c.address === "ssp/Hardware SSP/batch/FY26-H1")).toMatchObject({
      outcome: "breached",
      four_eyes: { reviewed_by: "alice", approved_by: "alice", sent_as: "bob", confirmed: true, rule: "breached" },
    });
    const verify = await run(["evidence", "verify", "ev"]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain("four eyes: ssp/Hardware SSP/batch/FY26-H1 was approved in breach of four eyes");

    // The same run as JSON (a reset ends every token, and restores JWTs: opaque again).
    await fx.emu.reset();
    await fx.emu.admin("POST", "settings", { opaque_tokens: true });
    const json = await run(["apply", "--auto-approve", "--format", "json", "--target", "ssp/Hardware SSP/batch/FY26-H1"], await aliceToken());
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).outcomes.find((o: any) => o.address === "ssp/Hardware SSP/batch/FY26-H1")).toMatchObject({
      status: "failed",
      outcome: "breached",
      four_eyes: { approved_by: "alice", sent_as: "bob", confirmed: true, rule: "breached" },
    });
    // Approved with the approver's own password grant: confirmed by the service, done.
    await fx.emu.reset();
    const right = await run(["apply", "--auto-approve", "--target", "ssp/Hardware SSP/batch/FY26-H1"], {
      REVSYNC_APPROVER_USERNAME: "bob",
      REVSYNC_APPROVER_PASSWORD: "bob-password",
    });
    expect(right.code, right.stdout + right.stderr).toBe(0);
    expect(approveLine(right.stdout, "ssp/Hardware SSP/batch/FY26-H1")).toBe(
      "done    approve  ssp/Hardware SSP/batch/FY26-H1: approved as bob (reviewed by alice)",
    );
  });

  it("under four eyes, REVSYNC_APPROVER_USERNAME alice@demo.example (a sign-in by e-mail) with alice's password: the service's token names alice, the sign-in's user, so apply refuses before anything is sent", async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    await fx.emu.admin("DELETE", "requests");
    const applied = await run(["apply", "--auto-approve"], { REVSYNC_APPROVER_USERNAME: "alice@demo.example", REVSYNC_APPROVER_PASSWORD: "alice-password" });
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    expect(applied.stderr).toContain(
      "the approver identity signs in as alice, the same user as revsync's own sign-in (as the service's tokens name them): approves would go as the user who prepared them, so nothing was sent",
    );
    expect(await fx.emu.writes()).toEqual([]);
  });
});

describe.each(PROFILES)("the batch's uploader is a preparer, against `revsync emulator --four-eyes` in its %s profile", (profile) => {
  const fx = useEmulatorRepo({ profile, fourEyes: true, reset: false });
  beforeAll(async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    // carol uploads a batch of Hardware SSP; git lists it, approved, with the values carol uploaded.
    const row = {
      product_id: "HW-9000",
      currency_code: "USD",
      value_type: "Percent",
      below_mid_point: 90,
      mid_point: 100,
      above_mid_point: 110,
      effective_start_date: "2027-01-01",
      effective_end_date: "2027-12-31",
    };
    await fx.emu.admin("POST", "uploads", { type: "ssp", policy_name: "Hardware SSP", batch_name: "FY27-CAROL", uploaded_by: "carol", values: [row] });
    writeFileSync(
      join(fx.repo, "policies", "ssp", "values", "hardware-fy27-carol.csv"),
      "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\nHW-9000,USD,Percent,90,100,110,2027-01-01,2027-12-31\n",
    );
    appendFileSync(
      join(fx.repo, "policies", "ssp", "hardware.yaml"),
      "  - name: FY27-CAROL\n    status: approved\n    values: values/hardware-fy27-carol.csv\n",
    );
  });
  const CAROL = { REVSYNC_APPROVER_USERNAME: "carol", REVSYNC_APPROVER_PASSWORD: "carol-password" };
  const target = ["--target", "ssp/Hardware SSP/batch/FY27-CAROL"];

  it("plan names the uploader; an approve that would go as carol, who uploaded the batch, is blocked before it is sent (exit 1), its review done", async () => {
    const plan = await cli(["plan", ...target], { cwd: fx.repo, env: { ...DEMO_ENV, REVSYNC_APPROVER_USERNAME: "carol" } });
    expect(plan.stdout).toContain(
      "four eyes: reviewed by this apply (as alice), uploaded by carol, policy created by alice; approve as carol: apply would block it",
    );
    await fx.emu.admin("DELETE", "requests");
    const applied = await cli(["apply", "--auto-approve", ...target], { cwd: fx.repo, env: { ...DEMO_ENV, ...CAROL } });
    expect(applied.code).toBe(1);
    expect(applied.stdout).toContain("done    review   ssp/Hardware SSP/batch/FY27-CAROL: reviewed");
    expect(approveLine(applied.stdout, "ssp/Hardware SSP/batch/FY27-CAROL")).toMatch(
      /^blocked approve {2}ssp\/Hardware SSP\/batch\/FY27-CAROL: blocked: four eyes: carol uploaded this batch and the approve would go as carol; nothing was sent for it/,
    );
    const journal = await fx.emu.admin<Entry[]>("GET", "requests");
    expect(journal.filter((e) => e.method === "PATCH").map((e) => [e.path.split("/")[6], e.user])).toEqual([["review", "alice"]]);
  });
});

describe("a plan made by a CI job that does not know the approver, applied by one that does", () => {
  const fx = useEmulatorRepo({ reset: false });
  beforeAll(() => appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n"));
  const BOB = { REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "bob-password" };
  const target = ["--target", "ssp/Hardware SSP/batch/FY26-H1"];

  it("the plan says the approver is not known to the job (never that apply would block), and apply, approving as bob, says the plan did not know", async () => {
    await fx.emu.reset();
    // GitHub Actions gives an unset variable as an empty string.
    const inCi = { ...DEMO_ENV, GITHUB_ACTIONS: "true", REVSYNC_APPROVER_USERNAME: "" };
    const plan = await cli(["plan", ...target, "--out", "plan.json"], { cwd: fx.repo, env: inCi });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("the approver identity is not known to this job (it names no REVSYNC_APPROVER_USERNAME)");
    expect(plan.stdout).toContain(
      "four eyes: reviewed by alice, uploaded by alice, policy created by alice; approve as the apply job's approver, not known here\n",
    );
    expect(plan.stdout).not.toContain("apply would block it");
    expect(plan.stdout).not.toContain("apply blocks each one");
    const saved = JSON.parse(readFileSync(join(fx.repo, "plan.json"), "utf8"));
    expect(saved.four_eyes).toMatchObject({ approver: null, approver_configured: false, approver_known: false });
    expect(saved.four_eyes.approves.map((a: any) => a.blocked)).toEqual([null]);

    const applied = await cli(["apply", "plan.json", "--auto-approve", "--evidence", "ev"], { cwd: fx.repo, env: { ...DEMO_ENV, ...BOB } });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const said =
      "four eyes: the plan was made by a job that did not know the approver identity, and this apply approves as bob; the rule holds for bob all the same";
    expect(applied.stderr).toContain(said);
    const [file] = readdirSync(join(fx.repo, "ev"));
    const record = JSON.parse(readFileSync(join(fx.repo, "ev", file ?? ""), "utf8"));
    expect(record.plan.approver).toBeNull();
    expect(record.approver_note).toContain(said);
  });

  it("init --ci, the recipes and docs/ci.md name the plan job's variable for the approver's user name", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-ci-"));
    try {
      const init = await cli(["init", ".", "--ci", "github", "--realm", "demo"], { cwd: dir });
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout.replace(/\s+/g, " ")).toContain(
        "give the plan job the approver's user name alone, as the variable REVSYNC_APPROVER_USERNAME (on GitHub a variable of the <env>-read environment or the repository, on GitLab an unprotected CI/CD variable)",
      );
      const recipe = readFileSync(join(dir, ".github", "workflows", "revsync-plan.yml"), "utf8");
      expect(recipe).toContain("# Four eyes: the plan names who will approve. Create the variable REVSYNC_APPROVER_USERNAME");
      expect(recipe).toContain("REVSYNC_APPROVER_USERNAME: ${{ vars.REVSYNC_APPROVER_USERNAME }}");
    } finally {
      removeDir(dir);
    }
    const ci = readFileSync(join(ROOT, "docs", "ci.md"), "utf8").replace(/\s+/g, " ");
    expect(ci).toContain("create the variable `REVSYNC_APPROVER_USERNAME` for it");
    expect(ci).toContain("`vars.REVSYNC_APPROVER_USERNAME`");
  });

  it("a plan made with carol as the approver, applied as bob: apply says so; applied as carol: nothing to say", async () => {
    await fx.emu.reset();
    const plan = await cli(["plan", ...target, "--out", "carol.json"], { cwd: fx.repo, env: { ...DEMO_ENV, REVSYNC_APPROVER_USERNAME: "carol" } });
    expect(plan.stdout).toContain("approves go as the approver identity, carol");
    const applied = await cli(["apply", "carol.json", "--auto-approve"], { cwd: fx.repo, env: { ...DEMO_ENV, ...BOB } });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stderr).toContain("four eyes: the plan was made with approves going as carol, and this apply approves as bob");
    await fx.emu.reset();
    await cli(["plan", ...target, "--out", "bob.json"], { cwd: fx.repo, env: { ...DEMO_ENV, REVSYNC_APPROVER_USERNAME: "bob" } });
    const same = await cli(["apply", "bob.json", "--auto-approve"], { cwd: fx.repo, env: { ...DEMO_ENV, ...BOB } });
    expect(same.code).toBe(0);
    expect(same.stderr).not.toContain("the plan was made with");
  });
});
