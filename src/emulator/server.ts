import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { authorize } from "./authorize.js";
import { FaultTable, parseFaults, TokenBucket, withoutField, type Fault } from "./faults.js";
import { literalAnswer, literalRefusal, type Profile } from "./profile.js";
import { SEEDS, seedState, type SeedName } from "./seed.js";
import * as svc from "./service.js";
import { EmuError, type Caller } from "./service.js";
import { checkState, saveStateFile, type EmulatorState, type TenantState, type TokenRecord } from "./state.js";
import { accessToken, subjectOf } from "./tokens.js";

export interface EmulatorOptions {
  state: EmulatorState;
  statePath?: string;
  host?: string;
  port?: number;
  accessTtlS?: number;
  refreshTtlS?: number;
  profile?: Profile;
  /** A rate limit in front of the API (--rate-limit): a token bucket, with or without Retry-After. */
  rateLimit?: RateLimitOptions;
  /** Check a write's If-Match against the resource's version_id (default true). false: accept writes
   *  whatever their If-Match says, as a service that does not honour it would. */
  honourIfMatch?: boolean;
  /** Refuse an approve of an SSP batch by the user who reviewed it (403), as the rule that the uploader
   *  cannot approve their own file refuses them (default false). */
  fourEyes?: boolean;
  /** Resources served beside the spec's (EmulatorResource). */
  resources?: EmulatorResource[];
}

/** A resource served beside the spec's, as a resource kind written outside the tree brings its own (the
 *  toy kind of test/toy-kind.e2e.test.ts): asked, after the spec's endpoints, for each signed-in request
 *  under /apis/ that none of them answers; it answers a JSON body, or undefined when the path is not its
 *  own, and throws EmuError to refuse. It keeps its own state (a reset leaves it as it is). */
export interface EmulatorResource {
  answer(req: { method: string; path: string; body: () => unknown; ifMatch: string | undefined; caller: Caller }): unknown;
}

export interface RateLimitOptions {
  rate: number;
  burst: number;
  retryAfter: boolean;
}

/** Settings a test may change while the emulator runs (GET|POST /__admin/settings); reset restores
 *  the ones it started with. */
export interface EmulatorSettings {
  if_match: boolean;
  /** --four-eyes: the user who reviewed a batch, or uploaded it, cannot approve it. */
  four_eyes: boolean;
  /** Access tokens that name nobody (random strings), as a service whose tokens are not JWTs issues;
   *  default false: JWTs naming their user (sub, preferred_username, email). */
  opaque_tokens: boolean;
  /** How far every write moves a resource's version_id (default 1): a service whose versions come from a
   *  counter shared with other resources moves them by more than one (the spec promises no step). */
  version_step: number;
}

/** The settings a run starts with unless told otherwise. */
export const DEFAULT_SETTINGS: EmulatorSettings = { if_match: true, four_eyes: false, opaque_tokens: false, version_step: 1 };

export interface JournalEntry {
  seq: number;
  at: number;
  method: string;
  path: string;
  query: string;
  status: number;
  realm?: string;
  user?: string;
  /** A token request's client id (never its secret or password): whose sign-in it carried. */
  client?: string;
  fault?: string;
}

export interface RunningEmulator {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;
const JOURNAL_MAX = 20_000;
const API = "/apis/";

/** Writes a body one byte at a time, `ms` apart, until it is out or the client goes away. */
function trickle(res: ServerResponse, body: Buffer, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let i = 0;
    const timer = setInterval(() => {
      if (res.destroyed || i >= body.length) {
        clearInterval(timer);
        if (!res.destroyed) res.end();
        resolve();
        return;
      }
      res.write(body.subarray(i, ++i));
    }, ms);
    res.on("close", () => {
      clearInterval(timer);
      resolve();
    });
  });
}

class Reply {
  /** A trickle fault: the body goes out one byte per this many ms. */
  trickleMs?: number;
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly contentType = "application/json",
    readonly headers: Record<string, string> = {},
  ) {}
}

function isLoopback(address: string | undefined): boolean {
  return !!address && (address.startsWith("127.") || address === "::1" || address === "::ffff:127.0.0.1" || address.startsWith("::ffff:127."));
}

function readBody(req: IncomingMessage): Promise<string | "too-large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) over = true;
      else chunks.push(c);
    });
    req.on("end", () => resolve(over ? "too-large" : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  if (text.trim() === "") throw new EmuError(400, "a JSON body is required", [{ field: "(body)", message: "is empty" }]);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new EmuError(400, "the body is not valid JSON", [{ field: "(body)", message: "is not valid JSON" }]);
  }
}

/** A JSON answer without the fields omit faults name. */
function omitted(reply: Reply, fields: readonly string[]): Reply {
  if (!fields.length || reply.contentType !== "application/json") return reply;
  const body = fields.reduce<unknown>((b, k) => withoutField(b, k), reply.body);
  return new Reply(reply.status, body, reply.contentType, reply.headers);
}

/** 429, with Retry-After in seconds unless null. */
function tooMany(retryAfter: number | null): Reply {
  const headers: Record<string, string> = retryAfter === null ? {} : { "retry-after": String(retryAfter) };
  return new Reply(429, { status: 429, message: "too many requests", error: [{ message: "too many requests" }] }, "application/json", headers);
}

/** Settings a test posts, each known and of its type (400 naming the first that is not). */
function checkSettings(b: Record<string, unknown>, settings: EmulatorSettings): void {
  for (const [k, v] of Object.entries(b)) {
    if (!(k in settings)) throw new EmuError(400, `unknown setting ${JSON.stringify(k)}; the settings are ${Object.keys(settings).join(", ")}`);
    if (k === "version_step") {
      if (!Number.isSafeInteger(v) || (v as number) < 1) throw new EmuError(400, `${k} must be a whole number, 1 or more`);
    } else if (typeof v !== "boolean") throw new EmuError(400, `${k} must be true or false`);
  }
}

/** The user a password grant names: by user name, or by e-mail (compared without case), as Keycloak
 *  signs a user in by either by default; "" matches nobody. */
function userNamed(t: TenantState, login: string): string {
  if (t.users[login] || !login.includes("@")) return login;
  const lower = login.toLowerCase();
  return Object.entries(t.users).find(([, u]) => u.email?.toLowerCase() === lower)?.[0] ?? login;
}

export class Emulator {
  readonly faults = new FaultTable();
  readonly resources: EmulatorResource[] = [];
  journal: JournalEntry[] = [];
  private journalSeq = 0;
  /** Resets so far, and clears of the journal (resets too): a request that arrived before one is not of
   *  the test after it. */
  private resets = 0;
  private journalClears = 0;
  /** The requests a latency fault holds, each with its fault: once the fault is no longer set (cleared,
   *  replaced, a reset), the wait ends. */
  private readonly held = new Set<{ fault: Fault; done: () => void }>();
  private accessTtlS: number;
  private refreshTtlS: number;
  private readonly gateway: { bucket: TokenBucket; retryAfter: boolean } | undefined;
  settings: EmulatorSettings;

  constructor(
    public state: EmulatorState,
    private readonly statePath: string | undefined,
    accessTtlS = 300,
    refreshTtlS = 1800,
    readonly profile: Profile = "default",
    private readonly startSettings: EmulatorSettings = DEFAULT_SETTINGS,
    rateLimit?: RateLimitOptions,
  ) {
    this.gateway = rateLimit && { bucket: new TokenBucket(rateLimit.rate, rateLimit.burst), retryAfter: rateLimit.retryAfter };
    this.accessTtlS = accessTtlS;
    this.refreshTtlS = refreshTtlS;
    this.settings = { ...startSettings };
  }

  private persist(): void {
    if (this.statePath) saveStateFile(this.statePath, this.state);
  }

  private tenant(realm: string): TenantState | undefined {
    return this.state.tenants.find((t) => t.realm === realm);
  }

  /** A latency fault's wait: its `latency_ms`, or until the fault is no longer set. */
  private hold(fault: Fault): Promise<void> {
    return new Promise((resolve) => {
      const h = {
        fault,
        done: (): void => {
          clearTimeout(timer);
          this.held.delete(h);
          resolve();
        },
      };
      const timer = setTimeout(h.done, fault.latency_ms ?? 100);
      this.held.add(h);
    });
  }

  /** Ends the wait of each request held by a fault no longer set. */
  private release(): void {
    for (const h of [...this.held]) if (!this.faults.has(h.fault)) h.done();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://emulator");
    const method = req.method ?? "GET";
    const entry: JournalEntry = { seq: 0, at: Date.now(), method, path: url.pathname, query: url.search, status: 0 };
    const clears = this.journalClears;
    let reply: Reply | "dropped";
    try {
      reply = await this.dispatch(req, res, url, method, entry);
    } catch (e) {
      reply =
        e instanceof EmuError
          ? new Reply(e.status, e.body())
          : new Reply(500, { status: 500, message: "internal emulator error", error: [{ message: String(e) }] });
    }
    // A request that arrived before the journal was cleared (a reset) is not journaled after it: the
    // journal holds the requests of the test that cleared it, however long another's was held.
    if (!url.pathname.startsWith("/__admin/") && clears === this.journalClears) {
      entry.seq = ++this.journalSeq;
      entry.status = reply === "dropped" ? 0 : reply.status;
      this.journal.push(entry);
      if (this.journal.length > JOURNAL_MAX) this.journal.splice(0, this.journal.length - JOURNAL_MAX);
    }
    if (reply === "dropped") {
      req.socket.destroy();
      return;
    }
    const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status, { "content-type": reply.contentType, "content-length": Buffer.byteLength(text), ...reply.headers });
    if (reply.trickleMs !== undefined) return trickle(res, Buffer.from(text), reply.trickleMs);
    res.end(text);
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse, url: URL, method: string, entry: JournalEntry): Promise<Reply | "dropped"> {
    const raw = await readBody(req);
    if (raw === "too-large") {
      res.setHeader("connection", "close");
      return new Reply(413, { status: 413, message: "request body over 1 MiB", error: [{ message: "request body over 1 MiB" }] });
    }
    const path = url.pathname;
    if (path.startsWith("/__admin/")) {
      if (!isLoopback(req.socket.remoteAddress)) return new Reply(403, { status: 403, message: "admin endpoints answer loopback only", error: [] });
      return this.admin(method, path, raw, url);
    }
    // The rate limit stands in front of the API (the token endpoint is another host), before any fault.
    if (this.gateway && path.includes(API)) {
      const wait = this.gateway.bucket.take();
      if (wait !== undefined) {
        entry.fault = "rate_limit";
        return tooMany(this.gateway.retryAfter ? wait : null);
      }
    }
    const resets = this.resets;
    const fired = this.faults.pick(method, path, raw, decodeURIComponent(url.search.replace(/\+/g, " ")));
    let dropAfter = false;
    let success: number | undefined;
    let trickleMs: number | undefined;
    const omit: string[] = [];
    for (const f of fired) {
      entry.fault = f.kind;
      if (f.kind === "latency") await this.hold(f);
      else if (f.kind === "trickle") trickleMs = f.latency_ms ?? 1000;
      else if (f.kind === "drop") {
        if (f.after_commit) dropAfter = true;
        else return "dropped";
      } else if (f.kind === "status") {
        const status = f.status ?? 503;
        return new Reply(status, { status, message: `injected ${status}`, error: [{ message: `injected ${status}` }] });
      } else if (f.kind === "rate_limit") {
        return tooMany(f.retry_after === undefined ? 1 : f.retry_after);
      } else if (f.kind === "success_status") {
        success = f.status ?? 204;
      } else if (f.kind === "upload" && f.upload) {
        this.upload(f.upload);
      } else if (f.kind === "omit" && f.field) {
        omit.push(f.field);
      } else if (f.kind === "error_array") {
        return new Reply(200, {
          compliance_id: "",
          compliance_details: [{ error: [{ message: "injected failure in compliance_details" }], message: "failed", unique_key: "" }],
          error: [{ message: "injected failure" }],
        });
      }
    }
    // Held across a reset: the state it was sent to is gone; it is dropped, never applied to the new one.
    if (resets !== this.resets) return "dropped";
    const result = omitted(this.route(req, url, method, path, raw, entry), omit);
    if (dropAfter) return "dropped";
    if (success !== undefined && result.status === 200) return new Reply(success, "", "application/json");
    if (trickleMs !== undefined) result.trickleMs = trickleMs;
    return result;
  }

  private route(req: IncomingMessage, url: URL, method: string, path: string, raw: string, entry: JournalEntry): Reply {
    const auth = /^\/auth\/realms\/([^/]+)\/protocol\/openid-connect\/auth$/.exec(path);
    if (auth) return this.authorizePage(req, url, method, decodeURIComponent(auth[1] ?? ""), raw, entry);
    const token = /^\/auth\/realms\/([^/]+)\/protocol\/openid-connect\/token$/.exec(path);
    if (token) {
      if (method !== "POST") return new Reply(405, { error: "invalid_request", error_description: "use POST" });
      return this.token(decodeURIComponent(token[1] ?? ""), req.headers["content-type"] ?? "", raw, entry);
    }
    let t: TenantState | undefined = this.state.tenants[0];
    let rest = path;
    const prefixed = /^\/tenants\/([^/]+)(\/.*)$/.exec(path);
    if (prefixed) {
      t = this.tenant(decodeURIComponent(prefixed[1] ?? ""));
      rest = prefixed[2] ?? "/";
      if (!t) throw new EmuError(404, "unknown tenant");
    }
    if (!t || !rest.startsWith(API)) throw new EmuError(404, `no such endpoint: ${method} ${path}`);
    const caller = this.authenticate(req, t);
    entry.realm = t.realm;
    entry.user = caller.user;
    const writes = method !== "GET" && !rest.startsWith("/apis/errortransactions/");
    let out: Reply;
    try {
      const ifMatch = this.settings.if_match ? (req.headers["if-match"] as string | undefined) : undefined;
      out = this.api(t, caller, method, rest, url, raw, ifMatch);
    } catch (e) {
      if (!(this.profile === "literal" && writes && e instanceof EmuError && e.status !== 405)) throw e;
      return new Reply(200, literalRefusal(e.message, e.errors));
    }
    if (writes) this.persist();
    if (this.profile === "literal" && out.contentType === "application/json")
      return new Reply(out.status, literalAnswer(out.body), out.contentType, out.headers);
    return out;
  }

  private api(t: TenantState, caller: Caller, method: string, path: string, url: URL, raw: string, ifMatch: string | undefined): Reply {
    const json = (body: unknown): Reply => new Reply(200, body);
    const seg = path.split("/").map((s) => decodeURIComponent(s));
    const q = (k: string): string | undefined => url.searchParams.get(k) ?? undefined;
    const allow = (m: string): void => {
      if (method !== m) throw new EmuError(405, `${method} is not allowed on ${path}`);
    };
    if (path === "/apis/policy-sets/v1/policy/tenant-configurations") {
      allow("GET");
      return json(svc.listTenantConfigurations(t));
    }
    if (path.startsWith("/apis/policy-sets/v1/policy/tenant-configurations/") && seg.length === 7) {
      allow("PATCH");
      return json(svc.patchTenantConfiguration(t, caller, seg[6] ?? "", parseJson(raw), ifMatch, this.settings.version_step));
    }
    if (path === "/apis/policy-sets/v1/policy/ssp") {
      if (method === "GET") return json(svc.getSsp(t, q("policy_name"), q("batch_name")));
      allow("POST");
      return json(svc.createSsp(this.state, t, caller, parseJson(raw)));
    }
    if (path === "/apis/policy-sets/v1/policy/ssp/template") {
      allow("GET");
      return new Reply(200, svc.sspTemplate(t, q("batch_name")), "text/csv; charset=utf-8");
    }
    // The spec declares batch_name a path parameter of a path without a placeholder (4.5): a tenant may
    // take it as a last segment, so the emulator does too (revsync.yaml service.template_batch_name).
    if (path.startsWith("/apis/policy-sets/v1/policy/ssp/template/") && seg.length === 8) {
      allow("GET");
      return new Reply(200, svc.sspTemplate(t, seg[7] ?? ""), "text/csv; charset=utf-8");
    }
    if (path.startsWith("/apis/policy-sets/v1/policy/ssp/download/") && seg.length === 8) {
      allow("GET");
      return new Reply(200, svc.downloadBatch(t, seg[7] ?? ""), "text/csv; charset=utf-8", {
        "content-disposition": `attachment; filename="${seg[7] ?? "batch"}.csv"`,
      });
    }
    if (path.startsWith("/apis/policy-sets/v1/policy/ssp/") && seg.length === 9) {
      allow("PATCH");
      return json(
        svc.batchAction(t, caller, seg[6] ?? "", seg[7] ?? "", seg[8] ?? "", ifMatch, {
          fourEyes: this.settings.four_eyes,
          versionStep: this.settings.version_step,
        }),
      );
    }
    if (path === "/apis/oingest-approval/v1/pending") {
      allow("GET");
      return json(svc.pendingApprovals(t, caller));
    }
    if (path === "/apis/oingest-approval/v1/action") {
      allow("POST");
      return json(svc.approvalAction(t, caller, parseJson(raw)));
    }
    if (path === "/apis/errortransactions/v1/" || path === "/apis/errortransactions/v1") {
      allow("POST");
      return json(svc.errorTransactions(t, parseJson(raw)));
    }
    return this.resource(caller, method, path, raw, ifMatch);
  }

  /** A path none of the spec's endpoints takes: a resource's brought beside them, else none. */
  private resource(caller: Caller, method: string, path: string, raw: string, ifMatch: string | undefined): Reply {
    for (const r of this.resources) {
      const out = r.answer({ method, path, body: () => parseJson(raw), ifMatch, caller });
      if (out !== undefined) return new Reply(200, out);
    }
    throw new EmuError(404, `no such endpoint: ${method} ${path}`);
  }

  private authenticate(req: IncomingMessage, t: TenantState): Caller {
    const header = req.headers.authorization ?? "";
    const m = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header);
    if (!m) throw new EmuError(401, header ? "malformed Authorization header" : "a bearer token is required");
    const rec = this.state.tokens[m[1] ?? ""];
    if (!rec || rec.kind !== "access") throw new EmuError(401, "unknown access token");
    if (rec.expiresAt <= Date.now()) throw new EmuError(401, "the access token has expired");
    if (rec.realm !== t.realm) throw new EmuError(401, "the access token belongs to another realm");
    const user = t.users[rec.user];
    if (!user) throw new EmuError(401, "the token's user no longer exists");
    return { user: rec.user, roles: user.roles };
  }

  private issue(kind: TokenRecord["kind"], base: Omit<TokenRecord, "kind" | "expiresAt">, ttlS: number): string {
    const email = this.tenant(base.realm)?.users[base.user]?.email;
    const value =
      kind === "access"
        ? accessToken({ ...base, ...(email ? { email } : {}), ttlS, opaque: this.settings.opaque_tokens })
        : `rt.${randomBytes(24).toString("base64url")}`;
    this.state.tokens[value] = { ...base, kind, expiresAt: Date.now() + ttlS * 1000 };
    return value;
  }

  /** The authorization endpoint of the implicit flow (src/emulator/authorize.ts): its pages, never
   *  cached or framed; a sign-in names its user in the journal. */
  private authorizePage(req: IncomingMessage, url: URL, method: string, realm: string, raw: string, entry: JournalEntry): Reply {
    const form =
      method === "POST" && (req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")
        ? new URLSearchParams(raw)
        : new URLSearchParams();
    const page = authorize(this.tenant(realm), method, url.searchParams, form, (user, clientId, nonce) => {
      entry.realm = realm;
      entry.user = user;
      return this.issueImplicit(`http://${req.headers.host ?? "127.0.0.1"}/auth/realms/${realm}`, realm, user, clientId, nonce);
    });
    const headers: Record<string, string> = {
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      ...(page.location ? { location: page.location } : {}),
    };
    return new Reply(page.status, page.html, "text/html; charset=utf-8", headers);
  }

  /** The key the implicit flow's tokens are signed with (HS256): the emulator's own, for this run. */
  private readonly signingKey = randomBytes(32);

  /** An access token of the implicit flow: a JWT as Keycloak issues one (the user in preferred_username
   *  and sub, the client in azp, the sign-in's nonce), bound to its realm and user as every token is. No
   *  refresh token: the implicit flow has none. */
  private issueImplicit(
    issuer: string,
    realm: string,
    user: string,
    clientId: string,
    nonce: string | undefined,
  ): { token: string; expiresIn: number; session: string } {
    const now = Date.now();
    for (const [k, v] of Object.entries(this.state.tokens)) if (v.expiresAt <= now) delete this.state.tokens[k];
    const session = randomUUID();
    const iat = Math.floor(now / 1000);
    const sub = subjectOf(realm, user);
    const claims = {
      exp: iat + this.accessTtlS,
      iat,
      auth_time: iat,
      jti: randomUUID(),
      iss: issuer,
      aud: "account",
      sub,
      typ: "Bearer",
      azp: clientId,
      ...(nonce === undefined ? {} : { nonce }),
      session_state: session,
      sid: session,
      scope: "openid profile email",
      preferred_username: user,
    };
    const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString("base64url");
    const unsigned = `${part({ alg: "HS256", typ: "JWT", kid: "emulator" })}.${part(claims)}`;
    const token = `${unsigned}.${createHmac("sha256", this.signingKey).update(unsigned).digest("base64url")}`;
    this.state.tokens[token] = { kind: "access", realm, user, clientId, session, expiresAt: now + this.accessTtlS * 1000 };
    this.persist();
    return { token, expiresIn: this.accessTtlS, session };
  }

  private token(realm: string, contentType: string, raw: string, entry: JournalEntry): Reply {
    const fail = (status: number, error: string, description: string): Reply => new Reply(status, { error, error_description: description });
    const t = this.tenant(realm);
    if (!t) return fail(404, "invalid_realm", "realm not found");
    if (!contentType.startsWith("application/x-www-form-urlencoded"))
      return fail(400, "invalid_request", "content type must be application/x-www-form-urlencoded");
    const form = new URLSearchParams(raw);
    const clientId = form.get("client_id") ?? "";
    // Whose sign-in the request carried, as the journal shows it: the realm, the client, the user named.
    entry.realm = realm;
    entry.client = clientId;
    if (form.get("username")) entry.user = form.get("username") ?? "";
    if (!clientId || t.clients[clientId] === undefined || t.clients[clientId] !== form.get("client_secret")) {
      return fail(401, "invalid_client", "invalid client credentials");
    }
    const now = Date.now();
    for (const [k, v] of Object.entries(this.state.tokens)) if (v.expiresAt <= now) delete this.state.tokens[k];
    let user: string;
    let session: string;
    const grant = form.get("grant_type");
    if (grant === "password") {
      user = userNamed(t, form.get("username") ?? "");
      const u = t.users[user];
      if (!u || u.password !== form.get("password")) return fail(401, "invalid_grant", "invalid user credentials");
      session = randomUUID();
    } else if (grant === "refresh_token") {
      const rt = form.get("refresh_token") ?? "";
      const rec = this.state.tokens[rt];
      if (!rec || rec.kind !== "refresh" || rec.realm !== realm || rec.clientId !== clientId) return fail(400, "invalid_grant", "invalid refresh token");
      if (rec.expiresAt <= now) return fail(400, "invalid_grant", "refresh token expired");
      delete this.state.tokens[rt];
      user = rec.user;
      session = rec.session;
    } else {
      return fail(400, "unsupported_grant_type", "grant_type must be password or refresh_token");
    }
    const base = { realm, user, clientId, session };
    const access = this.issue("access", base, this.accessTtlS);
    const refresh = this.issue("refresh", base, this.refreshTtlS);
    this.persist();
    return new Reply(200, {
      access_token: access,
      expires_in: this.accessTtlS,
      refresh_expires_in: this.refreshTtlS,
      refresh_token: refresh,
      token_type: "Bearer",
      "not-before-policy": 0,
      session_state: session,
      scope: "openid profile email",
    });
  }

  /** POST /__admin/reset: a seed or a whole state; the faults, the journal and the settings as at start,
   *  and the requests held by a latency fault dropped (they were sent to the state that is gone). */
  private reset(b: { seed?: string; state?: EmulatorState }): Reply {
    if (b.state) {
      const problem = checkState(b.state);
      if (problem) throw new EmuError(400, `not an emulator state: ${problem}`, [{ field: "state", message: problem }]);
      this.state = b.state;
    } else {
      const seed = b.seed ?? "demo";
      if (!SEEDS.includes(seed as SeedName)) throw new EmuError(400, `seed must be one of ${SEEDS.join(", ")}`);
      this.state = seedState(seed as SeedName);
    }
    this.resets++;
    this.journalClears++;
    this.faults.clear();
    this.release();
    this.journal = [];
    this.settings = { ...this.startSettings };
    this.persist();
    return new Reply(200, { status: "reset" });
  }

  private admin(method: string, path: string, raw: string, url: URL): Reply {
    const body = (): unknown => (raw.trim() ? parseJson(raw) : {});
    if (path === "/__admin/reset" && method === "POST") return this.reset(body() as { seed?: string; state?: EmulatorState });
    if (path === "/__admin/settings") {
      if (method === "POST") {
        const b = body() as Partial<Record<keyof EmulatorSettings, unknown>>;
        checkSettings(b, this.settings);
        Object.assign(this.settings, b);
      } else if (method !== "GET") throw new EmuError(405, `${method} is not allowed on ${path}`);
      return new Reply(200, this.settings);
    }
    if (path === "/__admin/state" && method === "GET") return new Reply(200, this.state);
    if (path === "/__admin/requests") {
      if (method === "DELETE") {
        this.journalClears++;
        this.journal = [];
        return new Reply(200, { status: "cleared" });
      }
      const since = Number(url.searchParams.get("since") ?? 0);
      return new Reply(
        200,
        this.journal.filter((e) => e.seq > since),
      );
    }
    if (path === "/__admin/faults") {
      if (method === "GET") return new Reply(200, { faults: this.faults.list() });
      if (method === "DELETE") {
        this.faults.clear();
        this.release();
        return new Reply(200, { status: "cleared" });
      }
      if (method === "POST") {
        const parsed = parseFaults(body());
        if (typeof parsed === "string") throw new EmuError(400, parsed);
        this.applyTokenFaults(parsed.faults);
        this.faults.set(parsed.faults, parsed.seed, parsed.replace);
        this.release();
        return new Reply(200, { faults: this.faults.list() });
      }
    }
    if (path === "/__admin/uploads" && method === "POST") return new Reply(200, this.upload(body()));
    throw new EmuError(404, `no such admin endpoint: ${method} ${path}`);
  }

  private applyTokenFaults(faults: Fault[]): void {
    for (const f of faults) {
      if (f.kind !== "token_expiry") continue;
      if (f.access_ttl_s !== undefined) this.accessTtlS = f.access_ttl_s;
      if (f.refresh_ttl_s !== undefined) this.refreshTtlS = f.refresh_ttl_s;
      if (f.expire_now !== false) {
        for (const rec of Object.values(this.state.tokens)) {
          if (rec.kind === "access" || f.include_refresh) rec.expiresAt = 0;
        }
      }
    }
  }

  private upload(raw: unknown): object {
    const realm = (raw as { realm?: unknown } | null)?.realm;
    const t = typeof realm === "string" ? this.tenant(realm) : this.state.tenants[0];
    if (!t) throw new EmuError(404, "unknown tenant");
    const out = svc.uploadFile(this.state, t, raw);
    this.persist();
    return out;
  }
}

export async function startEmulator(opts: EmulatorOptions): Promise<RunningEmulator & { emulator: Emulator }> {
  const emulator = new Emulator(
    opts.state,
    opts.statePath,
    opts.accessTtlS,
    opts.refreshTtlS,
    opts.profile,
    { ...DEFAULT_SETTINGS, if_match: opts.honourIfMatch !== false, four_eyes: opts.fourEyes === true },
    opts.rateLimit,
  );
  emulator.resources.push(...(opts.resources ?? []));
  if (opts.statePath) saveStateFile(opts.statePath, opts.state);
  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    emulator.handle(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 4010, opts.host ?? "127.0.0.1", () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    server,
    emulator,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
