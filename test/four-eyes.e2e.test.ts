import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { Ajv } from "ajv";
import canonicalize from "canonicalize";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { recordFileName } from "../src/evidence/store.js";
import {
  api,
  cli,
  DEMO_ENV,
  removeDir,
  ROOT,
  startEmu,
  startEmulatorProcess,
  tempRepo,
  token,
  type Emu,
  type EmulatorProcess,
} from "../src/testing/helpers.js";

// Four eyes (issue 37) end to end, in process, against `revsync emulator --four-eyes` in both answer
// profiles: the emulator's request journal (which names the user of every request) and its state are the
// witnesses of what was sent and as whom.

const APPROVER = { REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "bob-password" };
const validate = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true }).compile(
  JSON.parse(readFileSync(join(ROOT, "schemas", "evidence-record.schema.json"), "utf8")) as object,
);
type Entry = { method: string; path: string; status: number; user?: string };

describe.each(["default", "literal"] as const)("four eyes against the emulator's %s profile", (profile) => {
  let emu: Emu;
  let repo: string;
  beforeAll(async () => {
    emu = await startEmu("demo", { profile, fourEyes: true });
  });
  afterAll(async () => {
    await emu.close();
  });
  beforeEach(async () => {
    await emu.reset();
    if (repo) removeDir(repo);
    repo = tempRepo(emu.url);
  });
  afterAll(() => removeDir(repo));
  const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: repo, env: { ...DEMO_ENV, ...env } });
  const sent = async (): Promise<Entry[]> => {
    const all = await emu.admin<Entry[]>("GET", "requests");
    await emu.admin("DELETE", "requests");
    return all.filter((e) => e.method === "PATCH" && /\/ssp\/(review|approve)\//.test(e.path));
  };
  const batches = async () => {
    const state: any = await emu.admin("GET", "state");
    return Object.fromEntries(state.tenants[0].ssp.flatMap((p: any) => p.batches.map((b: any) => [`${p.compliance_name}/${b.batch_name}`, b])));
  };

  it("four_eyes with one identity sends no approve and says why (exit 1), its reviews done; with the approver identity the next apply approves as bob, the service shows it, and the evidence names both users", async () => {
    appendFileSync(join(repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    await emu.admin("DELETE", "requests");
    const one = await run(["apply", "--auto-approve", "--evidence", "ev"]);
    expect(one.code, one.stderr).toBe(1);
    expect(one.stdout).toContain(
      "blocked approve  ssp/Hardware SSP/batch/FY26-H1: blocked: four eyes: alice reviewed this batch and the approve would go as alice; nothing was sent for it; fix: set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user",
    );
    expect(one.stdout).toContain("Four eyes held back 3 approves");
    // This run's own review is the reviewer's too.
    expect(one.stdout).toMatch(/blocked approve {2}ssp\/Software Subscriptions SSP\/batch\/FY26-Q1: blocked: four eyes: alice reviewed this batch/);
    const first = await sent();
    expect(first.filter((e) => e.path.includes("/approve/"))).toEqual([]);
    expect(first.filter((e) => e.path.includes("/review/")).map((e) => [e.status, e.user])).toEqual([
      [200, "alice"],
      [200, "alice"],
    ]);

    const two = await run(["apply", "--auto-approve", "--evidence", "ev"], APPROVER);
    expect(two.code, two.stdout + two.stderr).toBe(0);
    expect(two.stderr).toContain("as alice; approves as bob.");
    expect(two.stdout).toContain("done    approve  ssp/Hardware SSP/batch/FY26-H1: approved as bob (reviewed by alice)");
    const second = await sent();
    // The reviews are not sent again; every approve went as bob.
    expect(second.map((e) => [e.path.split("/")[6], e.status, e.user])).toEqual([
      ["approve", 200, "bob"],
      ["approve", 200, "bob"],
      ["approve", 200, "bob"],
    ]);
    const now = await batches();
    for (const b of ["Hardware SSP/FY26-H1", "Software Subscriptions SSP/FY26-Q1", "Support Renewals SSP/FY26-CALC"])
      expect([b, now[b].status, now[b].updated_by]).toEqual([b, "approved", "bob"]);

    const dir = join(repo, "ev");
    const files = readdirSync(dir).sort();
    const [r1, r2] = files.map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")));
    for (const r of [r1, r2]) expect(validate(r) ? null : validate.errors).toBeNull();
    expect(r1).toMatchObject({ four_eyes: true, approver_user: null, service_user: "alice" });
    expect(r1.changes.find((c: any) => c.address === "ssp/Hardware SSP/batch/FY26-H1")).toMatchObject({
      outcome: "blocked",
      four_eyes: { reviewed_by: "alice", uploaded_by: "alice", policy_created_by: "alice", approved_by: "alice", rule: "blocked" },
    });
    expect(r2).toMatchObject({ four_eyes: true, approver_user: "bob", service_user: "alice" });
    for (const c of r2.changes)
      expect([c.address, c.outcome, c.four_eyes]).toEqual([
        c.address,
        "done",
        // Who approved is what the service shows right after the approve: bob, as the approve was sent.
        { reviewed_by: "alice", uploaded_by: "alice", policy_created_by: "alice", approved_by: "bob", sent_as: "bob", confirmed: true },
      ]);
    // Every request names its user: the approver signed in as bob, and each approve's requests went as bob.
    const all = [...r2.other_requests, ...r2.changes.flatMap((c: any) => c.requests)];
    expect(all.every((q: any) => q.user === "alice" || q.user === "bob")).toBe(true);
    expect(r2.other_requests.filter((q: any) => q.path.endsWith("/token")).map((q: any) => q.user)).toEqual(["alice", "bob"]);
    expect(r2.changes.flatMap((c: any) => c.requests).map((q: any) => q.user)).toEqual(expect.arrayContaining(["bob"]));
    expect(r2.changes.flatMap((c: any) => c.requests).some((q: any) => q.user !== "bob")).toBe(false);

    const verify = await run(["evidence", "verify", "ev"]);
    expect(verify.code, verify.stdout).toBe(0);
    expect(verify.stdout).toContain("LOCAL-APPLY: four eyes: applied outside CI, as four_eyes: { local_apply: true } of revsync.yaml allowed");
    expect(r2).toMatchObject({ four_eyes_local_apply: true });
    const md = await run(["evidence", "show", files[1] ? join("ev", files[1]) : "", "--format", "markdown"]);
    expect(md.stdout).toContain("#### Four eyes");
    expect(md.stdout).toContain("| `ssp/Hardware SSP/batch/FY26-H1` | alice | alice | alice | bob | **done** |");

    if (profile !== "default") return;
    // A record edited so that the reviewer approved, its hash recomputed (a forger's work, not a slip):
    // every hash holds, and verify still flags it.
    const forged = structuredClone(r2);
    const approve = forged.changes.find((c: any) => c.address === "ssp/Hardware SSP/batch/FY26-H1");
    approve.four_eyes.approved_by = "alice";
    approve.four_eyes.sent_as = "alice";
    for (const q of approve.requests) q.user = "alice";
    const { hash: _old, ...content } = forged;
    forged.hash = `sha256:${createHash("sha256")
      .update(canonicalize(content) ?? "", "utf8")
      .digest("hex")}`;
    forged.prev = null;
    forged.sequence = 1;
    forged.chain_note = "there was no earlier record of environment demo in the folder";
    const { hash: _h, ...again } = forged;
    forged.hash = `sha256:${createHash("sha256")
      .update(canonicalize(again) ?? "", "utf8")
      .digest("hex")}`;
    mkdirSync(join(repo, "forged"));
    writeFileSync(join(repo, "forged", recordFileName(forged)), `${JSON.stringify(forged, null, 2)}\n`);
    const flagged = await run(["evidence", "verify", "forged"]);
    expect(flagged.code).toBe(1);
    expect(flagged.stdout).toMatch(/^FOUR-EYES /m);
    expect(flagged.stdout).toContain("four eyes: ssp/Hardware SSP/batch/FY26-H1 was reviewed and approved by the same user, alice");
    expect(flagged.stdout).not.toMatch(/EDITED|REMOVED|RENAMED/);
  });

  it("without four_eyes, the service's refusal of the reviewer's approve is explained with the fix, and a second apply with an approver finishes without sending the reviews again", async () => {
    await emu.admin("DELETE", "requests");
    const one = await run(["apply", "--auto-approve"]);
    expect(one.code).toBe(1);
    const lines = one.stdout.split("\n").filter((l) => l.startsWith("failed  approve"));
    expect(lines).toHaveLength(3);
    for (const l of lines) {
      expect(l).toMatch(
        /: refused by the four-eyes rule: alice reviewed this batch and the approve went as alice \(the service: (403: )?four eyes: alice reviewed batch /,
      );
      expect(l).toContain("fix: set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user and apply again");
    }
    const first = await sent();
    expect(first.filter((e) => e.path.includes("/approve/")).map((e) => [e.status, e.user])).toEqual(
      Array(3).fill([profile === "literal" ? 200 : 403, "alice"]),
    );
    const two = await run(["apply", "--auto-approve"], APPROVER);
    expect(two.code, two.stdout).toBe(0);
    const second = await sent();
    expect(second.map((e) => [e.path.split("/")[6], e.user])).toEqual(Array(3).fill(["approve", "bob"]));
    expect(Object.values(await batches()).filter((b: any) => b.status === "approved" && b.updated_by === "bob")).toHaveLength(3);
  });
});

describe("four eyes: the approver identity and the plan, against `revsync emulator --four-eyes` as a process", () => {
  let emu: EmulatorProcess;
  let repo: string;
  beforeAll(async () => {
    emu = await startEmulatorProcess(["--four-eyes"]);
    repo = tempRepo(emu.url);
    appendFileSync(join(repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
  });
  afterAll(async () => {
    removeDir(repo);
    await emu.stop();
  });
  const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: repo, env: { ...DEMO_ENV, ...env } });

  it("plan says above the approves that they need another approver and whether one is configured, and which it would block", async () => {
    const none = await run(["plan"]);
    const head = none.stdout.indexOf(
      "Four eyes (four_eyes: true): each approve below needs an approver other than its batch's reviewer, its uploader and its policy's creator",
    );
    expect(head).toBeGreaterThan(0);
    expect(head).toBeLessThan(none.stdout.indexOf("(approve)"));
    expect(head).toBeGreaterThan(none.stdout.lastIndexOf("(review)"));
    expect(none.stdout).toContain("no approver identity is configured");
    expect(none.stdout).toContain("four eyes: reviewed by alice, uploaded by alice, policy created by alice; approve as alice: apply would block it");
    expect(none.stdout).toContain(
      "four eyes: reviewed by this apply (as alice), uploaded by alice, policy created by alice; approve as alice: apply would block it",
    );
    const json = JSON.parse((await run(["plan", "--format", "json"], APPROVER)).stdout);
    expect(json.four_eyes).toMatchObject({ sign_in: "alice", approver: "bob", approver_configured: true });
    expect(json.four_eyes.approves.map((a: any) => [a.address, a.reviewed_by, a.reviewed_in_plan, a.blocked])).toEqual([
      ["ssp/Hardware SSP/batch/FY26-H1", "alice", false, false],
      ["ssp/Software Subscriptions SSP/batch/FY26-Q1", null, true, false],
      ["ssp/Support Renewals SSP/batch/FY26-CALC", "alice", false, false],
    ]);
    // A plan job need not hold the approver's password to say who will approve.
    const named = await run(["plan"], { REVSYNC_APPROVER_USERNAME: "bob" });
    expect(named.stdout).toContain("approves go as the approver identity, bob; everything else as alice.");
    expect(named.stdout).toContain("four eyes: reviewed by alice, uploaded by alice, policy created by alice; approve as bob\n");
    const md = (await run(["plan", "--format", "markdown"], APPROVER)).stdout;
    expect(md).toContain("approves go as the approver identity, bob; everything else as alice.");
  });

  it("apply refuses before any write when the approver is the sign-in's user, when the approver identity is half given, or cannot sign in; secrets stay out", async () => {
    await emu.admin("DELETE", "requests");
    const same = await run(["apply", "--auto-approve"], { REVSYNC_APPROVER_USERNAME: "ALICE", REVSYNC_APPROVER_PASSWORD: "alice-password" });
    expect(same.code).toBe(1);
    expect(same.stderr).toContain("the approver identity is ALICE, the same user as revsync's own sign-in");
    const half = await run(["apply", "--auto-approve"], { REVSYNC_APPROVER_USERNAME: "bob" });
    expect(half.code).toBe(1);
    expect(half.stderr).toContain("the approver identity is incomplete: set REVSYNC_APPROVER_PASSWORD");
    const wrong = await run(["apply", "--auto-approve", "--verbose"], { REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "not-bobs-9876" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("the approver identity could not sign in");
    expect(wrong.stdout + wrong.stderr).not.toContain("not-bobs-9876");
    const journal = await emu.admin<Entry[]>("GET", "requests");
    expect(journal.filter((e) => e.method !== "GET" && e.path.startsWith("/apis/"))).toEqual([]);
    // The emulator's --four-eyes itself: the batch's reviewer is refused its approve, another user is not.
    const approve = "/apis/policy-sets/v1/policy/ssp/approve/SSP-HW/FY26-H1";
    const refused = await api(emu.url, await token(emu.url, "alice"), "PATCH", approve);
    expect([refused.status, refused.body.message]).toEqual([403, "four eyes: alice reviewed batch FY26-H1 and cannot approve it; another user must"]);
    expect((await api(emu.url, await token(emu.url, "bob"), "PATCH", approve)).status).toBe(200);
  });

  it("the emulator's --four-eyes refuses the batch's uploader its approve too, though someone else reviewed it", async () => {
    await emu.admin("POST", "uploads", { type: "ssp", policy_name: "Hardware SSP", batch_name: "FY27-CAROL", uploaded_by: "carol", values: [] });
    const path = (action: string) => `/apis/policy-sets/v1/policy/ssp/${action}/SSP-HW/FY27-CAROL`;
    expect((await api(emu.url, await token(emu.url, "alice"), "PATCH", path("review"))).status).toBe(200);
    const refused = await api(emu.url, await token(emu.url, "carol"), "PATCH", path("approve"));
    expect([refused.status, refused.body.message]).toEqual([403, "four eyes: carol uploaded batch FY27-CAROL and cannot approve it; another user must"]);
    expect((await api(emu.url, await token(emu.url, "bob"), "PATCH", path("approve"))).status).toBe(200);
  });
});
