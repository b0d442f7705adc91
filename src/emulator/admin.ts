/** The emulator's own endpoints under /__admin/ (no token; loopback only): reset, the settings, the
 *  state, the journal of requests, the faults and a manual upload. */
import { parseFaults, type Fault, type FaultTable } from "./faults.js";
import { parseJson, Reply } from "./reply.js";
import { SEEDS, seedState, type SeedName } from "./seed.js";
import { EmuError } from "./service.js";
import { checkSettings, type EmulatorSettings } from "./settings.js";
import { checkState, type EmulatorState } from "./state.js";

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

/** What the admin endpoints act on. */
export interface AdminHost {
  readonly state: EmulatorState;
  readonly settings: EmulatorSettings;
  readonly faults: FaultTable;
  readonly journal: JournalEntry[];
  /** A new state: the faults, the journal and the settings as at start, the requests held dropped. */
  reset(state: EmulatorState): void;
  clearJournal(): void;
  /** Ends the wait of each request held by a fault no longer set. */
  release(): void;
  /** token_expiry faults, applied to the sign-in. */
  expireTokens(faults: Fault[]): void;
  upload(raw: unknown): object;
}

/** POST /__admin/reset's body: a seed or a whole state. */
function stateOf(b: { seed?: string; state?: EmulatorState }): EmulatorState {
  if (b.state) {
    const problem = checkState(b.state);
    if (problem) throw new EmuError(400, `not an emulator state: ${problem}`, [{ field: "state", message: problem }]);
    return b.state;
  }
  const seed = b.seed ?? "demo";
  if (!SEEDS.includes(seed as SeedName)) throw new EmuError(400, `seed must be one of ${SEEDS.join(", ")}`);
  return seedState(seed as SeedName);
}

function faults(host: AdminHost, method: string, body: () => unknown): Reply | undefined {
  if (method === "GET") return new Reply(200, { faults: host.faults.list() });
  if (method === "DELETE") {
    host.faults.clear();
    host.release();
    return new Reply(200, { status: "cleared" });
  }
  if (method !== "POST") return undefined;
  const parsed = parseFaults(body());
  if (typeof parsed === "string") throw new EmuError(400, parsed);
  host.expireTokens(parsed.faults);
  host.faults.set(parsed.faults, parsed.seed, parsed.replace);
  host.release();
  return new Reply(200, { faults: host.faults.list() });
}

export function adminAnswer(host: AdminHost, method: string, path: string, raw: string, url: URL): Reply {
  const body = (): unknown => (raw.trim() ? parseJson(raw) : {});
  if (path === "/__admin/reset" && method === "POST") {
    host.reset(stateOf(body() as { seed?: string; state?: EmulatorState }));
    return new Reply(200, { status: "reset" });
  }
  if (path === "/__admin/settings") {
    if (method === "POST") {
      const b = body() as Partial<Record<keyof EmulatorSettings, unknown>>;
      checkSettings(b, host.settings);
      Object.assign(host.settings, b);
    } else if (method !== "GET") throw new EmuError(405, `${method} is not allowed on ${path}`);
    return new Reply(200, host.settings);
  }
  if (path === "/__admin/state" && method === "GET") return new Reply(200, host.state);
  if (path === "/__admin/requests") {
    if (method === "DELETE") {
      host.clearJournal();
      return new Reply(200, { status: "cleared" });
    }
    const since = Number(url.searchParams.get("since") ?? 0);
    return new Reply(
      200,
      host.journal.filter((e) => e.seq > since),
    );
  }
  const answer = path === "/__admin/faults" ? faults(host, method, body) : undefined;
  if (answer) return answer;
  if (path === "/__admin/uploads" && method === "POST") return new Reply(200, host.upload(body()));
  throw new EmuError(404, `no such admin endpoint: ${method} ${path}`);
}
