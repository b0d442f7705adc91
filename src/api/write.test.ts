import { describe, expect, it } from "vitest";
import { ApiError } from "../errors.js";
import { ApiCore } from "./core.js";
import type { Dispatcher } from "./http.js";
import { NOTHING_SENT_FOR_IT, runWrite, type ReadBack, type WriteOutcome } from "./write.js";

// The write unit, table-driven: every (first send / resend) x answer, through the real HTTP core and the
// real classification of answers, with a scripted network underneath (a dispatcher that answers each
// send as the row says) and virtual time.

type Reply =
  { status: number; body?: string; headers?: Record<string, string> } | { socket: "before" | "after" } | { unauthorized: "refresh fails" | "refresh works" };

const OK: Reply = { status: 200, body: JSON.stringify({ compliance_id: "SSP-1", compliance_details: [], error: [] }) };
const ANSWERS: Record<string, Reply> = {
  "2xx": OK,
  "2xx unreadable": { status: 200, body: "<html>gateway</html>" },
  "409": { status: 409, body: JSON.stringify({ message: "already exists" }) },
  "412": { status: 412, body: JSON.stringify({ message: "precondition failed" }) },
  "429": { status: 429, body: "{}", headers: { "retry-after": "1" } },
  "503": { status: 503, body: "" },
  "5xx": { status: 500, body: JSON.stringify({ message: "boom" }) },
  "socket before the write": { socket: "before" },
  "socket after the write": { socket: "after" },
  "401, then the token refresh fails": { unauthorized: "refresh fails" },
  "401, then a new token": { unauthorized: "refresh works" },
};

/** One write against a scripted network: `replies` answer its sends in turn (then 200s); `reads` answer
 *  its read-backs in turn ("landed", "not", or "fails"). */
async function scenario(replies: Reply[], reads: ("landed" | "not" | "fails")[], blockAt?: number, check?: "holds" | "undone" | "fails", alreadyAt?: number) {
  let t = 1_000_000;
  let tokenRequests = 0;
  let refreshFails = false;
  const sends: string[] = [];
  const answer = (status: number, body: string, headers: Record<string, string> = {}) =>
    ({ statusCode: status, headers, body: { arrayBuffer: async () => Buffer.from(body), text: async () => body } }) as unknown as Dispatcher.ResponseData;
  const dispatcher = {
    request: async (o: { path: string; method: string }) => {
      if (o.path.includes("/token")) {
        tokenRequests++;
        if (refreshFails) return answer(401, JSON.stringify({ error: "invalid_grant", error_description: "account locked" }));
        return answer(200, JSON.stringify({ access_token: `token-${tokenRequests}`, expires_in: 300, token_type: "Bearer" }));
      }
      const r = replies[sends.length] ?? OK;
      sends.push(o.method);
      if ("socket" in r) {
        const code = r.socket === "before" ? "ECONNREFUSED" : "ECONNRESET";
        throw Object.assign(new Error("fetch failed"), { cause: Object.assign(new Error(code), { code }) });
      }
      if ("unauthorized" in r) {
        refreshFails = r.unauthorized === "refresh fails";
        return answer(401, JSON.stringify({ message: "token expired" }));
      }
      return answer(r.status, r.body ?? "", r.headers);
    },
    close: async () => undefined,
  } as unknown as Dispatcher;
  const core = new ApiCore({
    baseUrl: "http://127.0.0.1:1",
    authUrl: "http://127.0.0.1:1",
    realm: "demo",
    credentials: { kind: "password", clientId: "c", clientSecret: "s", username: "alice", password: "p" },
    clock: { now: () => t, sleep: async (ms: number) => void (t += ms) },
    random: () => 0,
    dispatcher,
    retry: { maxAttempts: 6 },
  });
  let guards = 0;
  let readBacks = 0;
  let checks = 0;
  const outcome: WriteOutcome<unknown> = await runWrite<unknown, null>(core, {
    guard: async () => {
      guards++;
      if (guards === alreadyAt) return { already: "the service holds git's values" };
      return guards === blockAt ? { blocked: `blocked: changed by bob; ${NOTHING_SENT_FOR_IT}` } : { go: null };
    },
    request: () => ({
      method: "POST",
      path: "/apis/policy-sets/v1/policy/ssp",
      body: { name: "x" },
      bodySchema: { type: "object", required: ["name"] },
      kind: "write-once",
      schema: "SspUpdateResult",
    }),
    result: (body) => body,
    readBack: async (): Promise<ReadBack<unknown>> => {
      const r = reads[readBacks++] ?? "not";
      if (r === "fails") throw new ApiError({ method: "GET", path: "/apis/policy-sets/v1/policy/ssp", status: 503, message: "unavailable" });
      return r === "landed" ? { landed: true, result: { compliance_id: "SSP-1" } } : { landed: false };
    },
    maxSends: 6,
    ...(check
      ? {
          check: async () => {
            checks++;
            if (check === "fails") throw new ApiError({ method: "GET", path: "/apis/policy-sets/v1/policy/ssp", status: 503, message: "unavailable" });
            return check === "undone" ? 'overwritten after revsync\'s write by bob at 2026-11-25T12:00:00Z: ui_mode "Modern" -> "Classic"' : undefined;
          },
        }
      : {}),
  });
  return { outcome, sends: sends.length, guards, readBacks, checks };
}

interface Row {
  answer: keyof typeof ANSWERS;
  /** What its read-backs find, in turn. */
  reads?: ("landed" | "not" | "fails")[];
  kind: WriteOutcome<unknown>["kind"];
  sends: number;
  guards: number;
  readBacks: number;
  message?: RegExp;
}

// A first send: no earlier send of this write may have landed.
const FIRST: Row[] = [
  { answer: "2xx", kind: "done", sends: 1, guards: 1, readBacks: 0 },
  // Processed, answer unreadable: read back; it landed.
  { answer: "2xx unreadable", reads: ["landed"], kind: "confirmed", sends: 1, guards: 1, readBacks: 1 },
  // Someone else's work: refused, never read back as "ours".
  { answer: "409", kind: "refused", sends: 1, guards: 1, readBacks: 0, message: /409 conflict/ },
  // The version moved before the send arrived: back to the guard, which reads again; then sent.
  { answer: "412", kind: "done", sends: 2, guards: 2, readBacks: 0 },
  // Turned away unprocessed: the guard runs again before the resend.
  { answer: "429", kind: "done", sends: 2, guards: 2, readBacks: 0 },
  // May have landed: read back first; it did not, so guarded and sent again.
  { answer: "5xx", reads: ["not"], kind: "done", sends: 2, guards: 2, readBacks: 1 },
  { answer: "5xx", reads: ["landed"], kind: "confirmed", sends: 1, guards: 1, readBacks: 1 },
  { answer: "socket before the write", kind: "done", sends: 2, guards: 2, readBacks: 0 },
  { answer: "socket after the write", reads: ["not"], kind: "done", sends: 2, guards: 2, readBacks: 1 },
  {
    answer: "socket after the write",
    reads: ["fails"],
    kind: "unknown",
    sends: 1,
    guards: 1,
    readBacks: 1,
    message: /outcome unknown: .*reading it back failed/,
  },
  // A 401 is not processed: signed in again, the write goes back to its guard before it is sent again;
  // when the new sign-in fails, nothing landed.
  { answer: "401, then a new token", kind: "done", sends: 2, guards: 2, readBacks: 0 },
  { answer: "401, then the token refresh fails", kind: "refused", sends: 1, guards: 2, readBacks: 0, message: /sign-in refused/ },
];

// A resend: the first send's answer was lost after the write (it may have landed), a read-back said it
// had not, and the guard let the resend go; the row is the resend's answer. Read-backs after the first.
const RESEND: Row[] = [
  { answer: "2xx", kind: "done", sends: 2, guards: 2, readBacks: 1 },
  { answer: "2xx unreadable", reads: ["landed"], kind: "confirmed", sends: 2, guards: 2, readBacks: 2 },
  // The refusal may be the service meeting the first send's effect: read back.
  { answer: "409", reads: ["landed"], kind: "confirmed", sends: 2, guards: 2, readBacks: 2 },
  { answer: "409", reads: ["not"], kind: "refused", sends: 2, guards: 2, readBacks: 2 },
  { answer: "412", reads: ["landed"], kind: "confirmed", sends: 2, guards: 2, readBacks: 2 },
  { answer: "412", reads: ["not"], kind: "refused", sends: 2, guards: 2, readBacks: 2 },
  { answer: "429", kind: "done", sends: 3, guards: 3, readBacks: 1 },
  { answer: "5xx", reads: ["not"], kind: "done", sends: 3, guards: 3, readBacks: 2 },
  { answer: "5xx", reads: ["fails"], kind: "unknown", sends: 2, guards: 2, readBacks: 2, message: /outcome unknown/ },
  { answer: "socket before the write", kind: "done", sends: 3, guards: 3, readBacks: 1 },
  { answer: "socket after the write", reads: ["landed"], kind: "confirmed", sends: 2, guards: 2, readBacks: 2 },
  // After a send that may have landed, a failed token refresh is never "refused" unless a read-back
  // shows the write did not land; when the read fails too, the outcome is unknown.
  { answer: "401, then a new token", kind: "done", sends: 3, guards: 3, readBacks: 1 },
  { answer: "401, then the token refresh fails", reads: ["fails"], kind: "unknown", sends: 2, guards: 3, readBacks: 2, message: /outcome unknown/ },
  { answer: "401, then the token refresh fails", reads: ["not"], kind: "refused", sends: 2, guards: 3, readBacks: 2, message: /read back: it did not land/ },
];

describe("the write unit: a first send, by answer", () => {
  it.each(FIRST.map((r) => [r.answer, r.reads?.join(", ") ?? "-", r.kind, r] as const))("%s (read-backs: %s) -> %s", async (_a, _r, _k, row) => {
    const s = await scenario([ANSWERS[row.answer] as Reply], row.reads ?? []);
    expect({ kind: s.outcome.kind, sends: s.sends, guards: s.guards, readBacks: s.readBacks }).toEqual({
      kind: row.kind,
      sends: row.sends,
      guards: row.guards,
      readBacks: row.readBacks,
    });
    if (row.message && (s.outcome.kind === "refused" || s.outcome.kind === "unknown")) expect(s.outcome.error.message).toMatch(row.message);
  });
});

describe("the write unit: a resend after a send that may have landed, by answer", () => {
  it.each(RESEND.map((r) => [r.answer, r.reads?.join(", ") ?? "-", r.kind, r] as const))("%s (read-backs: %s) -> %s", async (_a, _r, _k, row) => {
    const s = await scenario([{ socket: "after" }, ANSWERS[row.answer] as Reply], ["not", ...(row.reads ?? [])]);
    expect({ kind: s.outcome.kind, sends: s.sends, guards: s.guards, readBacks: s.readBacks }).toEqual({
      kind: row.kind,
      sends: row.sends,
      guards: row.guards,
      readBacks: row.readBacks,
    });
    if (row.message && (s.outcome.kind === "refused" || s.outcome.kind === "unknown")) expect(s.outcome.error.message).toMatch(row.message);
  });

  it("the guard before a resend finds someone else's change: blocked, nothing more sent", async () => {
    const s = await scenario([ANSWERS["429"] as Reply], [], 2);
    expect({ kind: s.outcome.kind, sends: s.sends, guards: s.guards }).toEqual({ kind: "blocked", sends: 1, guards: 2 });
  });
});

describe("the write unit: the check after a write that landed", () => {
  it("what the write set still holds: done; undone by someone else's write: overwritten, never done; a check that cannot read: done, saying so", async () => {
    expect((await scenario([OK], [], undefined, "holds")).outcome.kind).toBe("done");
    const undone = await scenario([OK], [], undefined, "undone");
    expect(undone.outcome).toMatchObject({ kind: "overwritten", reason: expect.stringMatching(/^overwritten after revsync's write by bob/) });
    expect(await scenario([OK], [], undefined, "fails")).toMatchObject({
      checks: 1,
      outcome: { kind: "done", unchecked: expect.stringMatching(/^not read again after the write: .*unavailable/) },
    });
  });

  it("a write confirmed by reading back is checked too; one that did not land is not", async () => {
    const confirmed = await scenario([{ socket: "after" }], ["landed"], undefined, "undone");
    expect({ kind: confirmed.outcome.kind, sends: confirmed.sends, checks: confirmed.checks }).toEqual({ kind: "overwritten", sends: 1, checks: 1 });
    const refused = await scenario([ANSWERS["409"] as Reply], [], undefined, "undone");
    expect({ kind: refused.outcome.kind, checks: refused.checks }).toEqual({ kind: "refused", checks: 0 });
  });
});

describe("the write unit: a guard that finds the write's effect", () => {
  it("before any send: already, nothing sent; after a 503 or 429 the service may have processed all the same: confirmed by reading back, never already", async () => {
    const first = await scenario([], [], undefined, undefined, 1);
    expect({ kind: first.outcome.kind, sends: first.sends, readBacks: first.readBacks }).toEqual({ kind: "already", sends: 0, readBacks: 0 });
    for (const answer of ["503", "429"] as const) {
      const s = await scenario([ANSWERS[answer] as Reply], ["landed"], undefined, "holds", 2);
      expect({ kind: s.outcome.kind, sends: s.sends, guards: s.guards, readBacks: s.readBacks, checks: s.checks }).toEqual({
        kind: "confirmed",
        sends: 1,
        guards: 2,
        readBacks: 1,
        checks: 1,
      });
      expect(s.outcome).toMatchObject({ why: `the service answered ${answer}` });
    }
    // The guard finds the effect, reading back does not: unknown, nothing sent again.
    const unsure = await scenario([ANSWERS["503"] as Reply], ["not"], undefined, undefined, 2);
    expect({ kind: unsure.outcome.kind, sends: unsure.sends }).toEqual({ kind: "unknown", sends: 1 });
    if (unsure.outcome.kind === "unknown") expect(unsure.outcome.error.message).toMatch(/outcome unknown: the service answered 503 to a send of this write/);
    // After a send whose answer was lost: the same.
    const lost = await scenario([{ socket: "after" }], ["not", "landed"], undefined, undefined, 2);
    expect({ kind: lost.outcome.kind, sends: lost.sends, readBacks: lost.readBacks }).toEqual({ kind: "confirmed", sends: 1, readBacks: 2 });
  });
});

describe("the write unit: someone else's write met by revsync's own send", () => {
  it("a 412 to the first send, then the guard finds the effect: already, with the status that answered (never 'nothing was sent'), nothing read back", async () => {
    const s = await scenario([ANSWERS["412"] as Reply], [], undefined, undefined, 2);
    expect({ outcome: s.outcome, sends: s.sends, readBacks: s.readBacks }).toEqual({
      outcome: { kind: "already", why: "the service holds git's values", answered: 412 },
      sends: 1,
      readBacks: 0,
    });
  });

  it("a guard that blocks after a send went out says what answered it, never that nothing was sent; before any send, that nothing was", async () => {
    const before = await scenario([], [], 1);
    expect(before.outcome).toEqual({ kind: "blocked", reason: "blocked: changed by bob; nothing was sent for it" });
    for (const answer of ["412", "429"] as const) {
      const after = await scenario([ANSWERS[answer] as Reply], [], 2);
      expect(after.outcome).toEqual({
        kind: "blocked",
        reason: `blocked: changed by bob; nothing more was sent for it (its send: the service answered ${answer})`,
      });
    }
    // A connection refused before the request went out sent nothing.
    const unsent = await scenario([{ socket: "before" }], [], 2);
    expect(unsent.outcome).toEqual({ kind: "blocked", reason: "blocked: changed by bob; nothing was sent for it" });
  });
});
