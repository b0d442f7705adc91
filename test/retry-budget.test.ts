import { MockAgent } from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiCore, BUDGET } from "../src/api/core.js";
import { approvals } from "../src/api/resources.js";
import { ssp } from "../src/kinds/ssp/service.js";
import { tenantConfigurations } from "../src/kinds/tenant-configuration/kind.js";
import { writes } from "../src/testing/helpers.js";
import { ApiError } from "../src/errors.js";
import type { SspCreateBody, TenantConfigurationEnvelope } from "../src/schema/generated/api.js";
import { demoClient, landedWrite, sspCreateBody, startEmu, updateBody, updateWrite, type Emu } from "../src/testing/helpers.js";

// One retry budget per request, in the HTTP core, counted in the emulator's journal (issue 11):
// reads and PATCHes at most 6 sends; a create at most 3, and sent again only after a read says it
// did not land; an answer with an error array is a definite refusal, sent once. A 429 spends no
// budget (the service did not process it): the run's time limit bounds it (issue 20).

let emu: Emu;
let core: ApiCore;
beforeAll(async () => {
  emu = await startEmu();
});
afterAll(async () => emu.close());
beforeEach(async () => {
  await emu.reset();
  core = demoClient(emu.url, { retry: { maxWaitMs: 1 } });
  await core.auth.token(); // sign in before counting
  await emu.admin("DELETE", "requests");
});
afterEach(async () => core.close());

const SSP = "/apis/policy-sets/v1/policy/ssp";

const createBody = (name: string, hierarchy = 77): SspCreateBody => sspCreateBody(name, { hierarchy_no: hierarchy });

async function tenantConfig(): Promise<TenantConfigurationEnvelope> {
  const [env] = await tenantConfigurations.list(core);
  await emu.admin("DELETE", "requests");
  return env as TenantConfigurationEnvelope;
}

/** The four kinds of write, each with the method and path its faults aim at: `prepare` does the reads
 *  a write needs and returns the write itself. */
const WRITES: { name: string; method: string; path: string; creates: boolean; prepare: () => Promise<() => Promise<unknown>> }[] = [
  {
    name: "tenant configuration PATCH",
    method: "PATCH",
    path: "/tenant-configurations/",
    creates: false,
    prepare: async () => {
      const env = await tenantConfig();
      return () => updateWrite(core, env.compliance_id ?? "", updateBody(env, { carves_allocation: true }));
    },
  },
  {
    name: "SSP create POST",
    method: "POST",
    path: "/policy/ssp",
    creates: true,
    prepare: async () => () => landedWrite(writes.create(core, createBody("Budget SSP"))),
  },
  {
    name: "SSP batch approve PATCH",
    method: "PATCH",
    path: "/policy/ssp/approve/",
    creates: false,
    prepare: async () => {
      const hw = await ssp.get(core, "Hardware SSP");
      return () => landedWrite(writes.batchAction(core, "approve", { id: hw?.compliance_id ?? "", name: "Hardware SSP" }, "FY26-H1"));
    },
  },
  {
    name: "approval action POST",
    method: "POST",
    path: "/oingest-approval/v1/action",
    creates: true,
    prepare: async () => () => approvals.act(core, "Approved", "checked", ["APR-0003"]),
  },
];

const sent = async (method: string, path: string): Promise<number> =>
  (await emu.admin<{ method: string; path: string }[]>("GET", "requests")).filter((r) => r.method === method && r.path.includes(path)).length;

describe("sends per request under sustained faults", () => {
  const FAULTS = [
    { label: "503", fault: { kind: "status", status: 503 }, sends: (creates: boolean) => (creates ? BUDGET.createSends : BUDGET.sends) },
    { label: "200 with an error array", fault: { kind: "error_array" }, sends: () => 1 },
  ];
  for (const f of FAULTS) {
    for (const w of WRITES) {
      it(`${f.label}: ${w.name} is sent ${f.sends(w.creates)} time(s), then fails`, async () => {
        const write = await w.prepare();
        await emu.admin("DELETE", "requests");
        // Faults aim at the write only; the reads that prepare it are done.
        await emu.admin("POST", "faults", { faults: [{ ...f.fault, method: w.method, path: w.path }] });
        await expect(write()).rejects.toBeInstanceOf(ApiError);
        expect(await sent(w.method, w.path)).toBe(f.sends(w.creates));
      });
    }
  }
});

describe("a sustained 429 spends no send budget: the run's time limit ends it", () => {
  // Virtual time: it moves only when the client waits, so every count below is exact.
  let t = 0;
  const clock = { now: () => t, sleep: async (ms: number) => void (t += ms) };
  let logs: string[] = [];
  beforeEach(async () => {
    await core.close();
    t = Date.now();
    core = demoClient(emu.url, { clock, random: () => 0.5, timeoutMs: 60_000, log: (l) => logs.push(l) });
    logs = [];
    await core.auth.token();
  });

  for (const w of WRITES) {
    it(`429 with Retry-After: ${w.name} is sent until the time limit, then fails naming the requests turned away${w.creates ? "; nothing lands twice" : ""}`, async () => {
      const write = await w.prepare();
      await emu.admin("DELETE", "requests");
      const started = t;
      await emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", retry_after: 1, method: w.method, path: w.path }] });
      const err = await write().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      const sends = await sent(w.method, w.path);
      // Far beyond the budget of 3 or 6: every send waited at least its Retry-After (1 s), and the
      // next one would have been sent after the minute the run allows.
      expect(sends).toBeGreaterThan(BUDGET.sends);
      expect(sends).toBeLessThanOrEqual(60);
      expect(t - started).toBeLessThanOrEqual(60_000);
      expect((err as ApiError).status).toBe(429);
      // It ends on the service's Retry-After reaching past the limit, or on the pace the governor slowed
      // to (one send every 2 s at its slowest) doing so: the message says which.
      const head = `${w.method} ${(err as ApiError).path} failed (429 rate limited): not sent again within the run's time limit (--timeout 1m)`;
      const pause = ": the service's Retry-After holds every request for another 1s";
      const tail = `; the service turned away ${sends} requests of this run with 429 (rate limited): try again later, give a longer --timeout, or set rate_limit for this environment (or --rate-limit) to the service's limit`;
      expect([head + pause + tail, head + tail]).toContain((err as Error).message);
    });
  }

  it("a create turned away 5 times with Retry-After, then let through: sent 6 times, created once, no read-back", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", retry_after: 1, method: "POST", path: "/policy/ssp", times: 5 }] });
    const out = await landedWrite(writes.create(core, createBody("Patient SSP")));
    expect(out.kind).toBe("done");
    expect(await sent("POST", SSP)).toBe(6);
    expect(await sent("GET", SSP)).toBe(0);
    expect((await ssp.list(core)).filter((e) => e.compliance_name === "Patient SSP")).toHaveLength(1);
  });

  it("429 without Retry-After: sent again after a backoff that grows, then success", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", retry_after: null, path: "/tenant-configurations", times: 4 }] });
    await tenantConfigurations.list(core);
    expect(await sent("GET", "/tenant-configurations")).toBe(5);
    // Full jitter (the random source gives 0.5): half of 250, 500, 1000 and 2000 ms.
    const waits = logs.map((l) => /^429: GET \/apis\/policy-sets\/v1\/policy\/tenant-configurations in (\d+)ms$/.exec(l)?.[1]).filter(Boolean);
    expect(waits).toEqual(["125", "250", "500", "1000"]);
  });
});

describe("a create whose outcome is unknown", () => {
  it("answer dropped after commit: read back, found with the fields sent, counted as created; one POST", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", after_commit: true, method: "POST", path: "/policy/ssp", times: 1 }] });
    const out = await landedWrite(writes.create(core, createBody("Dropped SSP")));
    expect(out.kind).toBe("confirmed");
    expect(out.result.compliance_id).toMatch(/^SSP-/);
    expect(await sent("POST", SSP)).toBe(1);
  });

  it("answer dropped before commit: the read says it is not there, so it is sent again; two POSTs, one policy", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "POST", path: "/policy/ssp", times: 1 }] });
    const out = await landedWrite(writes.create(core, createBody("Retried SSP")));
    expect(out.kind).toBe("done");
    expect(await sent("POST", SSP)).toBe(2);
    expect((await ssp.list(core)).filter((e) => e.compliance_name === "Retried SSP")).toHaveLength(1);
  });

  it("answer dropped and every read refused past the read budget: outcome unknown, never sent again", async () => {
    await emu.admin("POST", "faults", {
      faults: [
        { kind: "drop", after_commit: true, method: "POST", path: "/policy/ssp", times: 1 },
        { kind: "status", status: 503, method: "GET", path: "/policy/ssp" },
      ],
    });
    const err = await landedWrite(writes.create(core, createBody("Unknown SSP"))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).outcomeUnknown).toBe(true);
    expect((err as Error).message).toMatch(/outcome unknown: .*reading it back failed.*nothing was sent again: run revsync plan to see/);
    expect(await sent("POST", SSP)).toBe(1);
    expect(await sent("GET", SSP)).toBe(BUDGET.readSends);
  });

  it("a 409 to a first send is someone else's policy: a conflict naming who created it, never a success, whatever its fields", async () => {
    await landedWrite(writes.create(core, createBody("Twin SSP", 77)));
    for (const hierarchy of [78, 77]) {
      const out = await writes.create(core, createBody("Twin SSP", hierarchy));
      expect(out.kind).toBe("refused");
      if (out.kind !== "refused") continue;
      expect(out.error.conflict).toBe(true);
      expect(out.error.message).toMatch(/ssp\/Twin SSP exists in the service now \(created by alice at \S+Z\): someone else's policy, not created by this run/);
    }
    expect(await sent("POST", SSP)).toBe(3);
  });
});

describe("2xx answers without a body", () => {
  it("204 on a PATCH and an empty 201 on a create are success; the create's id is read back", async () => {
    await emu.admin("POST", "faults", {
      faults: [
        { kind: "success_status", status: 204, method: "PATCH" },
        { kind: "success_status", status: 201, method: "POST", path: "/policy/ssp" },
      ],
    });
    const env = await tenantConfig();
    await expect(updateWrite(core, env.compliance_id ?? "", updateBody(env, { carves_allocation: true }))).resolves.toBeDefined();
    const created = await landedWrite(writes.create(core, createBody("Quiet SSP")));
    expect(created.result.compliance_id).toMatch(/^SSP-/);
    const hw = await ssp.get(core, "Hardware SSP");
    const res = await landedWrite(writes.batchAction(core, "approve", { id: hw?.compliance_id ?? "", name: "Hardware SSP" }, "FY26-H1"));
    expect(res.result.error).toEqual([]);
    expect((await ssp.batch(core, "Hardware SSP", "FY26-H1"))?.status).toBe("approved");
  });
});

describe("exact reads (a service whose filters answer loosely)", () => {
  let agent: MockAgent;
  let mocked: ApiCore;
  const BASE = "https://ras.example.com";
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    mocked = new ApiCore({ baseUrl: BASE, authUrl: BASE, realm: "acme", credentials: { kind: "token", token: "t0ken-value" }, dispatcher: agent });
  });
  afterEach(async () => agent.close());

  const envelope = (name: string, items: object[]) => ({ compliance_id: `ID-${name}`, compliance_name: name, compliance_spec: items });
  const item = (o: object) => ({
    can_delete: true,
    created_at: 1,
    created_by: "x",
    entity_type: "policy",
    is_user_defined: true,
    updated_at: 1,
    updated_by: "x",
    ...o,
  });

  it("a policy_name filter that answers another policy is 'not found', never that policy", async () => {
    agent
      .get(BASE)
      .intercept({ path: `${SSP}?policy_name=Hardware`, method: "GET" })
      .reply(200, [envelope("Hardware SSP", [item({ name: "Hardware SSP" })])]);
    expect(await ssp.get(mocked, "Hardware")).toBeUndefined();
  });

  it("a batch filter that answers another batch, or another policy's batch, is 'not found'", async () => {
    const path = `${SSP}?policy_name=Hardware+SSP&batch_name=FY26`;
    agent
      .get(BASE)
      .intercept({ path, method: "GET" })
      .reply(200, [envelope("Hardware SSP", [item({ name: "FY26-H1", batch_name: "FY26-H1", status: "approved" })])]);
    expect(await ssp.batch(mocked, "Hardware SSP", "FY26")).toBeUndefined();
    agent
      .get(BASE)
      .intercept({ path, method: "GET" })
      .reply(200, [envelope("Software SSP", [item({ name: "FY26", batch_name: "FY26", status: "approved" })])]);
    expect(await ssp.batch(mocked, "Hardware SSP", "FY26")).toBeUndefined();
  });
});
