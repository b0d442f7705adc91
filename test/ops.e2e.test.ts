import { readFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { displayWidth } from "../src/display-width.js";
import { api, cli, DEMO_ENV, removeDir, tempRepo, token, useEmulatorRepo } from "../src/testing/helpers.js";

const fx = useEmulatorRepo();

const run = (args: string[], env: Record<string, string | undefined> = {}) => cli(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...env } });
const pendingIds = async (): Promise<string[]> => {
  const state: any = await fx.emu.admin("GET", "state");
  return state.tenants[0].approvals.records.filter((r: any) => r.status === "Pending Approval").map((r: any) => r.approval_id);
};

describe("approvals", () => {
  it("list: a table with own-upload flags, the switch and the roles; json too", async () => {
    const r = await run(["approvals", "list"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Approval of manual uploads is enabled for this tenant. Roles that may approve: Revenue Approver.");
    expect(r.stdout).toMatch(/APPROVAL ID\s+FILE\s+TYPE\s+ROWS\s+UPLOADED BY\s+UPLOADED AT\s+OWN UPLOAD/);
    expect(r.stdout).toMatch(/APR-0001\s+orders-2026-10-27\.csv\s+ORDER\s+1480\s+alice\s+2026-10-26T18:00:00Z\s+yes/);
    expect(r.stdout).toMatch(/APR-0003\s+orders-2026-10-28\.csv\s+ORDER\s+1512\s+carol\s+\S+\s+no/);
    const j = JSON.parse((await run(["approvals", "list", "--format", "json"])).stdout);
    expect(j).toMatchObject({ format_version: "1", total_records: 5 });
    // One --format vocabulary: text everywhere, table kept as another name for it.
    for (const format of ["text", "table"]) expect((await run(["approvals", "list", "--format", format])).stdout).toBe(r.stdout);
    const bad = await run(["approvals", "list", "--format", "yaml"]);
    expect(bad.stderr).toContain("Allowed choices are text, json.");
    expect(bad.code).toBe(1);
  });

  it("approving a mix of own and others' uploads: own ones left out with a warning, the rest approved", async () => {
    const r = await run(["approvals", "approve", "APR-0001", "APR-0003", "APR-0004", "--comment", "Checked against the CRM", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/APR-0001 \(orders-2026-10-27\.csv\) left out: you uploaded it, and the uploader of a file cannot approve it/);
    expect(r.stdout).toContain("Approved: APR-0003, APR-0004. processed_count 2; the service said: 2 record(s) approved successfully");
    expect(await pendingIds()).toEqual(["APR-0001", "APR-0002", "APR-0005"]);
  });

  it("an approve whose answer was lost after its commit: read back from the pending list, 'no longer pending', never 'Approved': unsure, said so, one POST, exit 1", async () => {
    await fx.emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "POST", path: "/oingest-approval/v1/action", after_commit: true, times: 1 }] });
    const r = await run(["approvals", "approve", "APR-0003", "APR-0004", "--comment", "Checked", "--yes"]);
    expect(r.stdout).toContain(
      "Unsure: no longer pending, but whether they were approved, and by whom, the service does not say (it lists pending uploads only: someone else's approve or reject looks the same); check them in the service before acting again: APR-0003, APR-0004. processed_count 0; the answer was lost; read back: 2 of 2 no longer pending (APR-0003, APR-0004)",
    );
    expect(r.stdout).not.toMatch(/^Approved/m);
    expect(r.code).toBe(1);
    expect((await fx.emu.writes()).filter((w) => w.method === "POST")).toHaveLength(1);
    expect(await pendingIds()).toEqual(["APR-0001", "APR-0002", "APR-0005"]);
  });

  it.each([
    ["approve", 503],
    ["reject", 429],
  ] as const)(
    "approvals %s, processed by the service but answered %i: no longer pending, but by whom the service does not say: unsure, said so, exit 1, one POST",
    async (action, status) => {
      await fx.emu.admin("POST", "faults", { kind: "success_status", status, method: "POST", path: "/oingest-approval/v1/action", times: 1 });
      const r = await run(["approvals", action, "APR-0003", "APR-0004", "--comment", "Checked", "--yes"]);
      const done = action === "approve" ? "approved" : "rejected";
      expect(r.stdout + r.stderr).toContain(
        `Unsure: no longer pending, but whether they were ${done}, and by whom, the service does not say (it lists pending uploads only: someone else's approve or reject looks the same); check them in the service before acting again: APR-0003, APR-0004. processed_count 0; the service answered ${status}; read back: 2 of 2 no longer pending (APR-0003, APR-0004)`,
      );
      expect(r.stderr).not.toContain("nothing more was sent");
      expect(r.code).toBe(1);
      expect((await fx.emu.writes()).filter((w) => w.method === "POST")).toHaveLength(1);
      expect(await pendingIds()).toEqual(["APR-0001", "APR-0002", "APR-0005"]);
    },
  );

  it("approvals approve answered 429 and not processed, and someone else rejects them meanwhile: never 'approved' nor counted, exit 1, nothing sent again", async () => {
    // revsync's POST (its comment) is held, then turned away with a 429; alice rejects both while it is
    // held, so before revsync hears its 429 and reads the pending list again. Held until the test lets it
    // go, not a real Retry-After to act in: the order is certain, however loaded the machine.
    const mine = { method: "POST", path: "/oingest-approval/v1/action", body_contains: "Checked", times: 1 };
    await fx.emu.admin("POST", "faults", {
      faults: [
        { kind: "latency", latency_ms: 60_000, ...mine },
        { kind: "rate_limit", retry_after: 0, ...mine },
      ],
    });
    const sent = run(["approvals", "approve", "APR-0003", "APR-0004", "--comment", "Checked", "--yes", "--format", "json"]);
    while (!(await fx.emu.admin<{ faults: { hits: number }[] }>("GET", "faults")).faults[0]?.hits) await new Promise((r) => setTimeout(r, 5));
    const other = await api(fx.emu.url, await token(fx.emu.url, "alice"), "POST", "/apis/oingest-approval/v1/action", {
      action: "Rejected",
      comments: "not ours",
      approval_ids: ["APR-0003", "APR-0004"],
    });
    expect(other.status).toBe(200);
    await fx.emu.admin("DELETE", "faults");
    const r = await sent;
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ action: "approve", processed_count: 0, status: "no longer pending", recovered: true, settled: false });
    // revsync's one POST (turned away) and alice's: nothing sent again once they were gone.
    expect((await fx.emu.writes()).filter((w) => w.method === "POST")).toHaveLength(2);
    const state: any = await fx.emu.admin("GET", "state");
    for (const id of ["APR-0003", "APR-0004"]) expect(state.tenants[0].approvals.records.find((x: any) => x.approval_id === id).status).toBe("Rejected");
  });

  it("only own uploads selected: nothing sent, exit 1", async () => {
    await fx.emu.admin("DELETE", "requests");
    const r = await run(["approvals", "approve", "APR-0001", "--comment", "x"]);
    expect(r.code).toBe(1);
    expect(await fx.emu.writes()).toEqual([]);
  });

  it("reject by the uploader of their own file", async () => {
    const r = await run(["approvals", "reject", "APR-0002", "--comment", "Wrong month"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Rejected: APR-0002. processed_count 1");
    const state: any = await fx.emu.admin("GET", "state");
    expect(state.tenants[0].approvals.records.find((x: any) => x.approval_id === "APR-0002")).toMatchObject({
      status: "Rejected",
      approved_by: "alice",
      approval_comments: "Wrong month",
    });
  });

  it("a missing or blank comment is refused before any call", async () => {
    await fx.emu.admin("DELETE", "requests");
    for (const args of [
      ["approvals", "approve", "APR-0003"],
      ["approvals", "reject", "APR-0003", "--comment", "  "],
    ]) {
      const r = await run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/--comment is required/);
    }
    expect(await fx.emu.admin("GET", "requests")).toEqual([]);
  });

  it("--all with filters, --dry-run, and unknown ids", async () => {
    const dry = await run(["approvals", "approve", "--all", "--type", "ORDER", "--comment", "x", "--dry-run"], {
      REVSYNC_USERNAME: "bob",
      REVSYNC_PASSWORD: "bob-password",
    });
    expect(dry.stdout).toContain("Would approve 3 uploads:");
    expect(await pendingIds()).toHaveLength(5);
    const byCarol = await run(["approvals", "reject", "--all", "--uploaded-by", "carol", "--file", "events", "--comment", "dup", "--yes"]);
    expect(byCarol.stdout).toContain("Rejected: APR-0004.");
    const unknown = await run(["approvals", "approve", "APR-9999", "--comment", "x"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not pending approval: APR-9999/);
  });

  it("the choices the spec leaves open come from the environment's service: section (approvals: at the top too), REVSYNC_REJECT_ACTION over both", async () => {
    const dir = tempRepo(fx.emu.url);
    try {
      const cfg = join(dir, "revsync.yaml");
      const original = readFileSync(cfg, "utf8");
      const reject = (env: Record<string, string> = {}) =>
        cli(["approvals", "reject", "APR-0003", "--comment", "x"], { cwd: dir, env: { ...DEMO_ENV, ...env } });
      writeFileSync(cfg, original + "approvals:\n  reject_action: Declined\n");
      const top = await reject();
      expect(top.code).toBe(1);
      expect(top.stderr).toMatch(/400 bad request\): unknown action "Declined"/);
      // Where the literal was set, so the person knows what to fix.
      expect(top.stderr).toContain(
        'Hint: the action literal "Declined" was set by approvals.reject_action in revsync.yaml: check it is the text this service accepts for a reject',
      );
      writeFileSync(
        cfg,
        original.replace("    realm: demo\n", "    realm: demo\n    service:\n      reject_action: Refused\n      template_batch_name: path\n") +
          "approvals:\n  reject_action: Declined\n",
      );
      const bySection = await reject();
      expect(bySection.stderr).toMatch(/unknown action "Refused"/);
      expect(bySection.stderr).toContain("was set by service.reject_action of the environment in revsync.yaml");
      // The variable wins, with a revsync.yaml or without one.
      const byVar = await reject({ REVSYNC_REJECT_ACTION: "Rejected" });
      expect(byVar.stdout).toContain("Rejected: APR-0003.");
      expect(byVar.code).toBe(0);
      await fx.emu.admin("DELETE", "requests");
      const t = await cli(["ssp", "template", "--batch", "FY26-H1"], { cwd: dir, env: DEMO_ENV });
      expect(t.code).toBe(0);
      const paths = (await fx.emu.admin<{ path: string }[]>("GET", "requests")).map((x) => x.path);
      expect(paths).toContain("/apis/policy-sets/v1/policy/ssp/template/FY26-H1");
    } finally {
      removeDir(dir);
    }
  });

  it("batch status texts of another tenant (service.batch_status) read as revsync's three: the same plan as the usual texts give", async () => {
    const dir = tempRepo(fx.emu.url);
    try {
      const usual = await cli(["plan"], { cwd: dir, env: DEMO_ENV });
      const state: any = await fx.emu.admin("GET", "state");
      const words: Record<string, string> = { "file uploaded": "Uploaded", reviewed: "In Review", approved: "Approved" };
      for (const p of state.tenants[0].ssp) for (const b of p.batches) b.status = words[b.status] ?? b.status;
      await fx.emu.admin("POST", "reset", { state });
      const cfg = join(dir, "revsync.yaml");
      const unmapped = await cli(["plan"], { cwd: dir, env: DEMO_ENV });
      expect(unmapped.stdout).toContain('status: "In Review" -> "approved"');
      const service = "    service:\n      batch_status: { file_uploaded: Uploaded, reviewed: In Review, approved: Approved }\n";
      writeFileSync(cfg, readFileSync(cfg, "utf8").replace("    realm: demo\n", `    realm: demo\n${service}`));
      const mapped = await cli(["plan"], { cwd: dir, env: DEMO_ENV });
      expect(mapped.stdout).toBe(usual.stdout);
      const batches = JSON.parse((await cli(["ssp", "batches", "Hardware SSP", "--format", "json"], { cwd: dir, env: DEMO_ENV })).stdout);
      expect(batches.batches.map((b: any) => b.status)).toEqual(["approved", "reviewed", "file uploaded"]);
    } finally {
      removeDir(dir);
    }
  });
});

describe("errors", () => {
  it("table with every filter; dates inclusive at both edges", async () => {
    const r = await run(["errors", "--type", "order", "--from", "2026-10-03", "--to", "2026-10-15"]);
    expect(r.code).toBe(0);
    const ids = [...r.stdout.matchAll(/^(E-\d+)/gm)].map((m) => m[1]);
    // Oldest first, whatever order the service lists them in (E-00003 is of 10-15).
    expect(ids).toEqual(["E-00002", "E-00004", "E-00005", "E-00003"]);
    const one = await run([
      "errors",
      "--type",
      "order",
      "--kind",
      "remediable",
      "--code",
      "ERR-00015",
      "--request-id",
      "REQ-1001",
      "--financial-id",
      "OF-50002",
      "--legal-entity",
      "US01",
      "--format",
      "json",
    ]);
    const json = JSON.parse(one.stdout);
    expect(json).toMatchObject({ format_version: "1", total_records: 1 });
    expect(json.records.map((e: any) => e.error_id)).toEqual(["E-00002"]);
    const text = await run(["errors", "--type", "order", "--from", "2026-10-03", "--to", "2026-10-15", "--format", "text"]);
    expect(text.stdout).toBe(r.stdout);
  });

  it("csv output and --summary naming the missing policy set for ERR-00015", async () => {
    const csv = await run(["errors", "--type", "order", "--format", "csv"]);
    expect(csv.stdout.split("\n")[0]).toBe(
      "error_id,error_date,error_warning_code,error_warning_type,document_identifier,request_id,legal_entity,error_warning_field,error_warning_message,suggestions",
    );
    expect(csv.stdout.trim().split("\n")).toHaveLength(7);
    const s = await run(["errors", "--type", "order", "--summary"]);
    expect(s.stdout).toMatch(/ERR-00015\s+3 transactions: No valid revenue rule policy is available/);
    expect(s.stdout).toMatch(/missing policy set: revenue rules/);
    const sj = JSON.parse((await run(["errors", "--type", "order", "--summary", "--format", "json"])).stdout);
    expect(sj.format_version).toBe("1");
    expect(sj.summary[0]).toMatchObject({ code: "ERR-00015", count: 3 });
    // The CSV says what the text says, the missing policy set included.
    const sc = (await run(["errors", "--type", "order", "--summary", "--format", "csv"])).stdout.trim().split("\n");
    expect(sc[0]).toBe("code,count,message,suggestion,missing_policy_set");
    expect(sc[1]).toMatch(/^ERR-00015,3,.*,"revenue rules: no valid revenue rule policy is available\. .*"$/);
  });

  it("bad dates and types are refused before any call", async () => {
    await fx.emu.admin("DELETE", "requests");
    for (const [args, msg] of [
      [["errors", "--type", "order", "--from", "2026-02-30"], /--from must be a date YYYY-MM-DD/],
      [["errors", "--type", "order", "--from", "2026-10-05", "--to", "2026-10-01"], /--from 2026-10-05 is after --to 2026-10-01/],
      [["errors", "--type", "refund"], /--type must be order, invoice, event or mje/],
      [["errors"], /--type must be order, invoice, event or mje \(it is required\)/],
    ] as [string[], RegExp][]) {
      const r = await run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(msg);
    }
    expect(await fx.emu.admin("GET", "requests")).toEqual([]);
  });
});

describe("ssp template and download", () => {
  it("download matches what the emulator holds, byte for byte, to stdout or --output", async () => {
    const state: any = await fx.emu.admin("GET", "state");
    const held = state.tenants[0].files["FILE-SSP-SW-1"];
    const r = await run(["ssp", "download", "FILE-SSP-SW-1"]);
    expect(r.stdout).toBe(held);
    const dir = mkdtempSync(join(tmpdir(), "revsync-dl-"));
    try {
      const out = join(dir, "b.csv");
      expect((await run(["ssp", "download", "FILE-SSP-SW-1", "--output", out])).code).toBe(0);
      expect(readFileSync(out)).toEqual(Buffer.from(held, "utf8"));
    } finally {
      removeDir(dir);
    }
  });

  it("template, with and without --batch; a batch the service does not have yet gets the generic template; an unknown file is a plain 404", async () => {
    const t = await run(["ssp", "template", "--batch", "FY26-H1"]);
    expect(t.stdout.split("\n")[0]).toBe(
      "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date",
    );
    const generic = await run(["ssp", "template"]);
    const fresh = await run(["ssp", "template", "--batch", "FY27-H1"]);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toBe(generic.stdout);
    expect(fresh.stderr).toContain('Note: the service has no batch named "FY27-H1" yet, so this is the generic template');
    const missing = await run(["ssp", "download", "NOPE"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/404 not found\): no uploaded file with file_id NOPE/);
    expect(missing.stderr).toContain("Hint: ssp download takes the file id of an SSP batch: revsync ssp batches lists them");
  });

  it("batches: every batch with its status, file id, rows and dates; one policy by name, a near miss named", async () => {
    const all = await run(["ssp", "batches"]);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/POLICY\s+BATCH\s+STATUS\s+FILE ID\s+ROWS\s+FROM\s+TO\s+UPDATED/);
    expect(all.stdout).toMatch(/Hardware SSP\s+FY26-H1\s+reviewed\s+FILE-SSP-HW-2\s+12\s+2026-01-01\s+2026-06-30\s+2026-01-01T00:00:00Z by alice/);
    expect(all.stdout).toMatch(/Support Renewals SSP\s+FY26-CALC\s+reviewed\s+\(no file\)\s+6\s+/);
    expect(all.stdout).toContain("\n6 batches. revsync ssp download FILE_ID gets a batch's values.");
    const one = JSON.parse((await run(["ssp", "batches", "Software Subscriptions SSP", "--format", "json"])).stdout);
    expect(one.format_version).toBe("1");
    expect(one.batches.map((b: any) => [b.batch, b.status, b.file_id, b.rows])).toEqual([
      ["FY26-Q1", "file uploaded", "FILE-SSP-SW-1", 8],
      ["FY26-Q2", "approved", "FILE-SSP-SW-2", 8],
    ]);
    const near = await run(["ssp", "batches", "hardware ssp"]);
    expect(near.code).toBe(1);
    expect(near.stderr).toContain(
      `no SSP policy named "hardware ssp" in the service (names are exact and case-sensitive); did you mean revsync ssp batches 'Hardware SSP'?`,
    );
  });

  it("batches: names in CJK or with emoji keep the columns lined up on the screen", async () => {
    const state: any = await fx.emu.admin("GET", "state");
    const hw = state.tenants[0].ssp.find((p: any) => p.compliance_name === "Hardware SSP");
    hw.compliance_name = "硬件 SSP 🚀";
    await fx.emu.admin("POST", "reset", { state });
    const r = await run(["ssp", "batches"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n").filter((l) => /^(POLICY|硬件|Software)/.test(l));
    expect(lines.length).toBeGreaterThan(3);
    // Each BATCH starts at the terminal column of its heading: the CJK name takes two columns a character.
    const col = (l: string): number => displayWidth(l.slice(0, l.search(/FY\d\d-|BATCH/)));
    expect(new Set(lines.map(col)).size).toBe(1);
  });
});

describe("plain errors for 401 and 403", () => {
  it("401: wrong password, said plainly, exit 1, with the hint", async () => {
    const r = await run(["approvals", "list"], { REVSYNC_PASSWORD: "wrong-password-1" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/sign-in refused: invalid user credentials/);
    expect(r.stderr).toMatch(/Hint: check REVSYNC_CLIENT_ID/);
  });

  it("403: a user without an approval role", async () => {
    const r = await run(["approvals", "approve", "APR-0001", "--comment", "x"], { REVSYNC_USERNAME: "carol", REVSYNC_PASSWORD: "carol-password" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/403 permission denied\): carol holds none of the approval roles/);
  });

  it("a realm the service does not have: the error says realm, names it and where it was looked for", async () => {
    const r = await run(["approvals", "list"], { REVSYNC_REALM: "acme" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`sign-in refused: no realm "acme" at ${fx.emu.url}`);
    expect(r.stderr).toContain("Hint: check the environment's realm in revsync.yaml (or REVSYNC_REALM), and its auth_url (or REVSYNC_AUTH_URL)");
  });

  it("no credentials at all: says which variables to set", async () => {
    const r = await run(["approvals", "list"], {
      REVSYNC_CLIENT_ID: undefined,
      REVSYNC_CLIENT_SECRET: undefined,
      REVSYNC_USERNAME: undefined,
      REVSYNC_PASSWORD: undefined,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no credentials for environment "demo": set REVSYNC_CLIENT_ID, REVSYNC_CLIENT_SECRET, REVSYNC_USERNAME, REVSYNC_PASSWORD/);
    expect(r.stderr).toContain('environment "demo" reads its own REVSYNC_DEMO_CLIENT_ID');
    expect(r.stderr).toContain("Hint: for the local emulator's demo tenant: REVSYNC_CLIENT_ID=revsync");
    // The emulator's demo sign-in is worth suggesting for a local service only, never for a tenant's.
    const away = await cli(["approvals", "list"], { cwd: tmpdir(), env: { REVSYNC_BASE_URL: "https://acme.example.com", REVSYNC_REALM: "acme" } });
    expect(away.code).toBe(1);
    expect(away.stderr).toContain("Hint: the tenant's onboarding gives them");
    // Nor for another realm served on this machine (a tenant of the emulator, a tunnel to a real one).
    const other = await cli(["approvals", "list"], { cwd: tmpdir(), env: { REVSYNC_BASE_URL: "http://127.0.0.1:4010", REVSYNC_REALM: "acme-sandbox" } });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("Hint: the tenant's onboarding gives them");
    expect(other.stderr).not.toContain("demo-secret");
    expect(away.stderr).not.toMatch(/demo-secret|alice/);
  });
});
