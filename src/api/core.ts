import { Agent, EnvHttpProxyAgent, request, urlProblem, type Dispatcher } from "./http.js";
import { ApiError, UserError } from "../errors.js";
import { apiValidator, describeAjvErrors, fileValidator } from "../schema/ajv.js";
import { TokenManager, type Credentials } from "./auth.js";
import { systemClock, type Clock } from "./clock.js";
import { classify, retryAfterMs, RETRY_STATUS, type Answer, type RequestShape, type Verdict } from "./classify.js";
import { Governor, TimeLimitReached } from "./governor.js";
import { formatDuration } from "../duration.js";
import { plural } from "../words.js";
import type { UnknownValue } from "./vocabulary.js";
import { DEFAULT_SERVICE_CHOICES, type ServiceChoices } from "./service-choices.js";

export type { RequestKind } from "./classify.js";

export interface RetryPolicy {
  maxAttempts: number;
  /** The most sends of a read that reached the service (default BUDGET.readSends; maxAttempts when only it
   *  is given): reads change nothing, so they persist longer than a write. */
  readAttempts: number;
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
  /** The approver identity (four eyes): a second sign-in of the same client, whose view (asApprover)
   *  sends the approves. Absent: approves go as `credentials`. */
  approver?: Credentials;
  clock?: Clock;
  random?: () => number;
  log?: (line: string) => void;
  onSecret?: (secret: string) => void;
  /** Called when the service accepts a password grant (revsync's or the approver's), before its token
   *  is used; it may throw to stop the run there (TokenManager's `signedIn`). */
  onSignedIn?: () => void;
  /** connect, headers and body are undici's (idle) timers; total caps one request, answer and body whole
   *  (default: headers + body). Every request also ends at the run's time limit. */
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number; totalMs?: number };
  retry?: Partial<RetryPolicy>;
  connections?: number;
  dispatcher?: Dispatcher;
  /** Called for each value of a documented field outside its list (the answer is used as it is). */
  onUnknownValue?: (u: UnknownValue, request: string) => void;
  /** The tenant's choices where the interface is silent (revsync.yaml service:); resources follow them. */
  service?: ServiceChoices;
  /** The most requests in flight at once (--concurrency; default 8). */
  concurrency?: number;
  /** A known rate limit of the service, requests/s (rate_limit, --rate-limit): never exceeded. */
  rateLimit?: number;
  /** The run's time limit in ms (--timeout; default 10 minutes): nothing is sent after it. */
  timeoutMs?: number;
  /** The environment HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case names) are read from:
   *  the run's (default: the process's). */
  env?: NodeJS.ProcessEnv;
  /** Called once per HTTP attempt (token requests too) when it ends: what was sent and what came of it,
   *  never a header, a body or a form (apply --evidence records it). */
  onRequest?: (r: RequestObservation) => void;
  /** Called as each HTTP attempt is sent (before onRequest tells how it ended): what an observer lists
   *  as in flight when the process stops before the answer comes. */
  onRequestStart?: (r: Pick<RequestObservation, "method" | "path" | "started_at" | "resend" | "tag" | "user" | "body">) => void;
}

/** One HTTP attempt as an observer sees it: no secret; a write's body only. `status` is null when no answer came;
 *  `resend` says that an earlier attempt of the same request was sent (after a 429, a 5xx, a lost answer,
 *  a 401's new sign-in). */
export interface RequestObservation {
  method: string;
  path: string;
  status: number | null;
  /** Epoch ms, from the client's clock. */
  started_at: number;
  duration_ms: number;
  resend: boolean;
  error?: string;
  /** The tag of the client view the request was sent through (ApiCore.tagged): apply tags each step's
   *  requests with the change they were sent for. Absent for the untagged client and token requests. */
  tag?: string;
  /** The user the request was sent as (its token's user; a token request's, the user signing in); null
   *  when the sign-in names none. */
  user: string | null;
  /** A write's JSON body as sent (onRequestStart only; never a read's, never the token request's form). */
  body?: unknown;
}

/** The retry budget of one request, counting every send but a 429 (README, Reliability). */
export const BUDGET = { sends: 6, readSends: 10, createSends: 3, totalMs: 120_000, timeoutMs: 600_000 } as const;

export interface RequestSpec extends RequestShape {
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** The request schema a body must match before it is sent: a definition of schemas/api.schema.json
   *  (the spec's request body), or a schema document a resource kind brings. Required with a body. */
  bodySchema?: string | object;
  ifMatch?: string;
}

/** What is wrong with a request's body against its request schema ("compliance_spec.0.ui_mode is
 *  required"), or undefined when it is whole: a body is checked before it is sent, so that a field the
 *  spec requires is never left out (a service that took a partial body could reset it, unseen). A body
 *  without a schema is a mistake of revsync's own. */
export function bodyProblem(spec: RequestSpec): string | undefined {
  if (spec.body === undefined) return undefined;
  if (spec.bodySchema === undefined) throw new TypeError(`${spec.method} ${spec.path}: a request body is sent only with its request schema (bodySchema)`);
  const fn = typeof spec.bodySchema === "object" ? fileValidator(spec.bodySchema) : apiValidator(spec.bodySchema);
  if (fn(spec.body)) return undefined;
  return describeAjvErrors(fn.errors)
    .map((e) => `${e.field} ${e.message}`)
    .join("; ");
}

/** Why an id or a name of outside text would not address the resource it names as one segment of a
 *  request's path, or undefined when it would: a URL takes "." and ".." (however written) for steps up the
 *  path (…/tenant-configurations/. is the collection), and an empty one names nothing. The one rule of
 *  every segment revsync builds from an id or a name (docs/decisions.md, "Names that travel in a URL path"). */
export function segmentProblem(text: string): string | undefined {
  if (text === "") return "it is empty";
  if (/^(?:\.|%2e){1,2}$/i.test(text)) return `a URL takes ${JSON.stringify(text)} for a step up the path, so the request would go to another resource`;
  return undefined;
}

/** Why a request's path would not reach the one resource it names, or undefined: a segment a URL takes
 *  for a step up the path, or an empty one (a write's path never ends in "/"; a read's may, as the spec
 *  writes one). Checked before anything is sent, with bodyProblem. */
export function pathProblem(spec: Pick<RequestSpec, "path" | "kind">): string | undefined {
  const parts = spec.path.split("/").slice(1);
  for (const [i, part] of parts.entries()) {
    if (part === "" && i === parts.length - 1 && spec.kind === "read") continue;
    const problem = segmentProblem(part);
    if (problem) return `${spec.path}: segment ${i + 1} ${JSON.stringify(decodeURIComponentSafe(part))}: ${problem}`;
  }
  return undefined;
}

const decodeURIComponentSafe = (part: string): string => {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
};

/** Where a request stands between its sends (a read's, in `call`; a write's, in the write unit,
 *  src/api/write.ts). */
export interface Progress {
  /** Sends that spend the budget (every send but a 429). */
  sends: number;
  /** 429s in a row, for the backoff when the service gives no Retry-After. */
  throttles: number;
  /** Waits between sends that spend the budget (ms). */
  waited: number;
  mayHaveLanded: boolean;
  last: ApiError | undefined;
  /** A write whose token was refused (401) once: signed in again, it goes back to its guard. */
  reauthed?: boolean;
}

/** A request's progress before its first send. */
export const freshProgress = (): Progress => ({ sends: 0, throttles: 0, waited: 0, mayHaveLanded: false, last: undefined });

export function checkUrl(name: string, value: string): URL {
  const problem = urlProblem(value);
  if (problem) throw new UserError(`${name}${problem}`);
  return new URL(value);
}

/** undici's EnvHttpProxyAgent options from an environment (it reads the process's when not given). */
export function proxyEnv(e: NodeJS.ProcessEnv): { httpProxy: string; httpsProxy: string; noProxy: string } | undefined {
  // "" (not undefined) for one that is not set: undici would read the process's then.
  const httpProxy = e.http_proxy || e.HTTP_PROXY || "";
  const httpsProxy = e.https_proxy || e.HTTPS_PROXY || "";
  return httpProxy || httpsProxy ? { httpProxy, httpsProxy, noProxy: e.no_proxy ?? e.NO_PROXY ?? "" } : undefined;
}

/** An endpoint of the realm's OpenID Connect service under the auth URL (spec 5.3): `token`, where the
 *  password grant signs in, or `auth`, where a person signs in through a browser (spec 5.6). */
export function realmEndpoint(authBase: URL, realm: string, endpoint: "token" | "auth"): string {
  return joinUrl(authBase, `/auth/realms/${encodeURIComponent(realm)}/protocol/openid-connect/${endpoint}`);
}

function joinUrl(base: URL, path: string, query?: Record<string, string | undefined>): string {
  const url = new URL(base.href.replace(/\/$/, "") + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
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

type SocketError = Error & { code?: string; address?: string; port?: number; errors?: SocketError[] };

function errorCode(e: unknown): string {
  const err = e as SocketError & { cause?: SocketError };
  return err.cause?.code ?? err.code ?? "";
}

/** Whether a connection failed because the server does not speak TLS (https to an http server): no
 *  request was sent, and sending it again will not help, so it is answered at once, never retried. */
export function notTls(e: unknown): boolean {
  return NOT_TLS.has(errorCode(e));
}

export function connectionReason(e: unknown): string {
  const err = e as SocketError & { cause?: SocketError };
  const cause = err.cause;
  const code = errorCode(e);
  // TLS failures in plain words: OpenSSL's own text names no cause a person can act on.
  if (NOT_TLS.has(code)) return `the server did not answer TLS: is the URL http? (${code})`;
  if (UNTRUSTED.has(code)) {
    return `the server's TLS certificate is not trusted (${code}): check the URL's host, or give your CA bundle in NODE_EXTRA_CA_CERTS; TLS is always verified`;
  }
  if (code === "ECONNREFUSED") {
    // fetch puts the socket's error in cause, undici's request throws it itself; a host name of
    // several addresses (localhost) fails with each of them in errors.
    const refused = cause?.code === "ECONNREFUSED" ? cause : err;
    const first = refused.address ? refused : refused.errors?.find((x) => x.address);
    const at = first?.address;
    const port = first?.port;
    return `connection refused${at ? ` by ${at}${port ? `:${port}` : ""}` : ""}: nothing listens there; is the service (or revsync emulator) running, and is the URL right?`;
  }
  const parts = [err.message, cause?.code ?? err.code, cause?.message].filter((p): p is string => !!p && p !== "fetch failed");
  return [...new Set(parts)].join(": ") || String(e);
}

/** The one HTTP core: token, refresh, retries, timeouts, JSON, schema checks of answers. */
export class ApiCore {
  readonly base: URL;
  /** The sign-in this view sends as: revsync's own, or on the approver's view (asApprover) the approver's. */
  readonly auth: TokenManager;
  /** The approver identity's sign-in (four eyes), when one is given. */
  readonly approverAuth: TokenManager | undefined;
  private readonly tokenUrl: string;
  /** The realm signed in to, and the auth URL it is served under: what a 404 of the token endpoint names. */
  private readonly realm: { name: string; authBase: string };
  readonly clock: Clock;
  private readonly random: () => number;
  private readonly log: (line: string) => void;
  private readonly retry: RetryPolicy;
  private readonly dispatcher: Dispatcher;
  private readonly timeouts: { headersMs: number; bodyMs: number; totalMs: number };
  private readonly onUnknownValue: (u: UnknownValue, request: string) => void;
  readonly service: ServiceChoices;
  private readonly timeoutMs: number;
  /** One per client, so one per run: every request to the service goes through it. */
  readonly governor: Governor;
  private readonly onRequest: ((r: RequestObservation) => void) | undefined;
  private readonly onRequestStart: ClientOptions["onRequestStart"];
  /** What the request observer is told each request of this client view was sent for (see tagged). */
  readonly tag: string | undefined;
  /** A check of the run's, made before every send of a write through this client view, first in the
   *  write unit's guard (see gated): words that block the write, or undefined. */
  readonly writeGate: (() => Promise<string | undefined>) | undefined;
  /** Whether the token endpoint ever answered this client (shared by its views): until it has, a refused
   *  connection or a host that does not exist means nothing is there, and the sign-in stops at once. */
  private readonly reached = { auth: false };

  constructor(opts: ClientOptions) {
    this.service = opts.service ?? DEFAULT_SERVICE_CHOICES;
    this.base = checkUrl("base_url", opts.baseUrl);
    const authBase = checkUrl("auth_url", opts.authUrl);
    if (!opts.realm) throw new UserError("no realm: set realm in revsync.yaml or REVSYNC_REALM");
    this.tokenUrl = realmEndpoint(authBase, opts.realm, "token");
    // Never a user or password the URL may hold: only where it points.
    this.realm = { name: opts.realm, authBase: `${authBase.origin}${authBase.pathname.replace(/\/$/, "")}` };
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.log = opts.log ?? (() => undefined);
    this.onUnknownValue = opts.onUnknownValue ?? (() => undefined);
    this.onRequest = opts.onRequest;
    this.onRequestStart = opts.onRequestStart;
    const readAttempts = opts.retry?.readAttempts ?? opts.retry?.maxAttempts ?? BUDGET.readSends;
    this.retry = { maxAttempts: BUDGET.sends, maxTotalMs: BUDGET.totalMs, baseMs: 250, capMs: 20_000, maxWaitMs: Infinity, ...opts.retry, readAttempts };
    const headersMs = opts.timeouts?.headersMs ?? 30_000;
    const bodyMs = opts.timeouts?.bodyMs ?? 60_000;
    this.timeouts = { headersMs, bodyMs, totalMs: opts.timeouts?.totalMs ?? headersMs + bodyMs };
    const agentOpts = {
      connect: { timeout: opts.timeouts?.connectMs ?? 10_000 },
      connections: opts.connections ?? 16,
      keepAliveTimeout: 10_000,
    };
    const proxy = proxyEnv(opts.env ?? process.env);
    this.dispatcher = opts.dispatcher ?? (proxy ? new EnvHttpProxyAgent({ ...agentOpts, ...proxy }) : new Agent(agentOpts));
    const onSecret = opts.onSecret ?? (() => undefined);
    const own: TokenManager = new TokenManager(opts.credentials, (form) => this.postToken(form, own.username), this.clock, onSecret, this.log, opts.onSignedIn);
    this.auth = own;
    const approver: TokenManager | undefined = opts.approver
      ? new TokenManager(
          opts.approver,
          (form) => this.postToken(form, approver?.username),
          this.clock,
          onSecret,
          (line) => this.log(`${line} (approver)`),
          opts.onSignedIn,
        )
      : undefined;
    this.approverAuth = approver;
    this.timeoutMs = opts.timeoutMs ?? BUDGET.timeoutMs;
    this.governor = new Governor({
      clock: this.clock,
      random: this.random,
      concurrency: opts.concurrency ?? 8,
      rateLimit: opts.rateLimit,
      timeoutMs: this.timeoutMs,
      maxWaitMs: this.retry.maxWaitMs,
      log: this.log,
    });
  }

  /** Runs `fn` outside the run's time limit (--timeout bounds the time spent on the service, not the
   *  time apply's prompt waits for a person); nothing may be sent meanwhile. */
  async untimed<T>(fn: () => Promise<T>): Promise<T> {
    const started = this.clock.now();
    try {
      return await fn();
    } finally {
      this.governor.excludeFromTimeLimit(this.clock.now() - started);
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private backoff(attempt: number, after?: number): number {
    const wait = after ?? Math.floor(this.random() * Math.min(this.retry.capMs, this.retry.baseMs * 2 ** attempt));
    return Math.min(wait, this.retry.maxWaitMs);
  }

  /** The token endpoint: safe to retry (it creates nothing the caller could duplicate). Never logs the
   *  form. Not paced by the governor: it is another host, and every request waits on it. */
  private async postToken(form: URLSearchParams, user: string | undefined): Promise<{ status: number; body: unknown }> {
    const started = this.clock.now();
    for (let attempt = 0; ; attempt++) {
      const sent = await this.sendToken(form, user, attempt, started);
      if ("answer" in sent) return sent.answer;
      const delay = this.backoff(attempt, sent.wait);
      if (
        attempt + 1 >= this.retry.maxAttempts ||
        this.clock.now() - started + delay > this.retry.maxTotalMs ||
        this.clock.now() + delay >= this.governor.deadline
      ) {
        const message = `no usable answer after ${plural(attempt + 1, "attempt")} (last: ${sent.last})`;
        throw new ApiError({ method: "POST", path: "token endpoint", status: sent.status, message, retryable: true });
      }
      this.log(`retry ${attempt + 1}/${this.retry.maxAttempts - 1} of the token request in ${delay}ms`);
      await this.clock.sleep(delay);
    }
  }

  /** One send of the token request: its answer, when it is one to act on (a token, or a refusal in its
   *  words), or why another send may do better (a retry status, its Retry-After; the connection). */
  private async sendToken(
    form: URLSearchParams,
    user: string | undefined,
    attempt: number,
    started: number,
  ): Promise<{ answer: { status: number; body: unknown } } | { status: number; wait?: number; last: string }> {
    let status = 0;
    const t0 = this.clock.now();
    const path = new URL(this.tokenUrl).pathname;
    this.onRequestStart?.({ method: "POST", path, started_at: t0, resend: attempt > 0, user: user ?? null });
    const limit = this.requestSignal();
    try {
      const res = await request(this.tokenUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: form.toString(),
        dispatcher: this.dispatcher,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
        signal: limit.signal,
      });
      status = res.statusCode;
      this.reached.auth = true;
      const text = await res.body.text();
      this.observe("POST", path, status, t0, attempt > 0, undefined, user);
      this.log(`POST /auth/realms/…/token ${status} ${this.clock.now() - started}ms`);
      if (!RETRY_STATUS.has(status)) return { answer: this.tokenAnswer(status, text) };
      return { status, wait: retryAfterMs(headerOf(res.headers["retry-after"]), this.clock.now()), last: `status ${status}` };
    } catch (e) {
      if (e instanceof ApiError) throw e;
      const last = this.abortReason(e) ?? this.timerReason(e) ?? connectionReason(e);
      this.observe("POST", path, null, t0, attempt > 0, last, user);
      this.log(`POST /auth/realms/…/token failed: ${last}`);
      if (notTls(e)) throw new ApiError({ method: "POST", path: "token endpoint", status: 0, message: `connection failed: ${last}` });
      // A tenant that is stopped, or a URL with a typo, is not worth seconds of backoff (a fleet waited
      // on each): at the first sign-in nothing has ever answered there. Once it has, a refused connection
      // may be a restart, and is tried again as any other.
      if (!this.reached.auth && NOBODY_THERE.has(errorCode(e)))
        throw new ApiError({ method: "POST", path: "token endpoint", status: 0, message: `connection failed: ${last}` });
      return { status, last };
    } finally {
      limit.done();
    }
  }

  /** The token endpoint's answer (not a retry status) as JSON, a token checked against its schema; a
   *  404 names the realm: no token endpoint at this path, whatever the body, means the realm is not
   *  served at this auth URL (a realm the service does not have, or the wrong auth_url). */
  private tokenAnswer(status: number, text: string): { status: number; body: unknown } {
    const refused = (message: string, hint?: string): ApiError => new ApiError({ method: "POST", path: "token endpoint", status, message, hint });
    if (status === 404)
      throw refused(
        `sign-in refused: no realm ${JSON.stringify(this.realm.name)} at ${this.realm.authBase}`,
        "check the environment's realm in revsync.yaml (or REVSYNC_REALM), and its auth_url (or REVSYNC_AUTH_URL)",
      );
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw refused(`answer is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
    }
    const fn = apiValidator("TokenResponse");
    if (status === 200 && !fn(body)) throw refused(`unexpected token response: ${fn.errors?.[0]?.instancePath || "(body)"} ${fn.errors?.[0]?.message ?? ""}`);
    return { status, body };
  }

  /** What ends one request: the run's time limit, or the request's own total cap, whichever comes first.
   *  undici's headers and body timers are idle timers (a body that trickles in never trips them). */
  /** A timer of its own, cleared (done) once the answer is read: AbortSignal.timeout's stays armed, with
   *  a weak reference and a finalizer, until its time is out (some 90 s after each request of the run),
   *  some 20 to 50 us a request more. Aborted as AbortSignal.timeout aborts (a TimeoutError). */
  private requestSignal(): { signal: AbortSignal; done: () => void } {
    const left = Math.max(1, Math.ceil(Math.min(this.timeouts.totalMs, this.governor.deadline - this.clock.now())));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), left);
    timer.unref();
    this.cuts.set(controller.signal, left === this.timeouts.totalMs ? "cap" : "deadline");
    return { signal: controller.signal, done: () => clearTimeout(timer) };
  }

  private readonly cuts = new WeakMap<AbortSignal, "cap" | "deadline">();

  /** Until when (this client's clock, epoch ms) a write sent so far may still land: shared by every view
   *  of the client (tagged, asApprover). */
  private readonly tails = { until: 0 };

  private mayLand(sentAt: number): void {
    this.tails.until = Math.max(this.tails.until, sentAt + this.timeouts.totalMs);
  }

  /** Until when a write this client sent may still land, its answer cut short (by revsync's own time
   *  limits, or a gateway's 504): 0 when none was. What the environment's lock is held for. */
  writesMayLandUntil(): number {
    return this.tails.until;
  }

  /** The longest one request may run, from its send to its answer's last byte (REVSYNC_TIMEOUT_MS's two
   *  limits added up): what a lock records, for a taker to wait out should this run die. */
  get requestDeadlineMs(): number {
    return this.timeouts.totalMs;
  }

  /** A request undici's own timers ended, in words: the connection worked, the answer did not come in
   *  time (REVSYNC_TIMEOUT_MS sets both timers, in ms); undefined for any other error. */
  private timerReason(e: unknown): string | undefined {
    const code = errorCode(e);
    if (code === "UND_ERR_HEADERS_TIMEOUT") return `no answer within ${this.timeouts.headersMs} ms (REVSYNC_TIMEOUT_MS)`;
    if (code === "UND_ERR_BODY_TIMEOUT") return `no complete answer: its body stopped coming for ${this.timeouts.bodyMs} ms (REVSYNC_TIMEOUT_MS)`;
    return undefined;
  }

  /** A request that a signal ended, in words; undefined for any other error. */
  private abortReason(e: unknown, signal?: AbortSignal): string | undefined {
    const err = e as { name?: string; code?: string };
    if (err?.name !== "AbortError" && err?.name !== "TimeoutError" && err?.code !== "UND_ERR_ABORTED") return undefined;
    const cut = signal ? this.cuts.get(signal) : undefined;
    return cut === "cap"
      ? `no complete answer within ${formatDuration(this.timeouts.totalMs)} (the cap of one request, REVSYNC_TIMEOUT_MS)`
      : `no complete answer within the run's time limit (--timeout ${formatDuration(this.timeoutMs)})`;
  }

  /** The transport: one send (plus one re-authentication after a 401, which the service did not
   *  process), and the answer as it came. Never throws for what the service answers; a failed token
   *  request is thrown (an ApiError of the token endpoint). */
  private async transport(spec: RequestSpec, url: string, shown: string, p: Progress): Promise<Answer> {
    const sends = p.sends;
    const path = `${spec.path}${spec.query ? new URL(url).search : ""}`;
    for (let reauthed = false; ; reauthed = true) {
      const ended = this.auth.loginEnded();
      if (ended) throw this.loginOver(spec.method, path, `not sent: ${ended}`);
      const token = await this.auth.token();
      const t0 = this.clock.now();
      // A resend: the caller (a read's loop, the write unit) sent this request before (its progress
      // counts the sends and the 429s since), or a read goes again after a 401's new sign-in.
      const resend = reauthed || p.sends + p.throttles > 0 || !!p.reauthed;
      this.onRequestStart?.({
        method: spec.method,
        path,
        started_at: t0,
        resend,
        user: this.auth.username ?? null,
        ...(this.tag === undefined ? {} : { tag: this.tag }),
        ...(spec.kind !== "read" && spec.body !== undefined ? { body: spec.body } : {}),
      });
      let res: Dispatcher.ResponseData;
      let body: Buffer;
      const { signal, done } = this.requestSignal();
      try {
        res = await this.send(spec, url, token, signal);
        body = Buffer.from(await res.body.arrayBuffer());
      } catch (e) {
        const cut = this.abortReason(e, signal) ?? this.timerReason(e);
        // A write revsync stopped waiting for may still be processed: it may land until its cap is out.
        if (cut && spec.kind !== "read") this.mayLand(t0);
        const reason = cut ?? connectionReason(e);
        this.observe(spec.method, path, null, t0, resend, reason);
        this.log(`${shown} failed after ${this.clock.now() - t0}ms: ${reason}${this.asWhom()}`);
        return notTls(e) ? { lost: reason, unsent: true, notTls: true } : { lost: reason, unsent: notSent(e) };
      } finally {
        done();
      }
      const status = res.statusCode;
      // A gateway that stopped waiting for the service (504): the write may still be processed behind it.
      if (status === 504 && spec.kind !== "read") this.mayLand(t0);
      this.observe(spec.method, path, status, t0, resend);
      this.log(`${shown} ${status} ${this.clock.now() - t0}ms${sends ? ` (send ${sends + 1})` : ""}${this.asWhom()}`);
      if (status === 401 && this.auth.login)
        throw this.loginOver(spec.method, path, "the service refused the token of revsync login (it expired or was revoked); nothing was processed");
      const refused = status === 401 && !this.auth.isStatic ? this.tokenRefused(spec, shown, token, reauthed, p) : undefined;
      if (refused === "again") continue;
      if (refused === "to the guard") return { status, body, reauth: true };
      return { status, retryAfter: headerOf(res.headers["retry-after"]), body };
    }
  }

  /** A token of revsync login that may not be used any more: the request is not sent (again), and no
   *  other credentials stand in for the person who signed in; they sign in again. A 401, as the service
   *  answers one: nothing was processed. */
  private loginOver(method: string, path: string, message: string): ApiError {
    const again = this.auth.login?.again ?? "revsync login";
    return new ApiError({ method, path, status: 401, message, hint: `sign in again: ${again}` });
  }

  /** One HTTP request of the service's interface, as the spec says it, with the token. */
  private send(spec: RequestSpec, url: string, token: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return request(url, {
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
      signal,
    });
  }

  /** A 401, which the service did not process: the token is dropped, and a read is sent again at once
   *  with a new one ("again"); a write goes back to its write unit, whose guard reads again before the
   *  send after the sign-in, once per write ("to the guard"). After that, the 401 is the answer. */
  private tokenRefused(spec: RequestSpec, shown: string, token: string, reauthed: boolean, p: Progress): "again" | "to the guard" | undefined {
    if (spec.kind === "read" && !reauthed) {
      this.auth.invalidate(token);
      this.log(`${shown}: token refused, signing in again`);
      return "again";
    }
    if (spec.kind !== "read" && !p.reauthed) {
      this.auth.invalidate(token);
      p.reauthed = true;
      this.log(`${shown}: token refused; signing in again before the write's guard and its next send`);
      return "to the guard";
    }
    return undefined;
  }

  /** One send of a request through the governor, and what its answer means: the one place each HTTP
   *  attempt is sent. `p.sends + p.throttles > 0` says it is a resend. Throws (an ApiError) only when it
   *  cannot be sent (the run's time limit) or its token cannot be had. */
  async sendOnce(spec: RequestSpec, p: Progress): Promise<Verdict> {
    return this.exchange(spec, joinUrl(this.base, spec.path, spec.query), p);
  }

  private async exchange(spec: RequestSpec, url: string, p: Progress): Promise<Verdict> {
    const shown = `${spec.method} ${spec.path}${spec.query ? new URL(url).search : ""}`;
    let ticket;
    try {
      ticket = await this.governor.acquire();
    } catch (e) {
      if (e instanceof TimeLimitReached) throw this.timeLimit(spec, p);
      throw e;
    }
    let answer: Answer;
    try {
      answer = await this.transport(spec, url, shown, p);
    } catch (e) {
      this.governor.settle(ticket, { kind: "no-answer" });
      throw e;
    }
    const verdict = classify(answer, spec, p, this.clock.now());
    if (verdict.outcome === "ok") {
      this.governor.settle(ticket, { kind: "accepted" });
      for (const u of verdict.unknownValues) this.onUnknownValue(u, shown);
    } else {
      this.governor.settle(
        ticket,
        verdict.throttled ? { kind: "turned-away", retryAfterMs: verdict.waitMs } : "lost" in answer ? { kind: "no-answer" } : { kind: "accepted" },
      );
      if (verdict.outcomeUnknown) p.mayHaveLanded = true;
      p.last = verdict.err;
    }
    return verdict;
  }

  /** A read: it changes nothing, so it persists: at most BUDGET.readSends sends that reached the service
   *  (a 503, a 502 or any 5xx, a dropped connection, no answer in time alike; a 429 is not counted: the
   *  service did not process it), BUDGET.sends while the connection itself is refused (nothing listens:
   *  said sooner), and BUDGET.totalMs of waits between them, all within the run's time limit. Writes go
   *  through the write unit (src/api/write.ts), which guards, sends and settles each of them. */
  async call<T>(spec: RequestSpec): Promise<T> {
    if (spec.kind !== "read") throw new TypeError("a write goes through the write unit (src/api/write.ts)");
    const hole = bodyProblem(spec);
    if (hole) throw new UserError(`${spec.method} ${spec.path}: the request body is not what the interface requires (${hole}); nothing was sent`);
    const astray = pathProblem(spec);
    if (astray) throw new UserError(`${spec.method} ${astray}; nothing was sent`);
    const url = joinUrl(this.base, spec.path, spec.query);
    const p = freshProgress();
    for (;;) {
      const v = await this.exchange(spec, url, p);
      if (v.outcome === "ok") return v.body as T;
      if (!v.retryable) throw v.err;
      const refused = v.outcome === "busy" && v.err.status === 0;
      await this.again(spec, v, p, refused ? Math.min(this.retry.maxAttempts, this.retry.readAttempts) : this.retry.readAttempts);
    }
  }

  /** The most sends of a write that makes something (a create, an approval action): BUDGET.createSends. */
  get writeSends(): number {
    return Math.min(BUDGET.createSends, this.retry.maxAttempts);
  }

  /** The most sends of a request that changes a state in place (a PATCH) or reads: BUDGET.sends. */
  get sendBudget(): number {
    return this.retry.maxAttempts;
  }

  /** A view of this client whose requests the observer is told were sent for `tag` (apply: the change a
   *  step's guard reads, writes and read-backs are for). It shares everything else (the connection
   *  pool, the sign-in, the governor, the budgets): a prototype over this client, carrying only the tag,
   *  so no async context has to follow the step's promises. Token requests stay untagged. */
  tagged(tag: string): ApiCore {
    return Object.create(this, { tag: { value: tag, enumerable: true } }) as ApiCore;
  }

  /** A view of this client whose writes are checked by `gate` before every send, first in the write
   *  unit's guard (apply: a promoted write's source environment must still hold it, src/promotion/). It
   *  shares everything else, as tagged does; the approver's view of it keeps the gate. */
  gated(gate: () => Promise<string | undefined>): ApiCore {
    return Object.create(this, { writeGate: { value: gate, enumerable: true } }) as ApiCore;
  }

  /** The view of this client that sends as the approver identity (four eyes): it shares everything but
   *  the sign-in (the connection pool, the governor, the budgets, the observer, its tag). Without an
   *  approver identity, this client itself. */
  asApprover(): ApiCore {
    if (!this.approverAuth || this.auth === this.approverAuth) return this;
    return Object.create(this, { auth: { value: this.approverAuth, enumerable: true } }) as ApiCore;
  }

  /** " (as bob)" in the verbose log, once the run has two identities: who sent what. */
  private asWhom(): string {
    return this.approverAuth ? ` (as ${this.auth.username ?? "a user the token does not name"})` : "";
  }

  /** Tells the request observer about one attempt that ended. */
  private observe(method: string, path: string, status: number | null, t0: number, resend: boolean, error?: string, user = this.auth.username): void {
    if (!this.onRequest) return;
    const r: RequestObservation = { method, path, status, started_at: t0, duration_ms: this.clock.now() - t0, resend, user: user ?? null };
    if (error !== undefined) r.error = error;
    if (this.tag !== undefined) r.tag = this.tag;
    this.onRequest(r);
  }

  /** Waits before the next send of a request, or throws when it may not be sent again: its budget is
   *  spent, or the run's time limit would pass first. After a 429 the governor holds the next send
   *  (with the Retry-After, for every request); without a Retry-After this request also backs off. */
  async again(spec: RequestSpec, v: Extract<Verdict, { err: ApiError }>, p: Progress, maxSends: number): Promise<void> {
    const err = p.mayHaveLanded && !v.err.outcomeUnknown ? v.err.withOutcomeUnknown() : v.err;
    let delay: number;
    if (v.throttled) {
      p.throttles++;
      delay = v.waitMs === undefined ? this.backoff(p.throttles - 1) : 0;
    } else {
      p.throttles = 0;
      p.sends++;
      delay = this.backoff(p.sends - 1, v.waitMs);
      if (p.sends >= maxSends || p.waited + delay > this.retry.maxTotalMs)
        // With no answer, say how many times it was sent: "no answer within 500 ms …, after 6 attempts".
        throw err.status === 0 && p.sends > 1 ? err.withMessage(`${err.serviceMessage}, after ${plural(p.sends, "attempt")}`) : err;
      p.waited += delay;
    }
    // The service's Retry-After holds every request past the limit: this one cannot go again in time.
    if (this.clock.now() + Math.max(delay, v.throttled ? this.governor.pausedForMs : 0) >= this.governor.deadline) throw this.timeLimit(spec, p);
    if (delay || !v.throttled)
      this.log(
        `${v.throttled ? "429: " : `send ${p.sends + 1}/${maxSends} of `}${spec.method} ${spec.path} in ${delay}ms${v.throttled ? "" : ` (${err.status || "connection"})`}`,
      );
    if (delay) await this.clock.sleep(delay);
  }

  /** This request cannot be sent (again) within the run's time limit: it ran out, or the next send
   *  would come after it (a Retry-After, or this request's own backoff, reaching past it). */
  private timeLimit(spec: RequestSpec, p: Progress): ApiError {
    const turned = this.governor.turnedAway;
    const away = turned
      ? `; the service turned away ${turned === 1 ? "1 request" : `${turned} requests`} of this run with 429 (rate limited): try again later, give a longer --timeout, or set rate_limit for this environment (or --rate-limit) to the service's limit`
      : "";
    // Say when it is the service's Retry-After that reaches past the limit, not the limit that ran out.
    const held = this.governor.pausedForMs;
    const past = this.clock.now() + held >= this.governor.deadline;
    const pause =
      held > 0 && past ? `: the service's Retry-After holds every request for another ${formatDuration(Math.max(1, Math.round(held / 1000)) * 1000)}` : "";
    return new ApiError({
      method: spec.method,
      path: spec.path,
      status: p.last?.status ?? 0,
      message: `not sent${p.last ? " again" : ""} within the run's time limit (--timeout ${formatDuration(this.timeoutMs)})${pause}${away}`,
      retryable: true,
      outcomeUnknown: p.mayHaveLanded,
    });
  }
}

/** A connection that found no server at all: nothing listens at the address, or the host does not exist. */
const NOBODY_THERE = new Set(["ECONNREFUSED", "ENOTFOUND"]);

/** A connection that failed before the request could have reached the service: nothing was processed. */
const UNSENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH", "ENETUNREACH"]);
function notSent(e: unknown): boolean {
  const err = e as { code?: string; cause?: { code?: string } };
  return UNSENT.has(err?.cause?.code ?? "") || UNSENT.has(err?.code ?? "");
}

function headerOf(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}
