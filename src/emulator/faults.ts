/** Fault injection for the emulator (README, "The emulator"): POST /__admin/faults. */
export type FaultKind = "latency" | "status" | "rate_limit" | "drop" | "error_array" | "token_expiry" | "success_status";

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
  /** latency: added delay. */
  latency_ms?: number;
  /** status: the status to answer (default 503); success_status: the 2xx to answer after processing
   *  the request as usual (default 204), with no body. */
  status?: number;
  /** rate_limit: Retry-After seconds (default 1). */
  retry_after?: number;
  /** drop: destroy the connection after the write was committed (default false: before). */
  after_commit?: boolean;
  /** token_expiry: lifetimes for tokens issued from now on, and whether to expire current ones. */
  access_ttl_s?: number;
  refresh_ttl_s?: number;
  expire_now?: boolean;
  include_refresh?: boolean;
}

const KINDS: FaultKind[] = ["latency", "status", "rate_limit", "drop", "error_array", "token_expiry", "success_status"];

export function parseFaults(body: unknown): { faults: Fault[]; seed?: number; replace: boolean } | string {
  if (!body || typeof body !== "object") return "body must be an object {faults: [...], seed?, replace?}";
  const b = body as { faults?: unknown; seed?: unknown; replace?: unknown };
  const list = Array.isArray(b.faults) ? b.faults : [body];
  const faults: Fault[] = [];
  for (const [i, f] of list.entries()) {
    if (!f || typeof f !== "object") return `faults[${i}] must be an object`;
    const kind = (f as { kind?: unknown }).kind;
    if (!KINDS.includes(kind as FaultKind)) return `faults[${i}].kind must be one of ${KINDS.join(", ")}`;
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

export class FaultTable {
  private faults: (Fault & { hits: number })[] = [];
  private random: () => number = Math.random;

  set(faults: Fault[], seed: number | undefined, replace: boolean): void {
    if (replace) this.faults = [];
    this.faults.push(...faults.map((f) => ({ ...f, hits: 0 })));
    if (seed !== undefined) this.random = seededRandom(seed);
  }

  clear(): void {
    this.faults = [];
    this.random = Math.random;
  }

  list(): Fault[] {
    return this.faults;
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
      f.hits++;
      fired.push(f);
    }
    return fired;
  }
}
