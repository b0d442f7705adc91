/** Fault injection for the emulator (README, "The emulator"): POST /__admin/faults. */
export type FaultKind = "latency" | "status" | "rate_limit" | "drop" | "error_array" | "token_expiry" | "success_status" | "trickle" | "omit" | "upload";

export interface Fault {
  kind: FaultKind;
  /** Only requests with this method (any when absent). */
  method?: string;
  /** Only requests whose path contains this text (any API or token request when absent). */
  path?: string;
  /** Only requests whose query string (decoded) contains this text. */
  query?: string;
  /** Only requests whose body contains this text. */
  body_contains?: string;
  /** Chance that a matching request is hit, 0..1 (default 1). */
  probability?: number;
  /** How many hits before the fault retires (default: unlimited). */
  times?: number;
  /** latency: added delay; trickle: the answer's body goes out one byte per latency_ms (default 1000). */
  latency_ms?: number;
  /** status: the status to answer (default 503); success_status: the 2xx to answer after processing
   *  the request as usual (default 204), with no body. */
  status?: number;
  /** rate_limit: Retry-After seconds (default 1; with `rate`, the seconds until the bucket holds a
   *  token again, at least 1); null sends no Retry-After. */
  retry_after?: number | null;
  /** rate_limit: a token bucket of this many requests per second instead of a 429 for every request:
   *  requests pass while it holds a token, and an empty bucket answers 429 at once. */
  rate?: number;
  /** rate_limit with rate: the bucket's size, full at the start (default: one second of `rate`). */
  burst?: number;
  /** drop: destroy the connection after the write was committed (default false: before). */
  after_commit?: boolean;
  /** token_expiry: lifetimes for tokens issued from now on, and whether to expire current ones. */
  access_ttl_s?: number;
  refresh_ttl_s?: number;
  expire_now?: boolean;
  include_refresh?: boolean;
  /** omit: handles the request as usual, then leaves this field out of the JSON answer wherever it stands
   *  (a field the interface does not promise, as a service may leave it out). */
  field?: string;
  /** upload: someone else's manual upload (the body of POST /__admin/uploads) that lands right before the
   *  matching request is handled, as a write made between revsync's read and its send would. */
  upload?: Record<string, unknown>;
}

const KINDS: FaultKind[] = ["latency", "status", "rate_limit", "drop", "error_array", "token_expiry", "success_status", "trickle", "omit", "upload"];

export function parseFaults(body: unknown): { faults: Fault[]; seed?: number; replace: boolean } | string {
  if (!body || typeof body !== "object") return "body must be an object {faults: [...], seed?, replace?}";
  const b = body as { faults?: unknown; seed?: unknown; replace?: unknown };
  const list = Array.isArray(b.faults) ? b.faults : [body];
  const faults: Fault[] = [];
  for (const [i, f] of list.entries()) {
    if (!f || typeof f !== "object") return `faults[${i}] must be an object`;
    const kind = (f as { kind?: unknown }).kind;
    if (!KINDS.includes(kind as FaultKind)) return `faults[${i}].kind must be one of ${KINDS.join(", ")}`;
    const { rate, burst, retry_after } = f as { rate?: unknown; burst?: unknown; retry_after?: unknown };
    if (rate !== undefined && (typeof rate !== "number" || !(rate > 0))) return `faults[${i}].rate must be a number of requests per second above 0`;
    if (burst !== undefined && (typeof burst !== "number" || !(burst >= 1))) return `faults[${i}].burst must be a number of requests, at least 1`;
    if (retry_after !== undefined && retry_after !== null && (typeof retry_after !== "number" || retry_after < 0))
      return `faults[${i}].retry_after must be a number of seconds, or null for none`;
    const field = (f as { field?: unknown }).field;
    if (kind === "omit" && (typeof field !== "string" || field === "")) return `faults[${i}].field must name the field an omit fault leaves out`;
    const upload = (f as { upload?: unknown }).upload;
    if (kind === "upload" && (!upload || typeof upload !== "object" || Array.isArray(upload)))
      return `faults[${i}].upload must be the body of an upload (an object, as POST /__admin/uploads takes)`;
    const p = (f as { probability?: unknown }).probability;
    if (p !== undefined && (typeof p !== "number" || p < 0 || p > 1)) return `faults[${i}].probability must be a number from 0 to 1`;
    faults.push(f as Fault);
  }
  if (b.seed !== undefined && typeof b.seed !== "number") return "seed must be a number";
  return { faults, seed: b.seed as number | undefined, replace: b.replace !== false };
}

/** mulberry32: a small seeded generator, so a chaos seed replays the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A gateway's rate limit: a bucket of `burst` tokens, refilled at `rate` per second; a request takes a
 *  token or is turned away. */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    readonly rate: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.at = now();
  }

  /** Takes a token: undefined when there was one, else the seconds until there is one (at least 1, as
   *  Retry-After counts whole seconds). */
  take(): number | undefined {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.rate) / 1000);
    this.at = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / this.rate));
  }
}

/** "25/s" or "25/s,10" (requests per second, and the burst): the emulator's --rate-limit. */
export function parseRateLimit(text: string): { rate: number; burst: number } | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*s\s*(?:,\s*(\d+)\s*)?$/.exec(text);
  if (!m) return undefined;
  const rate = Number(m[1]);
  const burst = m[2] === undefined ? Math.max(1, Math.ceil(rate)) : Number(m[2]);
  return rate > 0 && burst >= 1 ? { rate, burst } : undefined;
}

export class FaultTable {
  private faults: (Fault & { hits: number; bucket?: TokenBucket })[] = [];
  private random: () => number = Math.random;

  set(faults: Fault[], seed: number | undefined, replace: boolean): void {
    if (replace) this.faults = [];
    this.faults.push(
      ...faults.map((f) => ({
        ...f,
        hits: 0,
        bucket: f.kind === "rate_limit" && f.rate !== undefined ? new TokenBucket(f.rate, f.burst ?? Math.max(1, Math.ceil(f.rate))) : undefined,
      })),
    );
    if (seed !== undefined) this.random = seededRandom(seed);
  }

  clear(): void {
    this.faults = [];
    this.random = Math.random;
  }

  list(): Fault[] {
    return this.faults.map(({ bucket: _bucket, ...f }) => f);
  }

  /** Whether a fault pick returned is still set (not cleared, nor replaced by another set). */
  has(fault: Fault): boolean {
    return this.faults.some((f) => f === fault);
  }

  /** The faults that fire for this request, each counted once. */
  pick(method: string, path: string, body: string, query = ""): Fault[] {
    const fired: Fault[] = [];
    for (const f of this.faults) {
      if (f.kind === "token_expiry") continue;
      if (f.times !== undefined && f.hits >= f.times) continue;
      if (f.method && f.method.toUpperCase() !== method) continue;
      if (f.path && !path.includes(f.path)) continue;
      if (f.query && !query.includes(f.query)) continue;
      if (f.body_contains && !body.includes(f.body_contains)) continue;
      if ((f.probability ?? 1) < 1 && this.random() >= (f.probability ?? 1)) continue;
      let fault: Fault = f;
      if (f.bucket) {
        const wait = f.bucket.take();
        if (wait === undefined) continue;
        // A token bucket's Retry-After is the time until it holds a token again, unless the fault says.
        fault = { ...f, retry_after: f.retry_after === undefined ? wait : f.retry_after };
      }
      f.hits++;
      fired.push(fault);
    }
    return fired;
  }
}

/** A JSON answer without `field`, wherever it stands (an omit fault); the stored state is untouched. */
export function withoutField(body: unknown, field: string): unknown {
  if (Array.isArray(body)) return body.map((v) => withoutField(v, field));
  if (!body || typeof body !== "object") return body;
  return Object.fromEntries(Object.entries(body as Record<string, unknown>).flatMap(([k, v]) => (k === field ? [] : [[k, withoutField(v, field)]])));
}
