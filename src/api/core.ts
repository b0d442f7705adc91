import { Agent, EnvHttpProxyAgent, LOOPBACK, request, type Dispatcher } from "./http.js";
import { ApiError, UserError, type ServiceProblem } from "../errors.js";
import { apiValidator } from "../schema/ajv.js";
import { TokenManager, type Credentials } from "./auth.js";
import { systemClock, type Clock } from "./clock.js";
import { unknownValues, type UnknownValue } from "./vocabulary.js";
import { DEFAULT_SERVICE_CHOICES, type ServiceChoices } from "./service-choices.js";

export interface RetryPolicy {
  maxAttempts: number;
  maxTotalMs: number;
  baseMs: number;
  capMs: number;
  /** Caps every wait, Retry-After included (REVSYNC_MAX_RETRY_WAIT_MS; tests use it). */
  maxWaitMs: number;
}

export interface ClientOptions {
  baseUrl: string;
  authUrl: string;
  realm: string;
  credentials: Credentials;
  clock?: Clock;
  random?: () => number;
  log?: (line: string) => void;
  onSecret?: (secret: string) => void;
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number };
  retry?: Partial<RetryPolicy>;
  connections?: number;
  dispatcher?: Dispatcher;
  /** Called for each value of a documented field outside its list (the answer is used as it is). */
  onUnknownValue?: (u: UnknownValue, request: string) => void;
  /** The tenant's choices where the interface is silent (revsync.yaml service:); resources follow them. */
  service?: ServiceChoices;
}

/** read: GET or a POST that only reads; write: PATCH (safe to send again: an If-Match or a read-back on
 *  409 settles a repeat); create: a POST that writes, sent again only after a read says it did not land. */
export type RequestKind = "read" | "write" | "create";

/** The retry budget of one request, counting every send (README, Reliability). */
export const BUDGET = { sends: 6, createSends: 3, totalMs: 120_000 } as const;

export interface RequestSpec {
  method: "GET" | "POST" | "PATCH";
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  kind: RequestKind;
  /** Definition of schemas/api.schema.json the JSON answer must match; "bytes" for a file (CSV). */
  schema: string | "bytes";
  ifMatch?: string;
  /** A 2xx answer without a body (204, or an empty 201) is success: the caller does not need the answer. */
  emptyOk?: boolean;
}

/** What a create's read-back found: nothing, or the result to report (the created resource was found). */
export type ReadBack<T> = { found: false } | { found: true; result: T };

/** One send's outcome, before any retry decision. */
type Sent =
  | { kind: "ok"; body: unknown }
  | { kind: "refused"; err: ApiError }
  /** Not processed: 429, or 503 (the service turned the request away); may be sent again. */
  | { kind: "busy"; err: ApiError; wait: number | undefined }
  /** May have been processed: the connection failed after sending, or a 5xx other than 503. */
  | { kind: "unknown"; err: ApiError; wait: number | undefined };

const RETRY_STATUS = new Set([429, 502, 503, 504]);
/** Statuses that say the request was turned away before any processing. */
const BUSY_STATUS = new Set([429, 503]);

export function checkUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserError(`${name} is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol === "http:" && !LOOPBACK.test(url.hostname)) {
    throw new UserError(`${name} uses http:// for ${url.hostname}: only loopback hosts may use plain http; use https://`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UserError(`${name} must be an http(s) URL, got ${url.protocol}`);
  return url;
}

function hasProxyEnv(): boolean {
  const e = process.env;
  return !!(e.HTTPS_PROXY || e.https_proxy || e.HTTP_PROXY || e.http_proxy);
}

function joinUrl(base: URL, path: string, query?: Record<string, string | undefined>): string {
  const url = new URL(base.href.replace(/\/$/, "") + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

function problemsOf(body: unknown): ServiceProblem[] {
  const out: ServiceProblem[] = [];
  const push = (e: unknown): void => {
    if (typeof e === "string") out.push({ message: e });
    else if (e && typeof e === "object") {
      const o = e as Record<string, unknown>;
      const message = typeof o.message === "string" ? o.message : JSON.stringify(e);
      out.push(typeof o.field === "string" ? { field: o.field, message } : { message });
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

function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** undici wraps the socket error: the cause (ECONNREFUSED, ETIMEDOUT…) is what a person can act on. */
const NOT_TLS = new Set(["ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_PACKET_LENGTH_TOO_LONG", "EPROTO", "ERR_SSL_HTTP_REQUEST"]);
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

export function connectionReason(e: unknown): string {
  const err = e as Error & { code?: string; cause?: Error & { code?: string } };
  const cause = err.cause;
  const code = cause?.code ?? err.code ?? "";
  // TLS failures in plain words: OpenSSL's own text names no cause a person can act on.
  if (NOT_TLS.has(code)) return `the server did not answer TLS: is the URL http? (${code})`;
  if (UNTRUSTED.has(code)) {
    return `the server's TLS certificate is not trusted (${code}): check the URL's host, or give your CA bundle in NODE_EXTRA_CA_CERTS; TLS is always verified`;
  }
  const parts = [err.message, cause?.code ?? err.code, cause?.message].filter((p): p is string => !!p && p !== "fetch failed");
  return [...new Set(parts)].join(": ") || String(e);
}

/** The one HTTP core: token, refresh, retries, timeouts, JSON, schema checks of answers. */
export class ApiCore {
  readonly base: URL;
  readonly auth: TokenManager;
  private readonly tokenUrl: string;
  readonly clock: Clock;
  private readonly random: () => number;
  private readonly log: (line: string) => void;
  private readonly retry: RetryPolicy;
  private readonly dispatcher: Dispatcher;
  private readonly timeouts: { headersMs: number; bodyMs: number };
  private readonly onUnknownValue: (u: UnknownValue, request: string) => void;
  readonly service: ServiceChoices;

  constructor(opts: ClientOptions) {
    this.service = opts.service ?? DEFAULT_SERVICE_CHOICES;
    this.base = checkUrl("base_url", opts.baseUrl);
    const authBase = checkUrl("auth_url", opts.authUrl);
    if (!opts.realm) throw new UserError("no realm: set realm in revsync.yaml or REVSYNC_REALM");
    this.tokenUrl = joinUrl(authBase, `/auth/realms/${encodeURIComponent(opts.realm)}/protocol/openid-connect/token`);
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.log = opts.log ?? (() => undefined);
    this.onUnknownValue = opts.onUnknownValue ?? (() => undefined);
    this.retry = { maxAttempts: BUDGET.sends, maxTotalMs: BUDGET.totalMs, baseMs: 250, capMs: 20_000, maxWaitMs: Infinity, ...opts.retry };
    this.timeouts = { headersMs: opts.timeouts?.headersMs ?? 30_000, bodyMs: opts.timeouts?.bodyMs ?? 60_000 };
    const agentOpts = {
      connect: { timeout: opts.timeouts?.connectMs ?? 10_000 },
      connections: opts.connections ?? 16,
      keepAliveTimeout: 10_000,
    };
    this.dispatcher = opts.dispatcher ?? (hasProxyEnv() ? new EnvHttpProxyAgent(agentOpts) : new Agent(agentOpts));
    this.auth = new TokenManager(opts.credentials, (form) => this.postToken(form), this.clock, opts.onSecret ?? (() => undefined), this.log);
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private backoff(attempt: number, after?: number): number {
    const wait = after ?? Math.floor(this.random() * Math.min(this.retry.capMs, this.retry.baseMs * 2 ** attempt));
    return Math.min(wait, this.retry.maxWaitMs);
  }

  /** The token endpoint: safe to retry (it creates nothing the caller could duplicate). Never logs the form. */
  private async postToken(form: URLSearchParams): Promise<{ status: number; body: unknown }> {
    const started = this.clock.now();
    let last = "";
    for (let attempt = 0; ; attempt++) {
      let status = 0;
      let wait: number | undefined;
      try {
        const res = await request(this.tokenUrl, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
          body: form.toString(),
          dispatcher: this.dispatcher,
          headersTimeout: this.timeouts.headersMs,
          bodyTimeout: this.timeouts.bodyMs,
        });
        status = res.statusCode;
        const text = await res.body.text();
        this.log(`POST /auth/realms/…/token ${status} ${this.clock.now() - started}ms`);
        if (!RETRY_STATUS.has(status)) {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            throw new ApiError({ method: "POST", path: "token endpoint", status, message: `answer is not JSON: ${JSON.stringify(text.slice(0, 80))}` });
          }
          if (status === 200) {
            const fn = apiValidator("TokenResponse");
            if (!fn(body))
              throw new ApiError({
                method: "POST",
                path: "token endpoint",
                status,
                message: `unexpected token response: ${fn.errors?.[0]?.instancePath || "(body)"} ${fn.errors?.[0]?.message ?? ""}`,
              });
          }
          return { status, body };
        }
        wait = retryAfterMs(res.headers["retry-after"], this.clock.now());
        last = `status ${status}`;
      } catch (e) {
        if (e instanceof ApiError) throw e;
        last = connectionReason(e);
        this.log(`POST /auth/realms/…/token failed: ${last}`);
      }
      const delay = this.backoff(attempt, wait);
      if (attempt + 1 >= this.retry.maxAttempts || this.clock.now() - started + delay > this.retry.maxTotalMs) {
        const message = `no usable answer after ${attempt + 1} attempt(s) (last: ${last})`;
        throw new ApiError({ method: "POST", path: "token endpoint", status, message, retryable: true });
      }
      this.log(`retry ${attempt + 1}/${this.retry.maxAttempts - 1} of the token request in ${delay}ms`);
      await this.clock.sleep(delay);
    }
  }

  /** One send (plus one re-authentication after a 401, which the service did not process). */
  private async send(spec: RequestSpec, url: string, attempt: number): Promise<Sent> {
    const shown = `${spec.method} ${spec.path}${spec.query ? new URL(url).search : ""}`;
    for (let reauthed = false; ; reauthed = true) {
      const token = await this.auth.token();
      const t0 = this.clock.now();
      let res: Dispatcher.ResponseData;
      let bytes: Buffer;
      try {
        res = await request(url, {
          method: spec.method,
          headers: {
            authorization: `Bearer ${token}`,
            accept: spec.schema === "bytes" ? "text/csv, */*" : "application/json",
            ...(spec.body !== undefined ? { "content-type": "application/json" } : {}),
            ...(spec.ifMatch ? { "if-match": spec.ifMatch } : {}),
          },
          body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
          dispatcher: this.dispatcher,
          headersTimeout: this.timeouts.headersMs,
          bodyTimeout: this.timeouts.bodyMs,
        });
        bytes = Buffer.from(await res.body.arrayBuffer());
      } catch (e) {
        const reason = connectionReason(e);
        this.log(`${shown} failed after ${this.clock.now() - t0}ms: ${reason}`);
        const err = new ApiError({
          method: spec.method,
          path: spec.path,
          status: 0,
          message: `connection failed: ${reason}`,
          outcomeUnknown: spec.kind !== "read",
        });
        return { kind: "unknown", err, wait: undefined };
      }
      const status = res.statusCode;
      this.log(`${shown} ${status} ${this.clock.now() - t0}ms${attempt ? ` (send ${attempt + 1})` : ""}`);
      if (status === 401 && !reauthed && !this.auth.isStatic) {
        this.auth.invalidate(token);
        this.log(`${shown}: token refused, signing in again`);
        continue;
      }
      const ok = status >= 200 && status < 300;
      // A file (CSV) is returned as it came; only JSON and error answers are decoded.
      if (spec.schema === "bytes" && ok) return { kind: "ok", body: bytes };
      const text = bytes.toString("utf8");
      if (ok && text.trim() === "") {
        if (spec.emptyOk) return { kind: "ok", body: undefined };
        return { kind: "refused", err: new ApiError({ method: spec.method, path: spec.path, status, message: `the answer (status ${status}) has no body` }) };
      }
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        if (ok || !RETRY_STATUS.has(status)) {
          const message = `the answer is not JSON (status ${status}, first bytes: ${JSON.stringify(text.slice(0, 120))})`;
          return { kind: "refused", err: new ApiError({ method: spec.method, path: spec.path, status, message }) };
        }
      }
      const problems = problemsOf(body);
      const msg = (body as { message?: unknown } | undefined)?.message;
      if (!ok) {
        const message = typeof msg === "string" ? msg : (problems[0]?.message ?? `status ${status}`);
        const wait = retryAfterMs(res.headers["retry-after"], this.clock.now());
        const base = { method: spec.method, path: spec.path, status, message, problems, retryAfterMs: wait };
        if (BUSY_STATUS.has(status)) return { kind: "busy", err: new ApiError({ ...base, retryable: true }), wait };
        if (RETRY_STATUS.has(status) || (status >= 500 && spec.kind !== "read")) {
          return { kind: "unknown", err: new ApiError({ ...base, retryable: true, outcomeUnknown: spec.kind !== "read" }), wait };
        }
        return { kind: "refused", err: new ApiError(base) };
      }
      // A 2xx answer with an error array is a definite refusal (spec 7.2): never sent again.
      if (problems.length) {
        const message = typeof msg === "string" && msg ? msg : "the service reported errors";
        return { kind: "refused", err: new ApiError({ method: spec.method, path: spec.path, status, message, problems }) };
      }
      const fn = apiValidator(spec.schema);
      if (!fn(body)) {
        const e = fn.errors?.[0];
        const where = e?.instancePath ? `field ${e.instancePath}` : "the body";
        const message = `unexpected answer: ${where} ${e?.message ?? "does not match the specification"}`;
        return { kind: "refused", err: new ApiError({ method: spec.method, path: spec.path, status, message }) };
      }
      for (const u of unknownValues(body)) this.onUnknownValue(u, shown);
      return { kind: "ok", body };
    }
  }

  /** A read or an idempotent write: at most BUDGET.sends sends and BUDGET.totalMs, counting every send.
   *  A write refused after an earlier send of it may have landed is thrown with `outcomeUnknown`: the
   *  refusal may be the service meeting the first send's effect (a stale If-Match, a status already
   *  moved on), so the caller settles it by reading back, never by sending again. */
  async call<T>(spec: RequestSpec): Promise<T> {
    if (spec.kind === "create") throw new TypeError("a create goes through ApiCore.create");
    const started = this.clock.now();
    const url = joinUrl(this.base, spec.path, spec.query);
    let mayHaveLanded = false;
    for (let sends = 0; ;) {
      const r = await this.send(spec, url, sends++);
      if (r.kind === "ok") return r.body as T;
      if (r.kind === "unknown" && spec.kind === "write") mayHaveLanded = true;
      const err = mayHaveLanded && !r.err.outcomeUnknown ? r.err.withOutcomeUnknown() : r.err;
      if (r.kind === "refused") throw err;
      await this.pause(err, sends, this.retry.maxAttempts, started, r.wait);
    }
  }

  /** A POST that creates. Sent again only after `readBack` says it did not land, and at most
   *  BUDGET.createSends times in all; a 429 or 503 (turned away unprocessed) may be sent again within
   *  that budget. A 409 "already exists" is settled by reading back. When the read-back itself fails,
   *  the outcome stays unknown and nothing is sent again. */
  async create<T>(spec: RequestSpec, readBack: () => Promise<ReadBack<T>>): Promise<{ result: T | undefined; recovered: boolean }> {
    const started = this.clock.now();
    const url = joinUrl(this.base, spec.path, spec.query);
    const maxSends = Math.min(BUDGET.createSends, this.retry.maxAttempts);
    for (let sends = 0; ;) {
      const r = await this.send({ ...spec, kind: "create" }, url, sends++);
      if (r.kind === "ok") return { result: r.body as T, recovered: false };
      if (r.kind === "busy") {
        await this.pause(r.err, sends, maxSends, started, r.wait);
        continue;
      }
      if (r.kind === "refused" && r.err.status !== 409) throw r.err;
      let found: ReadBack<T>;
      try {
        found = await readBack();
      } catch (e) {
        if (e instanceof ApiError && e.conflict) throw e;
        throw ApiError.readBackFailed(r.err, e);
      }
      if (found.found) return { result: found.result, recovered: true };
      if (r.kind === "refused") throw r.err; // a 409 for something that does not exist: a real conflict
      this.log(`${spec.method} ${spec.path}: the read-back says it did not land`);
      await this.pause(r.err, sends, maxSends, started, r.wait);
    }
  }

  private async pause(err: ApiError, sends: number, maxSends: number, started: number, wait: number | undefined): Promise<void> {
    const delay = this.backoff(sends - 1, wait);
    if (sends >= maxSends || this.clock.now() - started + delay > this.retry.maxTotalMs) throw err;
    this.log(`send ${sends + 1}/${maxSends} of ${err.method} ${err.path} in ${delay}ms (${err.status || "connection"})`);
    await this.clock.sleep(delay);
  }
}
