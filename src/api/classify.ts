import { ApiError, type ServiceProblem } from "../errors.js";
import { apiValidator, fileValidator } from "../schema/ajv.js";
import { parseJson } from "../number.js";
import { unknownValues, type UnknownValue } from "./vocabulary.js";

/** What a request is, for what its answers mean (README, Reliability):
 *  - read: a GET, or a POST that only reads; sending it again changes nothing.
 *  - write: a PATCH (an update, a review or approve), which changes a state in place;
 *  - write-once: a POST that makes something (an SSP policy, an approval action).
 *  Both kinds of write go through the write unit (src/api/write.ts), which decides from these verdicts
 *  whether to read back, guard and send again; the kind sets their budget and how a 5xx reads. */
export type RequestKind = "read" | "write" | "write-once";

export interface RequestShape {
  method: "GET" | "POST" | "PATCH";
  path: string;
  kind: RequestKind;
  /** Definition of schemas/api.schema.json the JSON answer must match, or a schema document a resource
   *  kind brings for its own answers; "bytes" for a file (CSV). */
  schema: string | "bytes" | object;
  /** A 2xx answer without a body (204, or an empty 201) is success: the caller does not need the answer. */
  emptyOk?: boolean;
  /** What the request reads, in words (`SSP policy "Hardware SSP", batch "FY26-H1"`): an answer of the
   *  wrong shape is named by it where the answer itself names nothing along the wrong field's path. */
  about?: string;
  /** What the answer lists by compliance_name, in words, for an answer of the wrong shape (default "SSP
   *  policy"): each kind names its own. */
  listed?: string;
}

/** One send's answer as the transport got it: a status, its Retry-After and body, or none at all. */
export type Answer =
  /** `reauth`: a write's 401 (not processed); the token was dropped, and the write goes back to its guard. */
  | { status: number; retryAfter?: string; body: Buffer; reauth?: boolean }
  /** No answer: `unsent` when the connection failed before the request could reach the service;
   *  `notTls` when the server does not speak TLS (an https URL for an http server), which sending again
   *  cannot change. */
  | { lost: string; unsent?: boolean; notTls?: boolean };

/** What came before this send of the request. */
export interface Attempt {
  /** An earlier send of this write may have landed (its answer was lost, or a 5xx). */
  mayHaveLanded: boolean;
}

/** What an answer means, decided without side effects. ok: use the body. refused: final, never sent
 *  again. busy: the service did not process it (429, 503). unknown: it may have been processed. */
export type Verdict =
  | { outcome: "ok"; body: unknown; unknownValues: UnknownValue[] }
  | {
      outcome: "refused" | "busy" | "unknown";
      err: ApiError;
      /** May be sent again as it is (a write-once: without reading back first). */
      retryable: boolean;
      /** A write that may have landed: settled by reading back, never by sending again blindly. */
      outcomeUnknown: boolean;
      /** 429: the service's rate limit. The rate governor slows down; the send spends no budget. */
      throttled: boolean;
      /** The wait the service asked for (Retry-After), in ms. */
      waitMs?: number;
    };

/** Statuses after which reads and PATCHes are sent again (README, Reliability). */
export const RETRY_STATUS: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);
/** Statuses that say the request was turned away before any processing. */
export const BUSY_STATUS: ReadonlySet<number> = new Set([429, 503]);

export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  const v = header?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function problemsOf(body: unknown): ServiceProblem[] {
  const out: ServiceProblem[] = [];
  // The same problem given twice (in the answer's error array and in its details' too) is said once.
  const seen = new Set<string>();
  const add = (p: ServiceProblem): void => {
    const key = JSON.stringify([p.field ?? null, p.message]);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(p);
  };
  const push = (e: unknown): void => {
    if (typeof e === "string") add({ message: e });
    else if (e && typeof e === "object") {
      const o = e as Record<string, unknown>;
      const message = typeof o.message === "string" ? o.message : JSON.stringify(e);
      add(typeof o.field === "string" ? { field: o.field, message } : { message });
    }
  };
  if (body && typeof body === "object" && !Array.isArray(body)) {
    const b = body as { error?: unknown; compliance_details?: unknown };
    if (Array.isArray(b.error)) b.error.forEach(push);
    if (Array.isArray(b.compliance_details)) {
      for (const d of b.compliance_details as { error?: unknown }[]) if (Array.isArray(d?.error)) d.error.forEach(push);
    }
  }
  return out;
}

/** Why a write was read back, in words for its report: the answer that left its outcome unknown. */
export function readBackReason(err: ApiError): string {
  if (err.status === 0) return "the answer was lost";
  if (err.status >= 200 && err.status < 300) return "the answer could not be read";
  return `the service answered ${err.status}`;
}

/** Decides what one answer means for this kind of request (the table of docs/reliability.md, "What
 *  each answer means"; src/api/classify.test.ts holds every row). `now` reads a Retry-After given as a date. */
export function classify(answer: Answer, req: RequestShape, attempt: Attempt, now: number): Verdict {
  const fail = failing(req, attempt);
  if ("lost" in answer) return lost(answer, req, fail);
  const { status } = answer;
  if (answer.reauth) return fail("busy", { status, message: "the token was refused: signing in again" }, { retryable: true, outcomeUnknown: false });
  const ok = status >= 200 && status < 300;
  if (ok && req.schema === "bytes") return { outcome: "ok", body: answer.body, unknownValues: [] };
  const text = answer.body.toString("utf8");
  // A 2xx to a write that cannot be read was processed all the same: what it did is read back.
  const unreadable = (message: string): Verdict =>
    req.kind !== "read" ? fail("unknown", { status, message: `outcome unknown: ${message}` }, { outcomeUnknown: true }) : fail("refused", { status, message });
  if (ok && text.trim() === "") {
    if (req.emptyOk) return { outcome: "ok", body: undefined, unknownValues: [] };
    return unreadable(`the answer (status ${status}) has no body`);
  }
  const { body, json, marked } = readBody(text);
  const notJson = `the answer is not JSON (status ${status}, first bytes: ${JSON.stringify(text.slice(0, 120))})`;
  if (ok && !json) return unreadable(notJson);
  const problems = json ? problemsOf(body) : [];
  const msg = json ? (body as { message?: unknown } | undefined)?.message : undefined;
  if (!ok) {
    // A gateway's own page (HTML) says nothing more than its status, unless the status is unusual.
    const fallback = json || RETRY_STATUS.has(status) ? `status ${status}` : notJson;
    const message = typeof msg === "string" ? msg : (problems[0]?.message ?? fallback);
    return notOk({ status, message, problems, retryAfterMs: retryAfterMs(answer.retryAfter, now) }, req, fail);
  }
  // A 2xx answer with an error array is a definite refusal (the interface reports problems in the error array, whatever the status): never sent again.
  if (problems.length) return fail("refused", { status, message: typeof msg === "string" && msg ? msg : "the service reported errors", problems });
  const fn = typeof req.schema === "object" ? fileValidator(req.schema) : apiValidator(req.schema);
  if (!fn(body)) {
    const e = fn.errors?.[0];
    const where = e?.instancePath ? `field ${e.instancePath}` : "the body";
    // The names along the path where they reach a batch, else what the request reads, else the policy named.
    const along = namedAlong(body, e?.instancePath ?? "", req.listed ?? "SSP policy");
    const about = along?.batch !== undefined ? along.words : (req.about ?? along?.words);
    return unreadable(`unexpected answer${about ? ` for ${about}` : ""}: ${where} ${e?.message ?? "does not match the specification"}`);
  }
  const value = marked();
  return { outcome: "ok", body: value, unknownValues: unknownValues(value) };
}

/** The policy (`noun`: what the answer lists by compliance_name, as the request says) and batch an answer names along a field's path (`/0/compliance_spec/0/batches/2/status`:
 *  the policy of envelope 0, the batch of item 2), in words (and the batch's name, where one is named),
 *  so that an answer of the wrong shape says what it was about; undefined where the path passes none. */
function namedAlong(body: unknown, instancePath: string, noun: string): { words: string; batch?: string } | undefined {
  let policy: string | undefined;
  let batch: string | undefined;
  let node = body;
  const look = (): void => {
    if (!node || typeof node !== "object" || Array.isArray(node)) return;
    const o = node as Record<string, unknown>;
    const p = o.compliance_name ?? o.policy_name;
    if (typeof p === "string") policy = p;
    if (typeof o.batch_name === "string") batch = o.batch_name;
    else if (o.entity_type === "batch" && typeof o.name === "string") batch = o.name;
  };
  look();
  for (const part of instancePath.split("/").slice(1)) {
    if (!node || typeof node !== "object") break;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    look();
  }
  if (policy === undefined && batch === undefined) return undefined;
  const words = [policy !== undefined ? `${noun} ${JSON.stringify(policy)}` : undefined, batch !== undefined ? `batch ${JSON.stringify(batch)}` : undefined]
    .filter(Boolean)
    .join(", ");
  return { words, ...(batch !== undefined ? { batch } : {}) };
}

/** An error of the request as an ApiError. */
type ErrorOf = { status: number; message: string; problems?: ServiceProblem[]; retryAfterMs?: number };

/** A verdict other than ok, for this request. */
type Fail = (outcome: "refused" | "busy" | "unknown", err: ErrorOf, o?: { retryable?: boolean; outcomeUnknown?: boolean; throttled?: boolean }) => Verdict;

/** The verdicts other than ok of one request: a refusal after a send that may have landed may be the
 *  service meeting that send's effect, so a write's outcome is unknown then unless said otherwise. */
function failing(req: RequestShape, attempt: Attempt): Fail {
  return (outcome, err, o = {}) => {
    const outcomeUnknown = o.outcomeUnknown ?? (req.kind === "write" && attempt.mayHaveLanded);
    const retryable = o.retryable ?? false;
    return {
      outcome,
      err: new ApiError({ method: req.method, path: req.path, ...err, retryable, outcomeUnknown }),
      retryable,
      outcomeUnknown,
      throttled: o.throttled ?? false,
      waitMs: err.retryAfterMs,
    };
  };
}

/** No answer. "connection failed" only where the connection did: a timer that ran out waiting for an
 *  answer says so in its own words ("no answer within …", "no complete answer …"). */
function lost(answer: { lost: string; unsent?: boolean; notTls?: boolean }, req: RequestShape, fail: Fail): Verdict {
  const message = /^no (complete )?answer/.test(answer.lost) ? answer.lost : `connection failed: ${answer.lost}`;
  // The server does not speak TLS: the URL is wrong, and no resend can change that. Nothing was sent.
  if (answer.notTls) return fail("refused", { status: 0, message });
  // Refused before it was sent (nothing listens, no such host): nothing was processed.
  if (answer.unsent) return fail("busy", { status: 0, message }, { retryable: true, outcomeUnknown: false });
  // Sent, perhaps processed: a read is sent again; a PATCH too, and a refusal after it is read back;
  // a write-once is read back before anything else.
  return fail("unknown", { status: 0, message }, { retryable: req.kind !== "write-once", outcomeUnknown: req.kind !== "read" });
}

/** The answer's text as JSON, if it is; `marked`: the value with each number a double cannot hold
 *  exactly kept as its text, not comparable (the one number rule, src/number.ts), for once the
 *  answer's shape is checked. */
function readBody(text: string): { body: unknown; json: boolean; marked: () => unknown } {
  try {
    const parsed = text === "" ? undefined : parseJson(text);
    const body = parsed?.value;
    return { body, json: true, marked: parsed?.inexact ? parsed.marked : () => body };
  } catch {
    return { body: text, json: false, marked: () => text };
  }
}

/** A status other than 2xx: busy (turned away before processing), a 5xx that may have been processed
 *  (reads and PATCHes are sent again on the retry statuses; a write-once is read back first, whatever
 *  the 5xx), or a refusal. */
function notOk(err: ErrorOf, req: RequestShape, fail: Fail): Verdict {
  const { status } = err;
  if (BUSY_STATUS.has(status)) return fail("busy", err, { retryable: true, throttled: status === 429 });
  if (status < 500) return fail("refused", err);
  const again = RETRY_STATUS.has(status);
  if (req.kind === "read") return again ? fail("unknown", err, { retryable: true }) : fail("refused", err);
  if (req.kind === "write") return again ? fail("unknown", err, { retryable: true, outcomeUnknown: true }) : fail("refused", err, { outcomeUnknown: true });
  return fail("unknown", err, { outcomeUnknown: true });
}
