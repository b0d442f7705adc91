import type { Governor } from "../api/governor.js";
import type { ResolvedEnv } from "../config/repo.js";
import { rateLimitOf } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

const rate = (r: number): string => (r >= 10 ? r.toFixed(0) : r.toFixed(1));
const requests = (n: number): string => (n === 1 ? "1 request" : `${n} requests`);

/** What the progress line adds while revsync waits on the service's rate limit ("" when it does not). */
export function waitingNote(g: Governor): string {
  if (!g.waiting) return "";
  const paused = g.pausedForMs;
  if (paused > 0) return `; waiting ${Math.max(1, Math.round(paused / 1000))} s on the service's rate limit (Retry-After)`;
  const r = g.currentRate;
  return `; waiting on the service's rate limit${r === undefined ? "" : ` (${rate(r)} requests/s)`}`;
}

/** The closing note of plan, apply and drift when the service turned requests away (undefined when none). */
export function turnedAwayNote(g: Governor, envName: string, configured: boolean): string | undefined {
  if (!g.turnedAway) return undefined;
  // What the service took from the first 429 on, measured: not the pacing rate, which probes above it.
  const r = g.achievedRate;
  const slowed = r === undefined ? "; revsync slowed down" : `; from then on it took about ${rate(r)} requests/s`;
  const hint = configured ? "" : `. If you know the limit, set rate_limit for environment ${JSON.stringify(envName)} in revsync.yaml (or --rate-limit)`;
  return `the service's rate limit turned away ${requests(g.turnedAway)} of ${g.sent} (429)${slowed}${hint}.`;
}

/** Says turnedAwayNote on stderr (a note: --quiet leaves it out). */
export function noteTurnedAway(g: Governor, env: ResolvedEnv, flags: GlobalFlags, out: Output): void {
  const note = turnedAwayNote(g, env.name, rateLimitOf(flags, env) !== undefined);
  if (note) out.info(`Note: ${note}`);
}
