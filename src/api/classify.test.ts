import { describe, expect, it } from "vitest";
import { classify, readBackReason, retryAfterMs, type Answer, type RequestKind, type Verdict } from "./classify.js";

// Every row of the table of docs/reliability.md, for the three kinds of request: what an answer means
// (ok, refused, busy, unknown), whether the request may be sent again as it is, whether a write may
// have landed (then it is settled by reading back), and whether the governor hears a 429.

const json = (status: number, body: unknown, retryAfter?: string): Answer => ({ status, retryAfter, body: Buffer.from(JSON.stringify(body)) });
const text = (status: number, body: string): Answer => ({ status, body: Buffer.from(body) });
const UPDATE = { compliance_id: "TC-1", compliance_details: [], error: [] };
const refusal = (status: number) => json(status, { status, message: `refused ${status}`, error: [{ message: `refused ${status}` }] });

/** ok | refused | busy+ (may be sent again) | unknown+ (sent again) | unknown? (read back first) |
 *  refused? (refused, but may have landed: read back). */
type Row = "ok" | "refused" | "busy+" | "unknown+" | "unknown?" | "refused?";

const ROWS: [string, Answer, Record<RequestKind, Row>][] = [
  ["2xx matching its schema", json(200, UPDATE), { read: "ok", write: "ok", "write-once": "ok" }],
  ["2xx with an error array", json(200, { ...UPDATE, error: [{ message: "no" }] }), { read: "refused", write: "refused", "write-once": "refused" }],
  ["2xx that is not JSON", text(200, "<html>gateway"), { read: "refused", write: "unknown?", "write-once": "unknown?" }],
  ["2xx off its schema", json(200, { compliance_id: 7 }), { read: "refused", write: "unknown?", "write-once": "unknown?" }],
  ["2xx without a body where one is needed", text(200, ""), { read: "refused", write: "unknown?", "write-once": "unknown?" }],
  ["429", json(429, { status: 429, message: "too many requests" }), { read: "busy+", write: "busy+", "write-once": "busy+" }],
  ["503", refusal(503), { read: "busy+", write: "busy+", "write-once": "busy+" }],
  ["500", refusal(500), { read: "unknown+", write: "unknown+", "write-once": "unknown?" }],
  ["502 (a gateway's page)", text(502, "<html>bad gateway</html>"), { read: "unknown+", write: "unknown+", "write-once": "unknown?" }],
  ["504", refusal(504), { read: "unknown+", write: "unknown+", "write-once": "unknown?" }],
  ["a lost connection", { lost: "ECONNRESET" }, { read: "unknown+", write: "unknown+", "write-once": "unknown?" }],
  ["another 5xx (501)", refusal(501), { read: "refused", write: "refused?", "write-once": "unknown?" }],
  ["400", refusal(400), { read: "refused", write: "refused", "write-once": "refused" }],
  ["401 (after the one re-sign-in)", refusal(401), { read: "refused", write: "refused", "write-once": "refused" }],
  ["404", refusal(404), { read: "refused", write: "refused", "write-once": "refused" }],
  ["409", refusal(409), { read: "refused", write: "refused", "write-once": "refused" }],
  ["412", refusal(412), { read: "refused", write: "refused", "write-once": "refused" }],
];

function shape(v: Verdict): Row {
  if (v.outcome === "ok") return "ok";
  if (v.outcome === "busy") return v.retryable && !v.outcomeUnknown ? "busy+" : (`busy?` as Row);
  if (v.outcome === "unknown") return v.retryable ? "unknown+" : "unknown?";
  return v.outcomeUnknown ? "refused?" : "refused";
}

const req = (kind: RequestKind) =>
  ({ method: kind === "read" ? "GET" : kind === "write" ? "PATCH" : "POST", path: "/apis/x", kind, schema: "UpdateResult" }) as const;

describe("classify: what an answer means, per kind of request", () => {
  for (const [label, answer, expected] of ROWS) {
    for (const kind of ["read", "write", "write-once"] as const) {
      it(`${label}: ${kind} → ${expected[kind]}`, () => {
        const v = classify(answer, req(kind), { mayHaveLanded: false }, 0);
        expect(shape(v)).toBe(expected[kind]);
        if (v.outcome !== "ok") {
          expect(v.err.outcomeUnknown).toBe(v.outcomeUnknown);
          // A read is never "outcome unknown": sending it again changes nothing.
          if (kind === "read") expect(v.outcomeUnknown).toBe(false);
        }
      });
    }
  }

  it("only a 429 is heard by the governor as the service's limit", () => {
    for (const [label, answer] of ROWS) {
      const v = classify(answer, req("read"), { mayHaveLanded: false }, 0);
      expect(v.outcome !== "ok" && v.throttled, label).toBe(label === "429");
    }
  });

  it("after a send of a PATCH that may have landed, any refusal is 'outcome unknown' (read back); a read's or a write-once's is not", () => {
    for (const status of [400, 409, 412]) {
      expect(shape(classify(refusal(status), req("write"), { mayHaveLanded: true }, 0))).toBe("refused?");
      expect(shape(classify(refusal(status), req("read"), { mayHaveLanded: true }, 0))).toBe("refused");
      expect(shape(classify(refusal(status), req("write-once"), { mayHaveLanded: true }, 0))).toBe("refused");
    }
    expect(shape(classify(json(200, { ...UPDATE, error: [{ message: "already" }] }), req("write"), { mayHaveLanded: true }, 0))).toBe("refused?");
  });

  it("an empty 2xx is success where the answer is not needed; a file is its bytes, whatever they are", () => {
    const empty = classify(text(204, ""), { ...req("write"), emptyOk: true }, { mayHaveLanded: false }, 0);
    expect(empty).toEqual({ outcome: "ok", body: undefined, unknownValues: [] });
    const file = classify(text(200, "a,b\n1,2\n"), { ...req("read"), schema: "bytes" }, { mayHaveLanded: false }, 0);
    expect(file.outcome === "ok" && (file.body as Buffer).toString()).toBe("a,b\n1,2\n");
  });

  it("an unreadable 2xx to a write says 'outcome unknown' with what was wrong", () => {
    const v = classify(text(200, "<html>gateway"), req("write"), { mayHaveLanded: false }, 0);
    expect(v.outcome !== "ok" && v.err.message).toBe(
      'PATCH /apis/x failed (200): outcome unknown: the answer is not JSON (status 200, first bytes: "<html>gateway")',
    );
  });

  it("why a write was read back, in words for its report", () => {
    const why = (a: Answer) => {
      const v = classify(a, req("write-once"), { mayHaveLanded: false }, 0);
      return v.outcome === "ok" ? "ok" : readBackReason(v.err);
    };
    expect(why({ lost: "ECONNRESET" })).toBe("the answer was lost");
    expect(why(text(200, "<html>gateway"))).toBe("the answer could not be read");
    expect(why(refusal(500))).toBe("the service answered 500");
    expect(why(refusal(409))).toBe("the service answered 409");
  });

  it("a problem given both in the answer's error array and in its details' is said once", () => {
    const errors = [{ field: "If-Match", message: "the resource is at version_id 3" }];
    const body = { compliance_id: "", compliance_details: [{ error: errors, message: "stale", unique_key: "" }], error: errors, message: "stale" };
    const v = classify(json(200, body), req("write"), { mayHaveLanded: false }, 0);
    expect(v.outcome).toBe("refused");
    if (v.outcome === "ok") return;
    expect(v.err.problems).toEqual(errors);
    expect(v.err.message.match(/If-Match: the resource is at version_id 3/g)).toHaveLength(1);
  });

  it("Retry-After in seconds or as an HTTP date becomes the verdict's wait", () => {
    const now = Date.parse("2026-11-23T10:00:00Z");
    const seconds = classify(json(429, {}, "3"), req("read"), { mayHaveLanded: false }, now);
    expect(seconds.outcome !== "ok" && seconds.waitMs).toBe(3000);
    const date = classify(json(429, {}, "Mon, 23 Nov 2026 10:00:05 GMT"), req("read"), { mayHaveLanded: false }, now);
    expect(date.outcome !== "ok" && date.waitMs).toBe(5000);
    expect(retryAfterMs("Mon, 23 Nov 2026 09:59:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});
