import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { api, startEmu, token, updateBody, type Emu, sspCreateBody } from "../src/testing/helpers.js";

const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const SSP = "/apis/policy-sets/v1/policy/ssp";

let emu: Emu;
let alice: string;
let bob: string;

beforeAll(async () => {
  emu = await startEmu();
});
afterAll(async () => emu.close());
beforeEach(async () => {
  await emu.reset();
  alice = await token(emu.url, "alice");
  bob = await token(emu.url, "bob");
});

describe("token endpoint (spec 5)", () => {
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  const url = () => `${emu.url}/auth/realms/demo/protocol/openid-connect/token`;

  it("password grant answers every field of 5.4 with 300 s and 1800 s lifetimes", async () => {
    const res = await fetch(
      url(),
      form({ grant_type: "password", client_id: "revsync", client_secret: "demo-secret", username: "alice", password: "alice-password" }),
    );
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    for (const k of ["access_token", "expires_in", "refresh_expires_in", "refresh_token", "token_type", "not-before-policy", "session_state", "scope"])
      expect(body).toHaveProperty(k);
    expect(body.expires_in).toBe(300);
    expect(body.refresh_expires_in).toBe(1800);
  });

  it("refresh_token grant rotates the refresh token", async () => {
    const first = (await (
      await fetch(url(), form({ grant_type: "password", client_id: "revsync", client_secret: "demo-secret", username: "alice", password: "alice-password" }))
    ).json()) as any;
    const res = await fetch(
      url(),
      form({ grant_type: "refresh_token", client_id: "revsync", client_secret: "demo-secret", refresh_token: first.refresh_token }),
    );
    expect(res.status).toBe(200);
    const again = await fetch(
      url(),
      form({ grant_type: "refresh_token", client_id: "revsync", client_secret: "demo-secret", refresh_token: first.refresh_token }),
    );
    expect(again.status).toBe(400);
    expect(((await again.json()) as any).error).toBe("invalid_grant");
  });

  it("refuses bad client, bad password and unknown grants with {error, error_description}", async () => {
    const badClient = await fetch(
      url(),
      form({ grant_type: "password", client_id: "revsync", client_secret: "nope", username: "alice", password: "alice-password" }),
    );
    expect(badClient.status).toBe(401);
    expect(await badClient.json()).toMatchObject({ error: "invalid_client" });
    const badUser = await fetch(url(), form({ grant_type: "password", client_id: "revsync", client_secret: "demo-secret", username: "alice", password: "x" }));
    expect(await badUser.json()).toMatchObject({ error: "invalid_grant", error_description: expect.any(String) });
    const badGrant = await fetch(url(), form({ grant_type: "client_credentials", client_id: "revsync", client_secret: "demo-secret" }));
    expect(badGrant.status).toBe(400);
    const badRealm = await fetch(`${emu.url}/auth/realms/other/protocol/openid-connect/token`, form({ grant_type: "password" }));
    expect(badRealm.status).toBe(404);
  });
});

describe("bearer tokens", () => {
  it("401 when missing, malformed, unknown or expired", async () => {
    expect((await fetch(`${emu.url}${TC}`)).status).toBe(401);
    expect((await fetch(`${emu.url}${TC}`, { headers: { authorization: "Basic abc" } })).status).toBe(401);
    expect((await api(emu.url, "at.unknown", "GET", TC)).status).toBe(401);
    await emu.admin("POST", "faults", { faults: [{ kind: "token_expiry" }] });
    const r = await api(emu.url, alice, "GET", TC);
    expect(r.status).toBe(401);
    expect(r.body.error[0].message).toMatch(/expired/);
  });

  it("a token is bound to its realm", async () => {
    const state: any = await emu.admin("GET", "state");
    const other = JSON.parse(JSON.stringify(state.tenants[0]));
    other.realm = "acme";
    state.tenants.push(other);
    await emu.admin("POST", "reset", { state });
    const demoToken = await token(emu.url, "alice");
    expect((await api(emu.url, demoToken, "GET", `/tenants/acme${TC}`)).status).toBe(401);
    expect((await api(emu.url, demoToken, "GET", TC)).status).toBe(200);
  });
});

describe("tenant configuration (4.1, 4.2)", () => {
  it("lists envelopes and applies a PATCH of exactly the 4.2 fields, advancing version and stamps", async () => {
    const list = await api(emu.url, alice, "GET", TC);
    expect(list.status).toBe(200);
    const env = list.body[0];
    const res = await api(emu.url, alice, "PATCH", `${TC}/${env.compliance_id}`, updateBody(env, { carves_allocation: true }));
    expect(res.status).toBe(200);
    expect(res.body.error).toEqual([]);
    const after = (await api(emu.url, alice, "GET", TC)).body[0];
    expect(after.compliance_spec[0].carves_allocation).toBe(true);
    expect(after.version_id).toBe(String(Number(env.version_id) + 1));
    expect(after.last_modified_on).toBeGreaterThan(env.last_modified_on);
    expect(after.last_modified_by).toBe("alice");
    expect(after.compliance_spec[0].updated_by).toBe("alice");
  });

  it("400 naming the field for an extra field, a wrong type, or a guid/unique_key that is not the live one", async () => {
    const env = (await api(emu.url, alice, "GET", TC)).body[0];
    const extra = await api(emu.url, alice, "PATCH", `${TC}/${env.compliance_id}`, updateBody(env, { snowman_enabled: true }));
    expect(extra.status).toBe(400);
    expect(extra.body.error).toContainEqual({ field: "compliance_spec.0.snowman_enabled", message: "is not an allowed field" });
    const wrongType = await api(emu.url, alice, "PATCH", `${TC}/${env.compliance_id}`, updateBody(env, { carves_allocation: "yes" }));
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error[0].field).toBe("compliance_spec.0.carves_allocation");
    const guid = await api(emu.url, alice, "PATCH", `${TC}/${env.compliance_id}`, updateBody(env, { guid: "other" }));
    expect(guid.body.error).toContainEqual({ field: "compliance_spec.0.guid", message: "does not match the live guid" });
    const uk = await api(emu.url, alice, "PATCH", `${TC}/${env.compliance_id}`, { ...updateBody(env), unique_key: "x" });
    expect(uk.status).toBe(400);
    expect(await emu.writes()).toHaveLength(4);
    expect((await api(emu.url, alice, "GET", TC)).body[0].version_id).toBe(env.version_id);
  });

  it("404 for an unknown compliance_id, 412 for a stale If-Match; with If-Match ignored (a setting reset restores) the write lands", async () => {
    const env = (await api(emu.url, alice, "GET", TC)).body[0];
    expect((await api(emu.url, alice, "PATCH", `${TC}/nope`, updateBody(env))).status).toBe(404);
    const stale = () =>
      fetch(`${emu.url}${TC}/${env.compliance_id}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${alice}`, "content-type": "application/json", "if-match": "999" },
        body: JSON.stringify(updateBody(env, { ui_mode: "Modern" })),
      });
    expect((await stale()).status).toBe(412);
    expect(await emu.admin("POST", "settings", { if_match: false })).toEqual({ if_match: false, four_eyes: false, opaque_tokens: false, version_step: 1 });
    expect((await stale()).status).toBe(200);
    expect((await api(emu.url, alice, "GET", TC)).body[0].compliance_spec[0].ui_mode).toBe("Modern");
    await expect(emu.admin("POST", "settings", { if_match: "no" })).rejects.toThrow(/400 .*if_match must be true or false/);
    await emu.reset();
    expect(await emu.admin("GET", "settings")).toEqual({ if_match: true, four_eyes: false, opaque_tokens: false, version_step: 1 });
    await expect(emu.admin("POST", "settings", { version_step: 0 })).rejects.toThrow(/400 .*version_step must be a whole number, 1 or more/);
  });
});

describe("SSP (4.3 to 4.7)", () => {
  it("GET: all policies without batches; one policy with its batches; one batch with its values", async () => {
    const all = await api(emu.url, alice, "GET", SSP);
    expect(all.body.map((e: any) => e.compliance_name)).toEqual([
      "Hardware SSP",
      "Software Subscriptions SSP",
      "Professional Services SSP",
      "Support Renewals SSP",
    ]);
    expect(all.body[0].compliance_spec[0].batches).toBeUndefined();
    const one = await api(emu.url, alice, "GET", `${SSP}?policy_name=Hardware%20SSP`);
    expect(one.body[0].compliance_spec[0].batches.map((b: any) => b.status)).toEqual(["approved", "reviewed", "file uploaded"]);
    const batch = await api(emu.url, alice, "GET", `${SSP}?policy_name=Hardware%20SSP&batch_name=FY26-H1`);
    expect(batch.body[0].compliance_spec[0].entity_type).toBe("batch");
    expect(batch.body[0].compliance_spec[0].ssp_values).toHaveLength(12);
    expect((await api(emu.url, alice, "GET", `${SSP}?policy_name=Nope`)).status).toBe(404);
    expect((await api(emu.url, alice, "GET", `${SSP}?batch_name=Nope`)).status).toBe(404);
  });

  it("creates by formula and by upload (with batches); a duplicate name is 409", async () => {
    const res = await api(emu.url, alice, "POST", SSP, sspCreateBody("Formula One"));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ compliance_id: expect.any(String), error: [], compliance_details: [{ error: [], unique_key: "Formula One" }] });
    const up = sspCreateBody("Upload One", {
      method: "upload",
      expression: "",
      batches: [
        {
          batch_name: "B1",
          effective_start_date: "2026-01-01",
          effective_end_date: "2026-06-30",
          ssp_values: [
            {
              product_id: "P1",
              currency_code: "USD",
              value_type: "Percent",
              below_mid_point: 1,
              mid_point: 2,
              above_mid_point: 3,
              effective_start_date: "2026-01-01",
              effective_end_date: "2026-06-30",
            },
          ],
        },
      ],
    });
    expect((await api(emu.url, alice, "POST", SSP, up)).status).toBe(200);
    const b = await api(emu.url, alice, "GET", `${SSP}?policy_name=Upload%20One&batch_name=B1`);
    expect(b.body[0].compliance_spec[0]).toMatchObject({ status: "file uploaded", ssp_values: [{ product_id: "P1", ssp_value_id: expect.any(String) }] });
    const dup = await api(emu.url, alice, "POST", SSP, sspCreateBody("Formula One"));
    expect(dup.status).toBe(409);
  });

  it("400 for a formula without expression, floor above ceiling, or a missing field", async () => {
    expect((await api(emu.url, alice, "POST", SSP, sspCreateBody("X", { expression: "" }))).body.error[0].field).toBe("compliance_spec.0.expression");
    expect((await api(emu.url, alice, "POST", SSP, sspCreateBody("X", { floor_percentage: 120 }))).status).toBe(400);
    const missing = sspCreateBody("X");
    delete missing.compliance_spec[0].hierarchy_no;
    const r = await api(emu.url, alice, "POST", SSP, missing);
    expect(r.status).toBe(400);
    expect(r.body.error).toContainEqual({ field: "compliance_spec.0.hierarchy_no", message: "is required" });
  });

  it("batch lifecycle: review then approve; approve before review, repeats and formula policies are 409", async () => {
    const p = `${SSP}/approve/SSP-HW/FY26-H2`;
    expect((await api(emu.url, alice, "PATCH", p)).status).toBe(409);
    expect((await api(emu.url, alice, "PATCH", `${SSP}/review/SSP-HW/FY26-H2`)).status).toBe(200);
    expect((await api(emu.url, alice, "PATCH", `${SSP}/review/SSP-HW/FY26-H2`)).status).toBe(409);
    const ok = await api(emu.url, alice, "PATCH", p);
    expect(ok.body.compliance_details[0]).toMatchObject({ unique_key: "Hardware SSP", error: [] });
    const batch = await api(emu.url, alice, "GET", `${SSP}?policy_name=Hardware%20SSP&batch_name=FY26-H2`);
    expect(batch.body[0].compliance_spec[0].status).toBe("approved");
    expect((await api(emu.url, alice, "PATCH", `${SSP}/review/SSP-PS/any`)).status).toBe(409);
    expect((await api(emu.url, alice, "PATCH", `${SSP}/review/SSP-HW/nope`)).status).toBe(404);
    expect((await api(emu.url, alice, "PATCH", `${SSP}/review/NOPE/FY26-H2`)).status).toBe(404);
    expect((await api(emu.url, alice, "PATCH", `${SSP}/publish/SSP-HW/FY26-H2`)).status).toBe(404);
  });

  it("download returns the batch's CSV; template returns the header and an example row", async () => {
    const d = await api(emu.url, alice, "GET", `${SSP}/download/FILE-SSP-HW-2`);
    expect(d.status).toBe(200);
    expect(String(d.body).split("\n")[1]).toBe("HW-1000,USD,Percent,93,103,113,2026-01-01,2026-06-30");
    expect((await api(emu.url, alice, "GET", `${SSP}/download/NOPE`)).status).toBe(404);
    const t = await api(emu.url, alice, "GET", `${SSP}/template?batch_name=FY26-H1`);
    expect(String(t.body).split("\n")[0]).toBe(
      "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date",
    );
    expect(String(t.body).split("\n")).toHaveLength(3);
    expect((await api(emu.url, alice, "GET", `${SSP}/template?batch_name=Nope`)).status).toBe(404);
  });
});

describe("approvals (4.8, 4.9, rules 3.1)", () => {
  const ACTION = "/apis/oingest-approval/v1/action";
  it("lists only Pending Approval records with is_own_upload per caller", async () => {
    const a = await api(emu.url, alice, "GET", "/apis/oingest-approval/v1/pending");
    expect(a.body.total_records).toBe(5);
    expect(a.body.records.every((r: any) => r.status === "Pending Approval")).toBe(true);
    expect(a.body.records.filter((r: any) => r.is_own_upload).map((r: any) => r.approval_id)).toEqual(["APR-0001", "APR-0002", "APR-0005"]);
    const b = await api(emu.url, bob, "GET", "/apis/oingest-approval/v1/pending");
    expect(b.body.records.some((r: any) => r.is_own_upload)).toBe(false);
  });

  it("an uploader approving their own file is 403 and the record stays pending", async () => {
    const r = await api(emu.url, alice, "POST", ACTION, { action: "Approved", comments: "mine", approval_ids: ["APR-0001"] });
    expect(r.status).toBe(403);
    const p = await api(emu.url, alice, "GET", "/apis/oingest-approval/v1/pending");
    expect(p.body.records.map((x: any) => x.approval_id)).toContain("APR-0001");
  });

  it("the uploader may reject their own file; another user may approve it; processed_count counts changes", async () => {
    const rej = await api(emu.url, alice, "POST", ACTION, { action: "Rejected", comments: "wrong file", approval_ids: ["APR-0002"] });
    expect(rej.body).toMatchObject({ processed_count: 1, status: "success" });
    const ok = await api(emu.url, bob, "POST", ACTION, { action: "Approved", comments: "checked", approval_ids: ["APR-0001", "APR-0003"] });
    expect(ok.body).toMatchObject({ processed_count: 2, status: "success", message: expect.stringMatching(/approved/) });
    const again = await api(emu.url, bob, "POST", ACTION, { action: "Approved", comments: "checked", approval_ids: ["APR-0001"] });
    expect(again.status).toBe(409);
    expect((await api(emu.url, bob, "GET", "/apis/oingest-approval/v1/pending")).body.total_records).toBe(2);
  });

  it("comments are mandatory; unknown ids 404; a user without an approval role 403", async () => {
    expect((await api(emu.url, bob, "POST", ACTION, { action: "Approved", approval_ids: ["APR-0003"] })).status).toBe(400);
    expect((await api(emu.url, bob, "POST", ACTION, { action: "Approved", comments: " ", approval_ids: ["APR-0003"] })).status).toBe(400);
    expect((await api(emu.url, bob, "POST", ACTION, { action: "Approved", comments: "x", approval_ids: ["APR-9999"] })).status).toBe(404);
    const carol = await token(emu.url, "carol");
    expect((await api(emu.url, carol, "POST", ACTION, { action: "Approved", comments: "x", approval_ids: ["APR-0001"] })).status).toBe(403);
  });
});

describe("error transactions (4.10)", () => {
  const E = "/apis/errortransactions/v1/";
  const ids = async (filter: object) => (await api(emu.url, alice, "POST", E, filter)).body[0].compliance_spec.map((r: any) => r.error_id);
  it("filters by every field, dates inclusive, total_records a string", async () => {
    const all = await api(emu.url, alice, "POST", E, { transaction_type: "order" });
    expect(all.body[0].total_records).toBe("6");
    expect(await ids({ transaction_type: "order", error_from_date: "2026-10-03", error_to_date: "2026-10-15" })).toEqual([
      "E-00002",
      "E-00003",
      "E-00004",
      "E-00005",
    ]);
    expect(await ids({ transaction_type: "order", error_warning_code: "ERR-00015" })).toEqual(["E-00001", "E-00002", "E-00003"]);
    expect(await ids({ transaction_type: "order", error_warning_type: "discarded" })).toEqual(["E-00005", "E-00006"]);
    expect(await ids({ transaction_type: "order", error_request_id: "REQ-1001" })).toEqual(["E-00001", "E-00002"]);
    expect(await ids({ transaction_type: "order", financial_id: "OF-50010" })).toEqual(["E-00004"]);
    expect(await ids({ transaction_type: "order", legal_entity: "DE01" })).toEqual(["E-00003", "E-00005"]);
    expect(await ids({ transaction_type: "invoice" })).toEqual(["E-00007", "E-00008"]);
  });
  it("400 without transaction_type, with a bad date or from after to", async () => {
    expect((await api(emu.url, alice, "POST", E, {})).status).toBe(400);
    expect((await api(emu.url, alice, "POST", E, { transaction_type: "order", error_from_date: "10/01/2026" })).status).toBe(400);
    expect((await api(emu.url, alice, "POST", E, { transaction_type: "order", error_from_date: "2026-10-05", error_to_date: "2026-10-01" })).status).toBe(400);
  });
});

describe("transport rules", () => {
  it("malformed JSON is 400, a body over 1 MiB is 413, an unknown path is 404 with JSON, never a 5xx", async () => {
    expect((await api(emu.url, alice, "POST", SSP, undefined, "{not json")).status).toBe(400);
    const big = await api(emu.url, alice, "POST", SSP, undefined, JSON.stringify({ x: "a".repeat(1_100_000) }));
    expect(big.status).toBe(413);
    const res = await fetch(`${emu.url}/apis/nothing/here`, { headers: { authorization: `Bearer ${alice}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).message).toMatch(/no such endpoint/);
    expect((await api(emu.url, alice, "DELETE", TC)).status).toBe(405);
  });
});

describe("admin and faults", () => {
  it("uploads add a pending approval and, for SSP, a batch", async () => {
    const r: any = await emu.admin("POST", "uploads", { type: "ssp", policy_name: "Hardware SSP", batch_name: "FY27-H1", uploaded_by: "carol", values: [] });
    expect(r.batch.status).toBe("file uploaded");
    // As the README documents: the same batch name again is 409, a missing required field 400.
    const post = (body: object) => fetch(`${emu.url}/__admin/uploads`, { method: "POST", body: JSON.stringify(body) });
    expect((await post({ type: "ssp", policy_name: "Hardware SSP", batch_name: "FY27-H1" })).status).toBe(409);
    expect((await post({ type: "ssp", policy_name: "Hardware SSP" })).status).toBe(400);
    const p = await api(emu.url, alice, "GET", "/apis/oingest-approval/v1/pending");
    expect(p.body.records.map((x: any) => x.approval_id)).toContain(r.approval.approval_id);
    await emu.admin("POST", "uploads", { type: "order", file_name: "o.csv", uploaded_by: "alice", rows: 3 });
    expect((await api(emu.url, alice, "GET", "/apis/oingest-approval/v1/pending")).body.total_records).toBe(7);
  });

  it("an upload with a malformed value row (or field) is refused 400, naming the row and what is wrong, and nothing is stored", async () => {
    // A row as the seeded tenant holds it, without the id the service assigns.
    const seeded = (await emu.admin("GET", "state")) as any;
    const { ssp_value_id: _id, ...row } = seeded.tenants[0].ssp.find((p: any) => p.compliance_name === "Hardware SSP").batches[0].ssp_values[0];
    const { product_id: _gone, ...noProduct } = row;
    const post = async (body: object) => {
      const r = await fetch(`${emu.url}/__admin/uploads`, { method: "POST", body: JSON.stringify(body) });
      return { status: r.status, message: ((await r.json()) as { message: string }).message };
    };
    const before = await emu.admin("GET", "state");
    const ssp = (values: unknown) => ({ type: "ssp", policy_name: "Hardware SSP", batch_name: "FY27-BAD", values });
    expect(await post(ssp([row, { ...row, mid_point: "100" }]))).toEqual({
      status: 400,
      message: "values[1] is not an SSP value row: values[1].mid_point must be integer",
    });
    expect(await post(ssp([null]))).toEqual({ status: 400, message: "values[0] is not an SSP value row: values[0] must be object" });
    expect(await post(ssp([noProduct]))).toEqual({ status: 400, message: "values[0] is not an SSP value row: values[0].product_id is required" });
    expect(await post(ssp([{ ...row, note: "x" }]))).toEqual({
      status: 400,
      message: "values[0] is not an SSP value row: values[0].note is not an allowed field",
    });
    expect(await post(ssp([{ ...row, value_type: "Ratio" }]))).toEqual({
      status: 400,
      message: 'values[0] is not an SSP value row: values[0].value_type must be one of "Amount", "Percent"',
    });
    expect(await post(ssp("HW-9000,USD"))).toEqual({ status: 400, message: "values must be a list of SSP value rows" });
    expect(await post({ ...ssp([row]), csv: 7 })).toEqual({ status: 400, message: "csv must be a string" });
    expect(await post({ type: "order", rows: -1 })).toEqual({ status: 400, message: "rows must be a whole number, 0 or more" });
    expect(await post({ type: "order", rows: "3" })).toEqual({ status: 400, message: "rows must be a whole number, 0 or more" });
    // Nothing stored: no batch, no approval, no id spent.
    expect(await emu.admin("GET", "state")).toEqual(before);
    expect((await post(ssp([row]))).status).toBe(200);
  });

  it("latency, status, rate_limit with Retry-After, error_array and the request journal", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "latency", latency_ms: 150, times: 1 }] });
    const t0 = Date.now();
    await api(emu.url, alice, "GET", TC);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    await emu.admin("POST", "faults", { faults: [{ kind: "status", status: 503, times: 1 }] });
    expect((await api(emu.url, alice, "GET", TC)).status).toBe(503);
    expect((await api(emu.url, alice, "GET", TC)).status).toBe(200);
    await emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", retry_after: 7, times: 1 }] });
    const limited = await fetch(`${emu.url}${TC}`, { headers: { authorization: `Bearer ${alice}` } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    await emu.admin("POST", "faults", { faults: [{ kind: "error_array", method: "POST", path: "/ssp", times: 1 }] });
    const ea = await api(emu.url, alice, "POST", SSP, sspCreateBody("Never"));
    expect(ea.status).toBe(200);
    expect(ea.body.error.length).toBeGreaterThan(0);
    expect((await api(emu.url, alice, "GET", `${SSP}?policy_name=Never`)).status).toBe(404);
    const journal: any[] = await emu.admin("GET", "requests");
    expect(journal.some((j) => j.status === 503 && j.fault === "status")).toBe(true);
  });

  it("rate_limit with a rate: a token bucket (burst full at the start, then 429 at once), Retry-After its own or none", async () => {
    // 0.1 a second: no token comes back while the test runs.
    await emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", rate: 0.1, burst: 2, path: "/apis/" }] });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await api(emu.url, alice, "GET", TC)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const limited = await fetch(`${emu.url}${TC}`, { headers: { authorization: `Bearer ${alice}` } });
    expect(limited.headers.get("retry-after")).toBe("10");
    await emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", rate: 0.1, burst: 1, retry_after: null }] });
    expect((await api(emu.url, alice, "GET", TC)).status).toBe(200);
    const bare = await fetch(`${emu.url}${TC}`, { headers: { authorization: `Bearer ${alice}` } });
    expect(bare.status).toBe(429);
    expect(bare.headers.get("retry-after")).toBeNull();
    const journal: any[] = await emu.admin("GET", "requests");
    expect(journal.filter((j) => j.status === 429).every((j) => j.fault === "rate_limit")).toBe(true);
    const bad = await fetch(`${emu.url}/__admin/faults`, { method: "POST", body: JSON.stringify({ faults: [{ kind: "rate_limit", rate: 0 }] }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toBe("faults[0].rate must be a number of requests per second above 0");
  });

  it("a latency fault holds a request until the faults are cleared; one held across a reset is dropped, neither applied nor journaled", async () => {
    const hold = { kind: "latency", latency_ms: 600_000, method: "PATCH", times: 1 };
    // The emulator says when it holds the request: its fault's hit.
    const held = async (): Promise<void> => {
      while ((await emu.admin<{ faults: { hits: number }[] }>("GET", "faults")).faults[0]?.hits !== 1);
    };
    const live = async () => (await api(emu.url, alice, "GET", TC)).body[0];
    await emu.admin("POST", "faults", hold);
    const patch = api(emu.url, alice, "PATCH", `${TC}/TC-0001`, updateBody(await live(), { ui_mode: "Modern" }));
    await held();
    await emu.admin("DELETE", "faults");
    expect((await patch).status).toBe(200);

    await emu.admin("POST", "faults", hold);
    const lost = api(emu.url, alice, "PATCH", `${TC}/TC-0001`, updateBody(await live(), { carves_allocation: true })).catch((e: Error) => e);
    await held();
    await emu.reset();
    expect(await lost).toBeInstanceOf(Error);
    expect(await emu.admin("GET", "requests")).toEqual([]);
    const after = await api(emu.url, await token(emu.url, "alice"), "GET", TC);
    expect(after.body[0].compliance_spec[0]).toMatchObject({ ui_mode: "Classic", carves_allocation: false });
  });

  it("drop before commit writes nothing; drop after commit keeps the write", async () => {
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "POST", times: 1 }] });
    await expect(api(emu.url, alice, "POST", SSP, sspCreateBody("Dropped"))).rejects.toThrow();
    expect((await api(emu.url, alice, "GET", `${SSP}?policy_name=Dropped`)).status).toBe(404);
    await emu.admin("POST", "faults", { faults: [{ kind: "drop", method: "POST", after_commit: true, times: 1 }] });
    await expect(api(emu.url, alice, "POST", SSP, sspCreateBody("Kept"))).rejects.toThrow();
    expect((await api(emu.url, alice, "GET", `${SSP}?policy_name=Kept`)).status).toBe(200);
  });

  it("the admin endpoints refuse a bad fault", async () => {
    const res = await fetch(`${emu.url}/__admin/faults`, { method: "POST", body: JSON.stringify({ faults: [{ kind: "meteor" }] }) });
    expect(res.status).toBe(400);
    // The type is named by `kind`, as the README says: `type` is not read.
    const typed = await fetch(`${emu.url}/__admin/faults`, { method: "POST", body: JSON.stringify({ faults: [{ type: "latency" }] }) });
    expect(typed.status).toBe(400);
    expect(((await typed.json()) as { message: string }).message).toMatch(/^faults\[0\]\.kind must be one of latency, /);
  });
});
