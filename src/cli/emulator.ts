import { resolve } from "node:path";
import { SEEDS, seedState, type SeedName } from "../emulator/seed.js";
import { PROFILES, type Profile } from "../emulator/profile.js";
import { startEmulator } from "../emulator/server.js";
import { parseRateLimit } from "../emulator/faults.js";
import { loadStateFile } from "../emulator/state.js";
import { UserError } from "../errors.js";
import { numberOf } from "../number.js";
import type { Output } from "./output.js";

export interface EmulatorFlags {
  port: string;
  host: string;
  state?: string;
  seed: string;
  accessTtl?: string;
  refreshTtl?: string;
  profile: string;
  rateLimit?: string;
  retryAfter: boolean;
  ignoreIfMatch?: boolean;
  fourEyes?: boolean;
}

function int(flag: string, value: string, min: number, max: number): number {
  const n = numberOf(value) ?? NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new UserError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** Runs the local service until SIGINT/SIGTERM. Resolves with the exit code. */
export async function runEmulator(flags: EmulatorFlags, out: Output): Promise<number> {
  if (!SEEDS.includes(flags.seed as SeedName)) throw new UserError(`--seed must be one of ${SEEDS.join(", ")}, got ${JSON.stringify(flags.seed)}`);
  if (!PROFILES.includes(flags.profile as Profile)) throw new UserError(`--profile must be default or literal, got ${JSON.stringify(flags.profile)}`);
  const port = int("--port", flags.port, 0, 65535);
  const limit = flags.rateLimit === undefined ? undefined : parseRateLimit(flags.rateLimit);
  if (flags.rateLimit !== undefined && !limit)
    throw new UserError(`--rate-limit must be requests per second with an optional burst, such as 25/s or 25/s,10; got ${JSON.stringify(flags.rateLimit)}`);
  const statePath = flags.state ? resolve(out.io.cwd, flags.state) : undefined;
  let state;
  try {
    state = statePath ? loadStateFile(statePath) : undefined;
  } catch (e) {
    throw new UserError(`cannot read --state ${flags.state}: ${(e as Error).message}`);
  }
  const running = await startEmulator({
    state: state ?? seedState(flags.seed as SeedName),
    statePath,
    host: flags.host,
    port,
    accessTtlS: flags.accessTtl ? int("--access-ttl", flags.accessTtl, 1, 86_400) : undefined,
    refreshTtlS: flags.refreshTtl ? int("--refresh-ttl", flags.refreshTtl, 1, 604_800) : undefined,
    profile: flags.profile as Profile,
    rateLimit: limit && { ...limit, retryAfter: flags.retryAfter },
    honourIfMatch: !flags.ignoreIfMatch,
    fourEyes: !!flags.fourEyes,
  }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "EADDRINUSE") throw new UserError(`port ${port} on ${flags.host} is in use: pick another with --port (0 picks a free one)`);
    throw e;
  });
  const realms = running.emulator.state.tenants.map((t) => t.realm);
  out.out(`base_url ${running.url}`);
  out.out(`auth_url ${running.url}`);
  for (const realm of realms.slice(1)) out.out(`base_url[${realm}] ${running.url}/tenants/${realm}`);
  out.out(`token_url ${running.url}/auth/realms/${realms[0]}/protocol/openid-connect/token`);
  out.info(
    `revsync emulator: ${state ? `state from ${statePath}` : `seed ${flags.seed}`}${statePath ? `, saved to ${statePath}` : ", in memory"}, profile ${flags.profile}${flags.ignoreIfMatch ? ", If-Match ignored" : ""}${flags.fourEyes ? ", four eyes (a batch's reviewer or uploader cannot approve it)" : ""}${limit ? `, rate limit ${limit.rate}/s (burst ${limit.burst}${flags.retryAfter ? "" : ", no Retry-After"})` : ""}. Ctrl-C stops it.`,
  );
  return new Promise<number>((done) => {
    const stop = (): void => {
      void running.close().then(() => done(0));
    };
    out.io.signals.once("SIGINT", stop);
    out.io.signals.once("SIGTERM", stop);
  });
}
