import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROFILES, type Profile } from "../src/emulator/profile.js";
import { api, cli, DEMO_ENV, token, useEmulatorRepo } from "../src/testing/helpers.js";

// An approve found made by someone else (already): who approved it is who the service shows, never the
// approver identity revsync would have sent it as; found made after revsync's own send was answered 409
// or 412, the report says that send did not land (never "nothing was sent"); under four eyes, found made
// by the batch's preparer, it is a breach. In process, against the emulator; someone else's approve comes
// before apply, or in the round trip of revsync's own (its PATCH held a while by a latency fault). Against
// both profiles: the literal one refuses revsync's send as 200 with an error array, which must come to
// the same outcome as the default profile's 409 or 412.

type Entry = { method: string; path: string; status: number; user?: string };
const SSP = "/apis/policy-sets/v1/policy/ssp";
const BATCH = "ssp/Hardware SSP/batch/FY26-H1";
const H2 = "ssp/Hardware SSP/batch/FY26-H2";
const target = ["--target", BATCH];
const approveLine = (stdout: string): string | undefined => stdout.split("\n").find((l) => /^\S+ +approve +ssp\/Hardware SSP\/batch\/FY26-H1:/.test(l));

/** The statuses revsync's own refused send may have been answered with, on a profile. */
const refusals = (profile: Profile): number[] => (profile === "literal" ? [200] : [409, 412]);
/** The words of that refusal, after "the service". */
const refusedAs = (status: number): string => (status === 200 ? "refused it \\(status 200, with an error array\\)" : `answered ${status}`);

describe.each(PROFILES)("an approve found made by someone else (profile %s)", (profile) => {
  const fx = useEmulatorRepo({ freshRepo: true, profile });
  const run = (args: string[], env: Record<string, string | undefined> = {}, when?: NonNullable<Parameters<typeof cli>[1]>["when"]) =>
    cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env }, ...(when ? { when } : {}) });
  const batchAs = async (user: string, action: "review" | "approve", batch = "FY26-H1"): Promise<void> => {
    const res = await api(fx.emu.url, await token(fx.emu.url, user), "PATCH", `${SSP}/${action}/SSP-HW/${batch}`);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  };
  const record = (): any => {
    const [file] = readdirSync(join(fx.repo, "ev"));
    return JSON.parse(readFileSync(join(fx.repo, "ev", file ?? ""), "utf8"));
  };
  /** Someone else's approve of the batch, sent once revsync's own approve is held by the latency fault
   *  (the fault counts its hit when the request arrives), which lets it go once theirs has landed: theirs
   *  lands first, however long it takes. */
  const approveWhileHeld = async (user: string): Promise<{ status: number }> => {
    const tok = await token(fx.emu.url, user);
    while (!(await fx.emu.admin<{ faults: { hits: number }[] }>("GET", "faults")).faults[0]?.hits) await new Promise((r) => setTimeout(r, 5));
    const theirs = await api(fx.emu.url, tok, "PATCH", `${SSP}/approve/SSP-HW/FY26-H1`);
    await fx.emu.admin("DELETE", "faults");
    return theirs;
  };
  /** Runs apply, and once it says it is sending the approve (held by the latency fault), `user` approves
   *  the same batch in that round trip; the apply's result, that approve having landed. */
  const applyWhileApproved = async (args: string[], env: Record<string, string>, user: string) => {
    let other: Promise<{ status: number }> | undefined;
    const applied = await run(args, env, {
      stderr: `${BATCH}: read again just now, unchanged since the plan; sending the approve`,
      act: () => (other = approveWhileHeld(user)),
    });
    expect((await other)?.status).toBeLessThan(300);
    return applied;
  };
  const approvesBy = async (): Promise<[number, string | undefined][]> =>
    (await fx.emu.admin<Entry[]>("GET", "requests")).filter((e) => e.method === "PATCH" && e.path.includes("/approve/")).map((e) => [e.status, e.user]);

  it("approved by bob in the round trip of revsync's approve as carol: already, approved by bob (never carol), revsync's send answered and not landed; exit 0", async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    await fx.emu.admin("POST", "faults", { kind: "latency", latency_ms: 600_000, method: "PATCH", path: "/approve/", times: 1 });
    await fx.emu.admin("DELETE", "requests");
    const applied = await applyWhileApproved(
      ["apply", "--auto-approve", "--verbose", "--format", "json", "--evidence", "ev", ...target],
      { REVSYNC_APPROVER_USERNAME: "carol", REVSYNC_APPROVER_PASSWORD: "carol-password" },
      "bob",
    );
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const sent = await approvesBy();
    expect(sent.map(([, u]) => u).sort()).toEqual(["bob", "carol"]);
    const refused = sent.find(([, u]) => u === "carol")?.[0];
    expect(refusals(profile)).toContain(refused);
    const entry = JSON.parse(applied.stdout).outcomes.find((o: any) => o.action === "approve");
    expect(entry).toMatchObject({ outcome: "already", answered: refused, four_eyes: { approved_by: "bob", confirmed: true } });
    expect(entry.four_eyes.sent_as).toBeUndefined();
    expect(entry.message).toMatch(/^already approved \(the service shows it approved by bob at \S+/);
    expect(entry.message).toMatch(
      new RegExp(`revsync's approve was sent and the service ${refusedAs(refused ?? 0)}: someone else's came first, and revsync's did not land`),
    );
    expect(entry.message).not.toContain("nothing was sent");
    const change = record().changes.find((c: any) => c.action === "approve");
    expect(change).toMatchObject({ outcome: "already", four_eyes: { approved_by: "bob", confirmed: true } });
    expect((await run(["evidence", "verify", "ev"])).code).toBe(0);
  });

  it("revsync's approve answered 401 (its token refused, not processed) while bob approved: already, never 'answered 401: someone else's came first'", async () => {
    await fx.emu.admin("POST", "faults", {
      faults: [
        { kind: "latency", latency_ms: 600_000, method: "PATCH", path: "/approve/", times: 1 },
        { kind: "status", status: 401, method: "PATCH", path: "/approve/", times: 1 },
      ],
    });
    const applied = await applyWhileApproved(
      ["apply", "--auto-approve", "--verbose", "--format", "json", ...target],
      { REVSYNC_APPROVER_USERNAME: "carol", REVSYNC_APPROVER_PASSWORD: "carol-password" },
      "bob",
    );
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const entry = JSON.parse(applied.stdout).outcomes.find((o: any) => o.action === "approve");
    expect(entry).toMatchObject({ outcome: "already", four_eyes: { approved_by: "bob", confirmed: true } });
    expect(entry.answered).toBeUndefined();
    expect(entry.message).toContain("revsync's approve was sent and answered 401, not processed: someone else's made it meanwhile");
    expect(entry.message).not.toContain("came first");
    expect(entry.message).not.toContain("nothing was sent");
  });

  it("four eyes: approved by alice, its reviewer, in the round trip of revsync's approve as bob: breached, exit 1, the text says revsync's send did not land; verify fails the record", async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    await fx.emu.admin("POST", "faults", { kind: "latency", latency_ms: 600_000, method: "PATCH", path: "/approve/", times: 1 });
    const applied = await applyWhileApproved(
      ["apply", "--auto-approve", "--verbose", "--evidence", "ev", ...target],
      { REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "bob-password" },
      "alice",
    );
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    const refused = (await approvesBy()).find(([, u]) => u === "bob")?.[0] ?? 0;
    expect(refusals(profile)).toContain(refused);
    expect(approveLine(applied.stdout)).toMatch(
      new RegExp(
        `^breached approve {2}ssp/Hardware SSP/batch/FY26-H1: already approved, but four eyes is broken: alice reviewed this batch and the service shows it approved by alice, first: revsync's approve, sent as bob, was sent and the service ${refusedAs(refused)}, and it did not land; `,
      ),
    );
    expect(applied.stdout).toMatch(/^Apply finished with failures: .*1 breached/m);
    expect(applied.stdout).not.toContain("nothing was sent");
    const change = record().changes.find((c: any) => c.action === "approve");
    expect(change).toMatchObject({ outcome: "breached", four_eyes: { reviewed_by: "alice", approved_by: "alice", confirmed: true, rule: "breached" } });
    const verify = await run(["evidence", "verify", "ev"]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`four eyes: ${BATCH} was approved in breach of four eyes`);
  });

  it("four eyes: approved by alice, its reviewer, before apply: breached (nothing sent), the reviewer taken from the plan (an approved batch no longer names it)", async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    const BOB = { REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "bob-password" };
    expect((await run(["plan", ...target, "--out", "plan.json"], BOB)).code).toBe(0);
    await batchAs("alice", "approve");
    await fx.emu.admin("DELETE", "requests");
    const applied = await run(["apply", "plan.json", "--auto-approve", "--evidence", "ev"], BOB);
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    expect(approveLine(applied.stdout)).toMatch(
      /^breached approve {2}ssp\/Hardware SSP\/batch\/FY26-H1: already approved, but four eyes is broken: alice reviewed this batch and the service shows it approved by alice, before revsync sent anything for it; /,
    );
    expect(await approvesBy()).toEqual([]);
    expect(record().changes.find((c: any) => c.action === "approve")).toMatchObject({
      outcome: "breached",
      four_eyes: { reviewed_by: "alice", approved_by: "alice", confirmed: true, rule: "breached" },
    });
  });

  it("four eyes: reviewed and approved by bob between plan and apply: nobody can name its reviewer, so four eyes cannot be shown: breached, exit 1, verify fails the record", async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    const CAROL = { REVSYNC_APPROVER_USERNAME: "carol", REVSYNC_APPROVER_PASSWORD: "carol-password" };
    // git asks for FY26-H2 (file uploaded in the service) approved: the plan reviews, then approves it.
    const file = join(fx.repo, "policies/ssp/hardware.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace(/(name: FY26-H2\n\s+status:) reviewed/, "$1 approved"));
    expect((await run(["plan", "--target", H2, "--out", "plan.json"], CAROL)).code).toBe(0);
    await batchAs("bob", "review", "FY26-H2");
    await batchAs("bob", "approve", "FY26-H2");
    await fx.emu.admin("DELETE", "requests");
    const applied = await run(["apply", "plan.json", "--auto-approve", "--evidence", "ev"], CAROL);
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    expect(applied.stdout.split("\n").find((l) => l.includes(`approve  ${H2}:`))).toMatch(
      /^breached approve {2}ssp\/Hardware SSP\/batch\/FY26-H2: already approved, but four eyes could not be shown: the service shows it approved by bob, and nobody can name who reviewed it .*so nobody can show it was not bob, before revsync sent anything for it; /,
    );
    expect(await approvesBy()).toEqual([]);
    const change = record().changes.find((c: any) => c.action === "approve" && c.address === H2);
    expect(change).toMatchObject({ outcome: "breached", four_eyes: { reviewed_by: null, approved_by: "bob", confirmed: true, rule: "breached" } });
    const verify = await run(["evidence", "verify", "ev"]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`four eyes: ${H2} was approved in breach of four eyes`);
  });

  it("without four eyes, approved by alice before apply: already, approved by alice as the service shows (never bob, the approver identity), nothing sent, exit 0", async () => {
    const BOB = { REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "bob-password" };
    expect((await run(["plan", ...target, "--out", "plan.json"], BOB)).code).toBe(0);
    await batchAs("alice", "approve");
    await fx.emu.admin("DELETE", "requests");
    const applied = await run(["apply", "plan.json", "--auto-approve", "--format", "json", "--evidence", "ev"], BOB);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(await approvesBy()).toEqual([]);
    const entry = JSON.parse(applied.stdout).outcomes.find((o: any) => o.action === "approve");
    expect(entry).toMatchObject({ outcome: "already", four_eyes: { approved_by: "alice", confirmed: true } });
    expect(entry.answered).toBeUndefined();
    expect(entry.message).toMatch(/^already approved \(the service shows it approved by alice at \S+, with the values the plan showed; nothing was sent\)/);
    expect(record().changes.find((c: any) => c.action === "approve").four_eyes).toMatchObject({ approved_by: "alice", confirmed: true });
  });
});
