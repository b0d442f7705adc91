/** The emulator's HTTP server: each request journaled, the faults and the rate limit in front, the sign-in
 *  (./auth.ts) and the admin endpoints (./admin.ts), and every signed-in API request handed to the
 *  resources in turn, one module each (./resource.ts), the spec's first and then those brought beside
 *  them; the literal profile over their answers. */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { adminAnswer, type AdminHost, type JournalEntry } from "./admin.js";
import { manualUpload, approvals } from "./approvals.js";
import { EmulatorAuth } from "./auth.js";
import { errorTransactionsResource } from "./error-transactions.js";
import { FaultTable, TokenBucket, type Fault } from "./faults.js";
import { literalAnswer, literalRefusal, type Profile } from "./profile.js";
import { isLoopback, omitted, parseJson, readBody, Reply, tooMany, trickle } from "./reply.js";
import { brought, type ApiRequest, type ApiResource, type EmulatorResource } from "./resource.js";
import { EmuError } from "./service.js";
import { DEFAULT_SETTINGS, type EmulatorSettings } from "./settings.js";
import { sspPolicies } from "./ssp.js";
import { saveStateFile, type EmulatorState, type TenantState } from "./state.js";
import { tenantConfigurations } from "./tenant-configurations.js";

export type { EmulatorResource, EmulatorSettings, JournalEntry };
export { DEFAULT_SETTINGS };

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

export interface RateLimitOptions {
  rate: number;
  burst: number;
  retryAfter: boolean;
}

export interface RunningEmulator {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** The spec's resources, each one module, asked in this order. */
const SPEC_RESOURCES: readonly ApiResource[] = [tenantConfigurations, sspPolicies, approvals, errorTransactionsResource];

const JOURNAL_MAX = 20_000;
const API = "/apis/";

export class Emulator implements AdminHost {
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
  private readonly gateway: { bucket: TokenBucket; retryAfter: boolean } | undefined;
  private readonly auth: EmulatorAuth;
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
    this.auth = new EmulatorAuth(this, accessTtlS, refreshTtlS);
    this.settings = { ...startSettings };
  }

  persist(): void {
    if (this.statePath) saveStateFile(this.statePath, this.state);
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

  release(): void {
    for (const h of [...this.held]) if (!this.faults.has(h.fault)) h.done();
  }

  reset(state: EmulatorState): void {
    this.state = state;
    this.resets++;
    this.journalClears++;
    this.faults.clear();
    this.release();
    this.journal = [];
    this.settings = { ...this.startSettings };
    this.persist();
  }

  clearJournal(): void {
    this.journalClears++;
    this.journal = [];
  }

  expireTokens(faults: Fault[]): void {
    this.auth.expire(faults);
  }

  upload(raw: unknown): object {
    const out = manualUpload(this.state, raw);
    this.persist();
    return out;
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
      return adminAnswer(this, method, path, raw, url);
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
    const signIn = this.auth.answer(req, url, method, raw, entry);
    if (signIn) return signIn;
    let t: TenantState | undefined = this.state.tenants[0];
    let rest = path;
    const prefixed = /^\/tenants\/([^/]+)(\/.*)$/.exec(path);
    if (prefixed) {
      t = this.state.tenants.find((x) => x.realm === decodeURIComponent(prefixed[1] ?? ""));
      rest = prefixed[2] ?? "/";
      if (!t) throw new EmuError(404, "unknown tenant");
    }
    if (!t || !rest.startsWith(API)) throw new EmuError(404, `no such endpoint: ${method} ${path}`);
    const caller = this.auth.authenticate(req, t);
    entry.realm = t.realm;
    entry.user = caller.user;
    const resources = [...SPEC_RESOURCES, ...this.resources.map(brought)];
    const writes = method !== "GET" && !resources.some((r) => r.readsOnly?.(method, rest));
    const request: ApiRequest = {
      state: this.state,
      t,
      caller,
      method,
      path: rest,
      seg: rest.split("/").map((s) => decodeURIComponent(s)),
      query: (k) => url.searchParams.get(k) ?? undefined,
      body: () => parseJson(raw),
      ifMatch: this.settings.if_match ? (req.headers["if-match"] as string | undefined) : undefined,
      settings: this.settings,
    };
    let out: Reply;
    try {
      out = answer(resources, request);
    } catch (e) {
      if (!(this.profile === "literal" && writes && e instanceof EmuError && e.status !== 405)) throw e;
      return new Reply(200, literalRefusal(e.message, e.errors));
    }
    if (writes) this.persist();
    if (this.profile === "literal" && out.contentType === "application/json")
      return new Reply(out.status, literalAnswer(out.body), out.contentType, out.headers);
    return out;
  }
}

/** The first answer of the resources, in turn; 404 when none takes the path. */
function answer(resources: readonly ApiResource[], req: ApiRequest): Reply {
  for (const r of resources) {
    const out = r.answer(req);
    if (out) return out;
  }
  throw new EmuError(404, `no such endpoint: ${req.method} ${req.path}`);
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
