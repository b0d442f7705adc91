import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { canonicalize } from "json-canonicalize";
import { describe, expect, it } from "vitest";
import { evidenceRecords } from "../src/testing/evidence-records.js";
import { commitAll } from "../src/testing/git-commit.js";
import { api, cli, DEMO_ENV, token, updateBody, useEmulatorRepo } from "../src/testing/helpers.js";

// apply --evidence (issue 30) through the real CLI against the emulator: the emulator's request journal
// is the witness of what was sent, and every record is checked against schemas/evidence-record.schema.json
// with ajv (a standard JSON Schema validator). Hashes are recomputed with a JCS library other than the one
// revsync uses (json-canonicalize).

const fx = useEmulatorRepo();
const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env } });
const journal = () => fx.emu.admin<{ method: string; path: string; query: string; status: number }[]>("GET", "requests");

const records = evidenceRecords;
const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
const requestsOf = (r: any): any[] => [...r.other_requests, ...r.changes.flatMap((c: any) => c.requests)];
const asSent = (q: { method: string; path: string; status: number | null }) => `${q.method} ${q.path} ${q.status ?? "no answer"}`;

/** Another user changes the tenant configuration (as drift's "who changed it" would name them). */
async function changeAs(user: string, overrides: Record<string, unknown>): Promise<void> {
  const tok = await token(fx.emu.url, user);
  const env = (await api(fx.emu.url, tok, "GET", TC)).body[0];
  const res = await api(fx.emu.url, tok, "PATCH", `${TC}/${env.compliance_id}`, updateBody(env, overrides, user));
  expect(res.status).toBe(200);
}

describe("apply --evidence", () => {
  it("writes one record per run naming the commit, the plan checksum and every request; runs chain; verify names each edited, removed and reordered record; --live names a later change and who made it", async () => {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: fx.repo, encoding: "utf8" }).trim();
    const head = commitAll(fx.repo);
    const ev = join(fx.repo, "evidence");

    expect((await run(["plan", "--out", "demo.plan.json"])).code).toBe(0);
    const plan = JSON.parse(readFileSync(join(fx.repo, "demo.plan.json"), "utf8"));
    await fx.emu.admin("DELETE", "requests");
    const first = await run(["apply", "demo.plan.json", "--auto-approve", "--evidence", "evidence"]);
    expect(first.code).toBe(0);
    let all = records(ev);
    expect(all).toHaveLength(1);
    const one = all[0]?.record;
    expect(first.stderr).toContain(`Evidence: ${join(ev, all[0]?.file ?? "")} ${one.hash}`);
    // An auditor's own check, with an independent RFC 8785 implementation: the hash is the record's, and
    // the plan's checksum is the saved plan's.
    const { hash: _own, ...content } = one;
    expect(`sha256:${createHash("sha256").update(canonicalize(content), "utf8").digest("hex")}`).toBe(one.hash);
    const { checksum, ...planContent } = plan;
    expect(sha256(canonicalize({ revsync_plan_checksum: 2, plan: planContent }))).toBe(checksum);
    expect(one).toMatchObject({
      sequence: 1,
      prev: null,
      chain_note: "there was no earlier record of environment demo in the folder",
      environment: "demo",
      base_url: fx.emu.url,
      realm: "demo",
      service_user: "alice",
      git: { commit: head, clean: false }, // demo.plan.json is not committed
      plan: { checksum: plan.checksum, file: "demo.plan.json", made_by: "alice" },
      approval: "auto-approve",
      ci: null,
      exit_code: 0,
      summary: { done: 7, failed: 0, unknown: 0 },
    });
    // The sign-in is not a change's request: it is among the others, wherever it was needed.
    expect(one.other_requests.map(asSent)).toContain("POST /auth/realms/demo/protocol/openid-connect/token 200");
    expect(one.changes.find((c: any) => c.action === "update")).toMatchObject({
      address: "tenant-configuration/Default Tenant Configuration",
      outcome: "done",
      // The guard's read, the PATCH (with the body it sent), and the read right after it that would see
      // someone else's write undo it.
      requests: [
        { method: "GET", path: TC, status: 200, resend: false },
        {
          method: "PATCH",
          path: expect.stringMatching(/^\/apis\/policy-sets\/v1\/policy\/tenant-configurations\/TC-/),
          status: 200,
          resend: false,
          body: expect.objectContaining({ user_name: "alice", compliance_spec: [expect.objectContaining({ carves_allocation: true })] }),
        },
        { method: "GET", path: TC, status: 200, resend: false },
      ],
    });
    // Each change holds its own requests: its one write, and before it the guard's read (a create's may
    // be the SSP list another create's guard read at the same moment, held by that create).
    for (const c of one.changes.filter((x: any) => x.outcome === "done")) {
      expect([c.address, c.requests.filter((q: any) => q.method !== "GET").length]).toEqual([c.address, 1]);
      if (c.action !== "create") expect([c.address, c.requests[0]?.method]).toEqual([c.address, "GET"]);
    }
    // Every request the emulator saw, and no other, is in the record (the sign-in too).
    const sent = (await journal()).map((j) => asSent({ method: j.method, path: j.path + j.query, status: j.status }));
    expect(requestsOf(one).map(asSent).sort()).toEqual(sent.sort());
    expect(sent.some((s) => s.startsWith("POST /auth/realms/demo/protocol/openid-connect/token"))).toBe(true);

    // A review or approve names the values it moved forward, as the plan summed them up.
    for (const action of ["review", "approve"]) {
      const planned = plan.changes.find((c: any) => c.action === action);
      const recorded = one.changes.find((c: any) => c.address === planned.address && c.action === action);
      expect(recorded.values).toEqual({ checksum: planned.payload.values_checksum ?? null, file: planned.values.file, rows: planned.values.rows });
      expect(recorded.values.rows).toBeGreaterThan(0);
    }
    expect(one.changes.filter((c: any) => c.values).every((c: any) => ["review", "approve"].includes(c.action))).toBe(true);
    // A second run, in GitHub Actions for a pull request, chains to the first.
    await changeAs("carol", { carves_allocation: false });
    const gh = {
      GITHUB_ACTIONS: "true",
      GITHUB_SERVER_URL: "https://github.com",
      GITHUB_REPOSITORY: "acme/policies",
      GITHUB_RUN_ID: "42",
      GITHUB_ACTOR: "dana",
      GITHUB_REF: "refs/pull/17/merge",
      GITHUB_SHA: head,
    };
    rmSync(join(fx.repo, "demo.plan.json"));
    const second = await run(["apply", "--auto-approve", "--evidence", "evidence"], gh);
    expect(second.code).toBe(0);
    all = records(ev);
    expect(all).toHaveLength(2);
    expect(all[1]?.record).toMatchObject({
      sequence: 2,
      prev: one.hash,
      git: { commit: head, clean: true },
      plan: { file: null },
      ci: { provider: "github", run_url: "https://github.com/acme/policies/actions/runs/42", actor: "dana", pull_request: 17, commit: head },
      summary: { done: 1 },
    });
    expect(all[1]?.record).not.toHaveProperty("chain_note");
    // A run with nothing to apply got as far as a plan: it leaves a record too. An apply on merge runs
    // for a push, which names no merge request: the recipe's REVSYNC_PULL_REQUEST names it.
    const gl = { GITLAB_CI: "true", CI_PIPELINE_SOURCE: "push", CI_COMMIT_SHA: head, CI_COMMIT_REF_NAME: "main", REVSYNC_PULL_REQUEST: "23" };
    expect((await run(["apply", "--auto-approve", "--evidence", "evidence"], gl)).code).toBe(0);
    all = records(ev);
    expect(all[2]?.record.ci).toMatchObject({ provider: "gitlab", pull_request: 23, event: "push", ref: "main" });
    const shown = await run(["evidence", "show", join("evidence", all[2]?.file ?? "")]);
    expect(shown.stdout).toContain("GitLab CI run, merge request !23");
    // Earlier evidence that could not be fetched: the record that starts the new chain says why, and so
    // do show and verify.
    const lost = await run(["apply", "--auto-approve", "--evidence", "evidence-lost"], {
      REVSYNC_EVIDENCE_UNAVAILABLE: "no artifact evidence-demo could be fetched",
    });
    expect(lost.code).toBe(0);
    expect(records(join(fx.repo, "evidence-lost"))[0]?.record.chain_note).toBe(
      "the earlier evidence of environment demo could not be fetched: no artifact evidence-demo could be fetched",
    );
    const lostVerify = await run(["evidence", "verify", "evidence-lost"]);
    expect(lostVerify.stdout).toContain(
      "this record starts a new chain because the earlier evidence of environment demo could not be fetched: no artifact evidence-demo could be fetched",
    );
    expect(all.map((r) => [r.record.sequence, r.record.approval, r.record.changes.length])).toEqual([
      [1, "auto-approve", 7],
      [2, "auto-approve", 1],
      [3, "not asked", 0],
    ]);
    const ok = await run(["evidence", "verify", "evidence"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`3 records: every hash and every link holds.\nLatest of demo: ${all[2]?.record.hash}`);

    // --live: while the service holds what every record applied, verify is intact (exit 0); then carol
    // changes what the second run applied, and verify names the field, the value and carol.
    expect((await run(["evidence", "verify", "evidence", "--live"])).code).toBe(0);
    await changeAs("carol", { manual_journal_contra_account: "MJ-CONTRA-999" });
    const live = await run(["evidence", "verify", "evidence", "--live"]);
    // Every hash and link holds, and what a record applied no longer does: verify is not intact (exit 1).
    expect(live.code).toBe(1);
    expect(live.stdout).toContain("3 records: every hash and every link holds.");
    expect(live.stdout).toContain("live: 1 change applied by these records no longer holds in the service (named above).");
    const liveJson = await run(["evidence", "verify", "evidence", "--live", "--format", "json"]);
    expect(liveJson.code).toBe(1);
    expect(JSON.parse(liveJson.stdout).ok).toBe(false);
    expect(live.stdout).toMatch(
      /live: CHANGED update tenant-configuration\/Default Tenant Configuration: changed since \(last changed by carol at \S+Z\): manual_journal_contra_account "MJ-CONTRA-100" -> "MJ-CONTRA-999"/,
    );
    expect(live.stdout).toContain("live: holds  create ssp/Training Courses SSP");
    expect(live.stdout).toContain("live: holds  approve ssp/Hardware SSP/batch/FY26-H1");

    const names = all.map((r) => r.file);
    const copy = (): string => {
      const dir = mkdtempSync(join(tmpdir(), "revsync-evidence-"));
      cpSync(ev, dir, { recursive: true });
      return dir;
    };
    // An edit: one outcome changed by hand.
    const edited = copy();
    const text = readFileSync(join(edited, names[1] as string), "utf8");
    writeFileSync(join(edited, names[1] as string), text.replace('"outcome": "done"', '"outcome": "skipped"'));
    const e = await run(["evidence", "verify", edited, "--format", "json"]);
    expect(e.code).toBe(1);
    expect(JSON.parse(e.stdout).records.map((v: any) => [v.file, v.findings])).toEqual([
      [names[0], ["intact"]],
      [names[1], ["edited"]],
      [names[2], ["intact"]],
    ]);
    // show checks the hash too: the edited record is flagged in every format, and show exits 1.
    const editedFile = join(edited, names[1] as string);
    const showText = await run(["evidence", "show", editedFile]);
    expect(showText.code).toBe(1);
    expect(showText.stdout).toContain("EDITED: this record was changed after it was written");
    expect(showText.stderr).toContain("1 record was edited after it was written");
    const showMd = await run(["evidence", "show", editedFile, "--format", "markdown"]);
    expect(showMd.stdout).toContain("> **EDITED**: this record was changed after it was written");
    const showJson = await run(["evidence", "show", edited, "--format", "json"]);
    expect(showJson.code).toBe(1);
    expect(JSON.parse(showJson.stdout).records.map((r: any) => r.edited === null)).toEqual(names.map((n) => n !== names[1]));
    // A removal from the middle.
    const removed = copy();
    rmSync(join(removed, names[1] as string));
    const r = await run(["evidence", "verify", removed]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`REMOVED   ${names[2]} (demo #3)\n          the record before it was removed, or rewritten: its prev `);
    expect(r.stdout).toContain("(record 2 of environment demo is missing)");
    // A rename: the last record's file under the name of a slot before it. Links and sequence numbers
    // order the chain, whatever the names: the rename is named, and nothing else.
    const reordered = copy();
    const early = (names[0] as string).replace(/-000001\.json$/, "-000000.json");
    renameSync(join(reordered, names[2] as string), join(reordered, early));
    const o = await run(["evidence", "verify", reordered, "--format", "json"]);
    expect(o.code).toBe(1);
    expect(JSON.parse(o.stdout).records.map((v: any) => [v.file, v.findings])).toEqual([
      [names[0], ["intact"]],
      [names[1], ["intact"]],
      [early, ["renamed"]],
    ]);
    // An empty folder is an error, never a chain that holds.
    const empty = mkdtempSync(join(tmpdir(), "revsync-evidence-"));
    const none = await run(["evidence", "verify", empty]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`no evidence records in ${empty}`);
    for (const d of [edited, removed, reordered, empty]) rmSync(d, { recursive: true, force: true });

    const md = await run(["evidence", "show", join("evidence", names[1] as string), "--format", "markdown"]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain(
      // The run's URL is the record's text: shown, not made a link (a record is anyone's to edit).
      "- **By whom**: confirmed by --auto-approve; GitHub Actions run https&#58;&#47;/github.com/acme/policies/actions/runs/42 started by dana, pull request #17",
    );
    expect(md.stdout).toMatch(
      /\| `update` \| `tenant-configuration\/Default Tenant Configuration` \| carves&#95;allocation: false → true \| GET \S+ → 200 as alice<br>PATCH \S+ → 200 as alice<br>GET \S+ → 200 as alice \| \*\*done\*\*: updated \|/,
    );

    // A policy file git ignores is not in the commit, though the tree is clean to `git status`: the
    // record says not clean, and names it.
    const tenantFile = (all[1]?.record.changes[0].source as string).replace(/:\d+$/, "");
    git("rm", "-q", "--cached", tenantFile);
    writeFileSync(join(fx.repo, ".gitignore"), `${tenantFile}\nevidence*/\n*.plan.json\n`);
    const ignored = commitAll(fx.repo, "ignore the tenant file");
    expect(git("status", "--porcelain")).toBe("");
    await changeAs("carol", { carves_allocation: false });
    expect((await run(["apply", "--auto-approve", "--evidence", "evidence-ignored"])).code).toBe(0);
    expect(records(join(fx.repo, "evidence-ignored"))[0]?.record.git).toEqual({
      commit: ignored,
      clean: false,
      note: `policy files the plan used are not in the commit: ${tenantFile} (ignored by git)`,
    });
  });

  it("under faults each request's outcome is told as it was: a lost answer confirmed by reading back, a 429 sent again (a run interrupted at once: evidence.process.test.ts)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-evidence-"));
    try {
      await fx.emu.admin("POST", "faults", {
        faults: [
          { kind: "drop", after_commit: true, method: "POST", path: "/policy/ssp", times: 1 },
          { kind: "rate_limit", retry_after: 0, method: "PATCH", path: "/tenant-configurations/", times: 1 },
        ],
      });
      const faulted = await run(["apply", "--auto-approve", "--evidence", dir]);
      expect(faulted.code).toBe(0);
      const [rec] = records(dir).map((r) => r.record);
      const create = rec.changes.find((c: any) => c.action === "create");
      expect(create.outcome).toBe("confirmed");
      expect(create.why).toMatch(/confirmed by reading it back/);
      const posts = create.requests.filter((q: any) => q.method === "POST");
      expect(posts).toEqual([expect.objectContaining({ status: null, resend: false, error: expect.any(String) })]);
      expect(create.requests.at(-1)).toMatchObject({ method: "GET", path: expect.stringContaining("policy_name=Training+Courses+SSP"), status: 200 });
      // Each write's body as it was sent.
      expect(posts[0].body).toMatchObject({ compliance_name: "Training Courses SSP" });
      const update = rec.changes.find((c: any) => c.action === "update");
      expect(update.outcome).toBe("done");
      // The record counts what the terminal counts, by the same names.
      const s = rec.summary;
      const named = (["done", "already", "confirmed", "blocked", "failed", "unknown", "skipped", "overwritten"] as const)
        .filter((o) => s[o] || ["done", "failed", "skipped"].includes(o))
        .map((o) => `${s[o]} ${o}`);
      expect(faulted.stdout + faulted.stderr).toContain(`Apply complete: ${named.join(", ")}.`);
      expect(s.skipped).toBe(0);
      expect(update.requests.filter((q: any) => q.method === "PATCH").map((q: any) => [q.status, q.resend])).toEqual([
        [429, false],
        [200, true],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("evidence: of revsync.yaml, per environment over the top level; a bad value is a validate error with its line", async () => {
    const yaml = readFileSync(join(fx.repo, "revsync.yaml"), "utf8");
    try {
      writeFileSync(
        join(fx.repo, "revsync.yaml"),
        yaml.replace("environments:\n  demo:\n", "evidence: all\nenvironments:\n  demo:\n    evidence: audit/demo\n"),
      );
      const r = await run(["apply", "--auto-approve", "--target", "tenant-configuration/Default Tenant Configuration"]);
      expect(r.code).toBe(0);
      expect(records(join(fx.repo, "audit", "demo")).map((x) => x.record.plan.targets)).toEqual([["tenant-configuration/Default Tenant Configuration"]]);
      writeFileSync(join(fx.repo, "revsync.yaml"), yaml.replace("environments:", "evidence: 5\nenvironments:"));
      const bad = await run(["validate"]);
      expect(bad.code).toBe(1);
      expect(bad.stdout + bad.stderr).toContain("revsync.yaml:3:11: error: evidence: expected a string, got the number 5");
    } finally {
      writeFileSync(join(fx.repo, "revsync.yaml"), yaml);
      rmSync(join(fx.repo, "audit"), { recursive: true, force: true });
    }
  });

  it("an evidence folder revsync cannot write stops apply before anything is sent", async () => {
    writeFileSync(join(fx.repo, "not-a-folder"), "");
    await fx.emu.admin("DELETE", "requests");
    const r = await run(["apply", "--auto-approve", "--evidence", "not-a-folder/x"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot write evidence records into .*not-a-folder\/x \(\w+\), so nothing was sent/);
    expect(await journal()).toEqual([]);
  });
  it("verify accounts for every file: a forged record with a recomputed hash, no environment or a __proto__ key, a copy, a stray file are named (exit 1); the head is the chain's; show never prints a forged record as fine", async () => {
    const ev = join(fx.repo, "evidence-forged");
    for (let i = 0; i < 3; i++) expect((await run(["apply", "--auto-approve", "--evidence", "evidence-forged"])).code).toBe(0);
    const [a, b, c] = records(ev) as [{ file: string; record: any }, { file: string; record: any }, { file: string; record: any }];
    const fresh = (): string => {
      const dir = mkdtempSync(join(tmpdir(), "revsync-evidence-"));
      cpSync(ev, dir, { recursive: true });
      return dir;
    };
    /** Writes a forged copy of a record, its hash recomputed (by any JCS library), named as an earlier
     *  revsync named records (when it finished, its environment, its hash), which verify still takes. */
    const forge = (dir: string, from: any, after: { record: any }, edit: (r: any) => void): string => {
      const r = structuredClone(from);
      edit(r);
      r.finished_at = new Date(Date.parse(after.record.finished_at) + 1).toISOString();
      const { hash: _old, ...content } = r;
      r.hash = sha256(canonicalize(content));
      const slug = typeof r.environment === "string" ? r.environment.replace(/[^A-Za-z0-9_.-]+/g, "_") : "demo";
      const file = `${r.finished_at.replace(/[-:]/g, "")}-${slug}-${r.hash.slice(7, 19)}.json`;
      writeFileSync(join(dir, file), `${JSON.stringify(r, null, 2)}\n`);
      return file;
    };
    const dirs: string[] = [];
    try {
      // A copy of record 2 in no environment, "approved at the prompt by mallory", placed mid-chain.
      const unplaced = fresh();
      dirs.push(unplaced);
      const mallory = forge(unplaced, b.record, b, (r) => Object.assign(r, { environment: null, service_user: "mallory", approval: "prompt" }));
      const v = await run(["evidence", "verify", unplaced]);
      expect(v.code).toBe(1);
      expect(v.stdout).toContain(
        `UNPLACED  ${mallory}\n          not a record revsync writes, so it belongs to no environment's chain: environment must be string`,
      );
      expect(v.stdout).toContain(`Latest of demo: ${c.record.hash} (${c.file})`);
      for (const target of [unplaced, join(unplaced, mallory)]) {
        const shown = await run(["evidence", "show", target]);
        expect(shown.code).toBe(1);
        expect(shown.stderr).toContain(`${mallory} is not a record revsync writes, so it belongs to no environment's chain`);
        expect(shown.stdout).not.toContain("mallory");
      }

      // The same forgery in environment demo: it follows record 1 as record 2 does, a fork; show prints it
      // only under verify's words, and exits 1.
      const forked = fresh();
      dirs.push(forked);
      const twin = forge(forked, b.record, b, (r) => Object.assign(r, { service_user: "mallory", approval: "prompt" }));
      const f = await run(["evidence", "verify", forked, "--format", "json"]);
      expect(f.code).toBe(1);
      // In chain order: the forgery beside record 2, both following record 1; record 3 follows record 2.
      expect(JSON.parse(f.stdout).records.map((x: any) => [x.file, x.findings])).toEqual([
        [a.file, ["intact"]],
        [twin, ["forked"]],
        [b.file, ["forked"]],
        [c.file, ["intact"]],
      ]);
      expect(JSON.parse(f.stdout).heads.demo.hash).toBe(c.record.hash);
      const shown = await run(["evidence", "show", forked]);
      expect(shown.code).toBe(1);
      const block = shown.stdout.split("\n\n").find((x) => x.includes("signed in as mallory")) ?? "";
      expect(block.split("\n")[1]).toMatch(/^ {2}FORKED: evidence verify does not hold this record in its chain \(fork: two records follow #1/);
      const one = await run(["evidence", "show", join(forked, twin), "--format", "markdown"]);
      expect(one.code).toBe(1);
      expect(one.stdout).toMatch(/^### Apply 2 of `demo` — \S+\n\n> \*\*FORKED\*\*: evidence verify does not hold this record/);

      // The same forgery in a look-alike environment, "demo " (a trailing space), starting a chain of its
      // own beside the real one: every hash and link of each chain holds, yet verify names both chains,
      // the names alike and the tenant one (exit 1); show never prints the forgery as fine.
      const alike = fresh();
      dirs.push(alike);
      const poser = forge(alike, b.record, b, (r) =>
        Object.assign(r, {
          environment: "demo ",
          service_user: "mallory",
          approval: "prompt",
          prev: null,
          sequence: 1,
          chain_note: "there was no earlier record of environment demo in the folder",
        }),
      );
      const l = await run(["evidence", "verify", alike, "--format", "json"]);
      expect(l.code).toBe(1);
      const verdicts = JSON.parse(l.stdout).records;
      expect(verdicts.map((x: any) => [x.file, x.findings])).toEqual([
        [poser, ["look-alike", "same-tenant"]],
        [a.file, ["look-alike", "same-tenant"]],
        [b.file, ["look-alike", "same-tenant"]],
        [c.file, ["look-alike", "same-tenant"]],
      ]);
      expect(verdicts[0].problems).toEqual([
        `look-alike: environment "demo " differs from "demo" (${a.file}) only in case, spaces, how a letter is written or letters that look alike; a record of one may pose as the other`,
        `same tenant: the chain of environment "demo " starts anew (prev none, ${poser}) for tenant ${a.record.base_url}, realm demo, which the chain of environment "demo" (${a.file}) already records`,
      ]);
      const lText = await run(["evidence", "verify", alike]);
      expect(lText.stdout).toContain(`LOOK-ALIKE+SAME-TENANT ${poser}`);
      expect(lText.stdout).toContain("4 records of 4 failed the check.");
      const lShown = await run(["evidence", "show", join(alike, poser)]);
      expect(lShown.code).toBe(1);
      expect(lShown.stdout).toMatch(/LOOK-ALIKE\+SAME-TENANT: evidence verify does not hold this record in its chain/);

      // Content under a `__proto__` key of record 1, its hash left as it was: edited (the hash covers it).
      const proto = fresh();
      dirs.push(proto);
      const r1 = structuredClone(a.record);
      r1.changes[0].diff[0].__marker__ = 1;
      writeFileSync(join(proto, a.file), `${JSON.stringify(r1, null, 2).replace('"__marker__": 1', '"__proto__": { "approved_by": "mallory" }')}\n`);
      const withProto = JSON.parse(readFileSync(join(proto, a.file), "utf8"));
      const { hash: _h, ...protoContent } = withProto;
      expect(sha256(canonicalize(protoContent))).not.toBe(a.record.hash);
      const p = await run(["evidence", "verify", proto]);
      expect(p.code).toBe(1);
      expect(p.stdout).toContain(`EDITED    ${a.file}`);
      // The chain no longer holds from its first record: no hash to anchor, in text and JSON alike.
      expect(p.stdout).toContain("The chain of demo does not hold: do not anchor its latest hash; no record of it holds.");
      expect(p.stdout).not.toContain("Latest of demo");
      const pj = JSON.parse((await run(["evidence", "verify", proto, "--format", "json"])).stdout);
      expect(pj.heads.demo).toMatchObject({ hash: c.record.hash, holds: false, last_holding: null });
      expect((await run(["evidence", "show", join(proto, a.file)])).code).toBe(1);

      // A copy of record 1 after the last, and a stray file: named; the head is still record 3.
      const copied = fresh();
      dirs.push(copied);
      const later = a.file.replace(/-000001\.json$/, "-000099.json");
      writeFileSync(join(copied, later), readFileSync(join(ev, a.file)));
      writeFileSync(join(copied, "notes.txt"), "not a record\n");
      const d = await run(["evidence", "verify", copied]);
      expect(d.code).toBe(1);
      expect(d.stdout).toContain(`RENAMED+DUPLICATE ${later}`);
      expect(d.stdout).toContain(`duplicate: a copy of ${a.file} (the same hash)`);
      expect(d.stdout).toContain("UNREADABLE notes.txt\n          it is not an evidence record (revsync writes records as .json files)");
      expect(d.stdout).toContain(`Latest of demo: ${c.record.hash} (${c.file})`);
      expect(d.stdout).not.toContain(`Latest of demo: ${a.record.hash}`);
    } finally {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      rmSync(ev, { recursive: true, force: true });
    }
  });
});
