import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiCore } from "../src/api/core.js";
import type { Clock } from "../src/api/clock.js";
import { approvals, errorTransactions } from "../src/api/resources.js";
import { ssp } from "../src/kinds/ssp/service.js";
import { tenantConfigurations } from "../src/kinds/tenant-configuration/kind.js";
import { writes } from "../src/testing/helpers.js";
import { ApiError, UserError } from "../src/errors.js";
import type { Dispatcher } from "../src/api/http.js";
import {
  cli,
  demoClient,
  DEMO_ENV,
  landedWrite,
  startEmu,
  tempRepo,
  removeDir,
  updateBody,
  updateWrite,
  type Emu,
  sspCreateBody,
} from "../src/testing/helpers.js";

/** Real time for requests, fake time for waits: sleeps are recorded and return at once. */
function fakeClock(): Clock & { sleeps: number[]; offset: number } {
  const c = {
    sleeps: [] as number[],
    offset: 0,
    now: () => Date.now() + c.offset,
    sleep: async (ms: number) => {
      c.sleeps.push(ms);
      c.offset += ms;
    },
  };
  return c;
}

let emu: Emu;
let core: ApiCore;
let clock: ReturnType<typeof fakeClock>;
let logs: string[];
const secrets: string[] = [];

function client(extra: Partial<ConstructorParameters<typeof ApiCore>[0]> = {}): ApiCore {
  return demoClient(emu.url, { clock, random: () => 0.5, log: (l) => logs.push(l), onSecret: (s) => secrets.push(s), ...extra });
}

/** A client of a mocked service on http://127.0.0.1:9 (undici's MockAgent as its dispatcher). */
function mockedClient(agent: Dispatcher): ApiCore {
  return new ApiCore({
    baseUrl: "http://127.0.0.1:9",
    authUrl: "http://127.0.0.1:9",
    realm: "demo",
    credentials: { kind: "password", clientId: "c", clientSecret: "s", username: "u", password: "p" },
    dispatcher: agent,
    clock,
  });
}

beforeAll(async () => {
  emu = await startEmu();
});
afterAll(async () => emu.close());
beforeEach(async () => {
  await emu.reset();
  clock = fakeClock();
  logs = [];
  core = client();
});
afterEach(async () => core.close());

const createBody = (name: string) => sspCreateBody(name, { hierarchy_no: 90, expression: "x * 1" });

describe("a service slower than the answer timeout (REVSYNC_TIMEOUT_MS)", () => {
  it("says there was no answer within the time set, after how many attempts, never that the connection failed", async () => {
    // Held until the test clears the fault (a minute at most): no answer comes, however loaded the machine.
    // undici checks its answer timeouts on a timer of about a second, so each attempt ends 0.2 to 1.2 s in:
    // a latency of 1.5 s was not sure to be the later.
    await emu.admin("POST", "faults", { faults: [{ kind: "latency", latency_ms: 60_000, method: "GET", path: "/tenant-configurations" }] });
    const slow = client({ timeouts: { headersMs: 200, bodyMs: 5000 }, retry: { maxAttempts: 2 } });
    try {
      const e = await tenantConfigurations.list(slow).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ApiError);
      const message = (e as ApiError).message;
      expect(message).toMatch(/^GET \S*tenant-configurations\S* failed \(no answer\): no answer within 200 ms \(REVSYNC_TIMEOUT_MS\), after 2 attempts$/);
      expect(message).not.toMatch(/connection failed|UND_ERR|Headers Timeout/);
    } finally {
      await emu.admin("DELETE", "faults");
      await slow.close();
    }
  });
});

describe("all ten operations", () => {
  it("reads, writes and downloads through the typed resources", async () => {
    const tcs = await tenantConfigurations.list(core);
    const env = tcs[0]!;
    const update = await updateWrite(core, env.compliance_id!, updateBody(env, { carves_allocation: true }), env.version_id);
    expect(update).toMatchObject({ kind: "done", result: { error: [] } });
    expect((await ssp.list(core)).length).toBe(4);
    expect((await ssp.get(core, "Hardware SSP"))?.compliance_spec?.[0]?.batches).toHaveLength(3);
    expect(await ssp.get(core, "Nope")).toBeUndefined();
    const created = await landedWrite(writes.create(core, createBody("Client Made")));
    expect(created.kind).toBe("done");
    expect((await landedWrite(writes.batchAction(core, "review", { id: "SSP-HW", name: "Hardware SSP" }, "FY26-H2"))).result.error).toEqual([]);
    expect((await ssp.download(core, "FILE-SSP-HW-1")).toString().split("\n")[0]).toMatch(/^product_id,/);
    expect((await ssp.template(core)).toString()).toMatch(/^product_id,currency_code/);
    expect((await approvals.pending(core)).total_records).toBe(5);
    expect((await approvals.act(core, "Approved", "ok", ["APR-0003"])).processed_count).toBe(1);
    expect((await errorTransactions.list(core, { transaction_type: "order" }))[0]?.total_records).toBe("6");
  });

  it("turns each failure status into an ApiError with the service's words", async () => {
    const cases: [() => Promise<unknown>, number][] = [
      [() => landedWrite(writes.create(core, { ...createBody("Bad"), compliance_spec: [{ ...createBody("Bad").compliance_spec[0], expression: "" }] })), 400],
      [() => approvals.act(core, "Approved", "mine", ["APR-0001"]), 403],
      [() => ssp.download(core, "NOPE"), 404],
      [() => landedWrite(writes.create(core, createBody("Hardware SSP"))), 409],
      [() => landedWrite(writes.batchAction(core, "approve", { id: "SSP-HW", name: "Hardware SSP" }, "FY26-H2")), 409],
    ];
    for (const [p, status] of cases) {
      const e = await p().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).status).toBe(status);
      expect((e as ApiError).message).toMatch(new RegExp(`\\(${status} `));
    }
    // A body the spec's request schema refuses is not sent at all: the write is blocked, naming the field.
    const hole = { user_name: "a", current_timestamp: "1", format_type: "JSON", compliance_name: "x", unique_key: "y", compliance_spec: [{} as any] } as any;
    await expect(updateWrite(core, "TC-0001", hole)).rejects.toThrow(
      /^blocked: the request body is not what the interface requires \(compliance_spec\.0\.ar_accounting is required; .*\); nothing was sent for it$/,
    );
  });

  it("412 for a stale If-Match", async () => {
    const env = (await tenantConfigurations.list(core))[0]!;
    const body = updateBody(env);
    const e = await updateWrite(core, env.compliance_id!, body, "0").catch((x) => x);
    expect((e as ApiError).status).toBe(412);
  });

  it("a 200 with a non-empty error array is a failure", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "error_array", method: "POST", path: "/ssp", times: 1 }] });
    const e = await landedWrite(writes.create(core, createBody("Half"))).catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(200);
    expect((e as ApiError).message).toMatch(/injected failure/);
  });

  it("a non-JSON answer names the status and its first bytes; an answer off the schema names the field", async () => {
    const { MockAgent } = await import("undici");
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get("http://127.0.0.1:9");
    pool.intercept({ path: /token/, method: "POST" }).reply(200, { access_token: "at.mock-token", expires_in: 300 }).persist();
    pool
      .intercept({ path: "/apis/policy-sets/v1/policy/tenant-configurations", method: "GET" })
      .reply(200, "<html>gateway", { headers: { "content-type": "text/html" } });
    pool.intercept({ path: "/apis/policy-sets/v1/policy/ssp", method: "GET" }).reply(200, [{ compliance_name: 7 }]);
    const mocked = mockedClient(agent);
    await expect(tenantConfigurations.list(mocked)).rejects.toThrow(/not JSON \(status 200, first bytes: "<html>gateway"\)/);
    await expect(ssp.list(mocked)).rejects.toThrow(/unexpected answer: field \/0\/compliance_name must be string/);
    await agent.close();
  });
});

describe("an SSP answer of the wrong shape", () => {
  it("names the policy and the batch that were read: from the answer along the wrong field, else from the request", async () => {
    const SSP_PATH = "/apis/policy-sets/v1/policy/ssp";
    // The emulator's own answers, each then made wrong in one place.
    const real = (query: Record<string, string>): Promise<any> => core.call({ method: "GET", path: SSP_PATH, query, kind: "read", schema: "SspList" });
    const batch = await real({ policy_name: "Hardware SSP", batch_name: "FY26-H1" });
    batch[0].compliance_spec[0].ssp_values[0].mid_point = "ten";
    const policy = await real({ policy_name: "Hardware SSP" });
    policy[0].compliance_spec[0].batches[1].status = 7;
    const { MockAgent } = await import("undici");
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get("http://127.0.0.1:9");
    pool.intercept({ path: /token/, method: "POST" }).reply(200, { access_token: "at.mock-token", expires_in: 300 }).persist();
    const asked = (policyName: string, batchName?: string) => (p: string) => {
      const q = new URL(p, "http://x").searchParams;
      return p.startsWith(SSP_PATH) && q.get("policy_name") === policyName && q.get("batch_name") === (batchName ?? null);
    };
    pool.intercept({ path: asked("Hardware SSP", "FY26-H1"), method: "GET" }).reply(200, batch);
    // The envelope itself is wrong, and names nothing: the request says what was read.
    pool.intercept({ path: asked("Software SSP", "FY26-Q1"), method: "GET" }).reply(200, [{ compliance_spec: "none" }]);
    pool.intercept({ path: asked("Hardware SSP"), method: "GET" }).reply(200, policy);
    const mocked = mockedClient(agent);
    const said = (p: Promise<unknown>) =>
      p.then(
        () => "no error",
        (e: Error) => e.message,
      );
    expect(await said(ssp.batch(mocked, "Hardware SSP", "FY26-H1"))).toBe(
      'GET /apis/policy-sets/v1/policy/ssp failed (200): unexpected answer for SSP policy "Hardware SSP", batch "FY26-H1": field /0/compliance_spec/0/ssp_values/0/mid_point must be integer',
    );
    expect(await said(ssp.batch(mocked, "Software SSP", "FY26-Q1"))).toMatch(
      /unexpected answer for SSP policy "Software SSP", batch "FY26-Q1": field \/0\/compliance_spec must be/,
    );
    expect(await said(ssp.get(mocked, "Hardware SSP"))).toMatch(
      new RegExp(
        `unexpected answer for SSP policy "Hardware SSP", batch "${policy[0].compliance_spec[0].batches[1].batch_name}": field /0/compliance_spec/0/batches/1/status must be`,
      ),
    );
    await agent.close();
  });
});

describe("auth", () => {
  it("token expiry forced mid-run: continues after a refresh", async () => {
    await tenantConfigurations.list(core);
    await emu.admin("POST", "faults", { faults: [{ kind: "token_expiry" }] });
    await tenantConfigurations.list(core);
    expect(logs.some((l) => /refreshed/.test(l))).toBe(true);
  });

  it("with the refresh token expired too: a new password grant", async () => {
    await tenantConfigurations.list(core);
    await emu.admin("POST", "faults", { faults: [{ kind: "token_expiry", include_refresh: true }] });
    await tenantConfigurations.list(core);
    expect(logs.some((l) => /refresh refused/.test(l))).toBe(true);
    expect(logs.filter((l) => /password grant/.test(l))).toHaveLength(2);
  });

  it("refreshes before expiry from expires_in, and shares one token request among concurrent callers", async () => {
    await Promise.all(Array.from({ length: 10 }, () => tenantConfigurations.list(core)));
    const journal: any[] = await emu.admin("GET", "requests");
    expect(journal.filter((j) => j.path.includes("/token"))).toHaveLength(1);
    clock.offset += 290_000; // within the last 10% of the 300 s lifetime
    await Promise.all(Array.from({ length: 5 }, () => tenantConfigurations.list(core)));
    const after: any[] = await emu.admin("GET", "requests");
    expect(after.filter((j) => j.path.includes("/token"))).toHaveLength(2);
    expect(logs.filter((l) => /refreshed/.test(l))).toHaveLength(1);
  });

  it("wrong credentials: a plain error, no retry storm", async () => {
    const bad = client({ credentials: { kind: "password", clientId: "revsync", clientSecret: "wrong", username: "alice", password: "x" } });
    await expect(tenantConfigurations.list(bad)).rejects.toThrow(/sign-in refused: invalid client credentials/);
    await bad.close();
  });

  it("http:// is refused for any host but loopback", () => {
    expect(() => client({ baseUrl: "http://api.example.com" })).toThrow(UserError);
    expect(() => client({ baseUrl: "http://localhost:1" })).not.toThrow();
  });
});

describe("retries", () => {
  it("429 with Retry-After: the wait is honoured through the clock, then success", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", retry_after: 7, times: 2, path: "/tenant-configurations" }] });
    const list = await tenantConfigurations.list(core);
    expect(list).toHaveLength(1);
    // The governor pauses every request for the Retry-After, with up to a tenth more of jitter.
    expect(clock.sleeps).toHaveLength(2);
    for (const ms of clock.sleeps) {
      expect(ms).toBeGreaterThanOrEqual(7000 - 50);
      expect(ms).toBeLessThanOrEqual(7700);
    }
  });

  it("a 500 on a GET is sent again, as on a PATCH (the same retry statuses)", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "status", status: 500, path: "/tenant-configurations", times: 1 }] });
    expect(await tenantConfigurations.list(core)).toHaveLength(1);
    const journal: any[] = await emu.admin("GET", "requests");
    expect(journal.filter((j) => j.path.endsWith("/tenant-configurations")).map((j) => j.status)).toEqual([500, 200]);
  });

  it("the request observer: each attempt, its tag from the client view it went through, the sign-in untagged, a resend said", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "status", status: 500, path: "/tenant-configurations", times: 1 }] });
    const seen: { method: string; path: string; status: number | null; resend: boolean; tag?: string }[] = [];
    const started: (string | undefined)[] = [];
    const observed = client({
      onRequest: ({ method, path, status, resend, tag }) => seen.push({ method, path, status, resend, ...(tag === undefined ? {} : { tag }) }),
      onRequestStart: (r) => started.push(r.tag),
    });
    try {
      expect(await tenantConfigurations.list(observed.tagged("update tenant-configuration/x"))).toHaveLength(1);
      await ssp.list(observed);
    } finally {
      await observed.close();
    }
    const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
    expect(seen).toEqual([
      { method: "POST", path: "/auth/realms/demo/protocol/openid-connect/token", status: 200, resend: false },
      { method: "GET", path: TC, status: 500, resend: false, tag: "update tenant-configuration/x" },
      { method: "GET", path: TC, status: 200, resend: true, tag: "update tenant-configuration/x" },
      { method: "GET", path: expect.stringContaining("/ssp"), status: 200, resend: false },
    ]);
    expect(started).toEqual([undefined, "update tenant-configuration/x", "update tenant-configuration/x", undefined]);
  });

  it("an unreadable 2xx to a write is 'outcome unknown', settled by reading back, never sent again", async () => {
    const { MockAgent } = await import("undici");
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get("http://127.0.0.1:9");
    pool.intercept({ path: /token/, method: "POST" }).reply(200, { access_token: "at.mock-token", expires_in: 300 }).persist();
    const sends = { PATCH: 0, POST: 0 };
    pool
      .intercept({ path: "/apis/policy-sets/v1/policy/ssp/review/SSP-HW/FY26-H2", method: "PATCH" })
      .reply(200, () => (sends.PATCH++, "<html>done</html>"))
      .persist();
    const body = createBody("Garbled SSP");
    pool
      .intercept({ path: "/apis/policy-sets/v1/policy/ssp", method: "POST" })
      .reply(200, () => (sends.POST++, { compliance_id: 7 }))
      .persist();
    const stamps = { created_at: 1, created_by: "alice", updated_at: 1, updated_by: "alice" };
    pool.intercept({ path: "/apis/policy-sets/v1/policy/ssp?policy_name=Hardware+SSP&batch_name=FY26-H2", method: "GET" }).reply(200, [
      {
        compliance_name: "Hardware SSP",
        compliance_spec: [{ ...stamps, ...body.compliance_spec[0], name: "FY26-H2", batch_name: "FY26-H2", status: "reviewed" }],
      },
    ]);
    pool
      .intercept({ path: "/apis/policy-sets/v1/policy/ssp?policy_name=Garbled+SSP", method: "GET" })
      .reply(200, [{ compliance_id: "SSP-9", compliance_name: "Garbled SSP", compliance_spec: [{ ...stamps, ...body.compliance_spec[0] }] }]);
    const mocked = mockedClient(agent);
    const reviewed = await landedWrite(writes.batchAction(mocked, "review", { id: "SSP-HW", name: "Hardware SSP" }, "FY26-H2"));
    expect(reviewed).toMatchObject({ kind: "confirmed", status: "reviewed" });
    const created = await landedWrite(writes.create(mocked, body));
    expect(created).toMatchObject({ kind: "confirmed", why: "the answer could not be read", result: { compliance_id: "SSP-9" } });
    expect(sends).toEqual({ PATCH: 1, POST: 1 });
    await agent.close();
  });

  it("503 on a GET: backoff with full jitter, bounded in attempts (a read persists: ten sends)", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "status", status: 503, path: "/tenant-configurations" }] });
    const e = await tenantConfigurations.list(core).catch((x) => x);
    expect((e as ApiError).status).toBe(503);
    expect(clock.sleeps).toEqual([125, 250, 500, 1000, 2000, 4000, 8000, 10000, 10000]);
  });

  it("a create whose answer is lost after the commit ends with exactly one policy", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "POST", path: "/ssp", after_commit: true, times: 1 }] });
    const out = await landedWrite(writes.create(core, createBody("Exactly Once")));
    expect(out).toMatchObject({ kind: "confirmed", why: "the answer was lost" });
    const state: any = await emu.admin("GET", "state");
    expect(state.tenants[0].ssp.filter((p: any) => p.compliance_name === "Exactly Once")).toHaveLength(1);
  });

  it("a create dropped before the commit is sent again once the policy is known to be absent", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "POST", path: "/ssp", times: 1 }] });
    const out = await landedWrite(writes.create(core, createBody("Second Try")));
    expect(out.kind).toBe("done");
    const state: any = await emu.admin("GET", "state");
    expect(state.tenants[0].ssp.filter((p: any) => p.compliance_name === "Second Try")).toHaveLength(1);
    const journal: any[] = await emu.admin("GET", "requests");
    expect(journal.filter((j) => j.method === "POST" && j.path.endsWith("/ssp"))).toHaveLength(2);
  });

  it("an approval action whose answer was lost after its commit: read back from the pending list, one POST", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "POST", path: "/oingest-approval/v1/action", after_commit: true, times: 1 }] });
    const res = await approvals.act(core, "Approved", "ok", ["APR-0003", "APR-0004"]);
    expect(res).toMatchObject({
      recovered: true,
      status: "no longer pending",
      // Gone from the pending list, which does not say by whose action nor which: none counted.
      processed_count: 0,
      message: "the answer was lost; read back: 2 of 2 no longer pending (APR-0003, APR-0004)",
    });
    const journal: any[] = await emu.admin("GET", "requests");
    expect(journal.filter((j) => j.method === "POST" && j.path.endsWith("/action"))).toHaveLength(1);
  });

  it("an approval action lost before its commit: the pending list says nothing landed, so it is sent again", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "POST", path: "/oingest-approval/v1/action", times: 1 }] });
    const res = await approvals.act(core, "Approved", "ok", ["APR-0003"]);
    expect(res).toMatchObject({ status: "success", processed_count: 1 });
    expect(res.recovered).toBeUndefined();
    const journal: any[] = await emu.admin("GET", "requests");
    expect(journal.filter((j) => j.method === "POST" && j.path.endsWith("/action"))).toHaveLength(2);
  });

  it("a review whose answer was lost after its commit: read back before anything else, counted as done; one send", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "PATCH", after_commit: true, times: 1 }] });
    const res = await landedWrite(writes.batchAction(core, "review", { id: "SSP-HW", name: "Hardware SSP" }, "FY26-H2"));
    expect(res).toMatchObject({ kind: "confirmed", status: "reviewed" });
    const journal: any[] = await emu.admin("GET", "requests");
    // The journal records a dropped answer as status 0.
    expect(journal.filter((j) => j.method === "PATCH").map((j) => j.status)).toEqual([0]);
  });

  it("a review whose answer was lost, and the read-back fails too: outcome unknown, never sent again", async () => {
    await emu.admin("POST", "faults", {
      faults: [
        { kind: "drop", method: "PATCH", after_commit: true, times: 1 },
        { kind: "status", status: 500, method: "GET", path: "/ssp" },
      ],
    });
    const e = await landedWrite(writes.batchAction(core, "review", { id: "SSP-HW", name: "Hardware SSP" }, "FY26-H2")).catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).outcomeUnknown).toBe(true);
    expect((e as ApiError).message).toMatch(/outcome unknown: .*reading it back failed .*nothing was sent again: run revsync plan to see/);
    const journal: any[] = await emu.admin("GET", "requests");
    expect(journal.filter((j) => j.method === "PATCH")).toHaveLength(1);
  });
});

describe("--verbose never shows a secret", () => {
  it("through failures, retries and re-authentication", async () => {
    const dir = tempRepo(emu.url);
    try {
      await emu.admin("POST", "faults", {
        faults: [
          // (A 429 is swept by test/secrets.process.test.ts: here it would slow the rest of the plan, as
          // revsync learns a lower rate, for nothing more to check.)
          { kind: "status", status: 503, path: "/ssp", times: 2 },
          { kind: "status", status: 502, path: "/token", times: 1 },
        ],
      });
      const r1 = await cli(["plan", "--verbose"], { cwd: dir, env: DEMO_ENV });
      expect(r1.stderr).toMatch(/retry 1/);
      await emu.admin("POST", "faults", { faults: [{ kind: "token_expiry", include_refresh: false }] });
      const r2 = await cli(["apply", "--auto-approve", "--verbose"], { cwd: dir, env: DEMO_ENV });
      const r3 = await cli(["plan", "--verbose"], { cwd: dir, env: { ...DEMO_ENV, REVSYNC_PASSWORD: "wrong-password-xyz" } });
      expect(r3.code).toBe(1);
      const state: any = await emu.admin("GET", "state");
      const tokens = Object.keys(state.tokens);
      expect(tokens.length).toBeGreaterThan(0);
      const all = [r1, r2, r3].map((r) => r.stdout + r.stderr).join("\n");
      for (const s of ["alice-password", "demo-secret", "wrong-password-xyz", ...tokens]) expect(all).not.toContain(s);
      expect(all).toMatch(/GET \/apis\/policy-sets\/v1\/policy\/ssp 503/);
    } finally {
      removeDir(dir);
    }
  });
});
