import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { UserError } from "../errors.js";
import { writeFileAtomic } from "../fs-atomic.js";
import { serviceUrl } from "../tenant.js";

/** Where `revsync login` keeps a person's token until it ends (docs/security.md, "Signing in through a
 *  browser"): one file per environment and role, readable by the user alone (0600, in a folder of
 *  0700), removed by `revsync logout` and by any run that finds it ended. */

/** Who a kept token signs in: revsync's own sign-in, or the four-eyes approver. */
export type Role = "signer" | "approver";
export const ROLES: readonly Role[] = ["signer", "approver"];

/** The environment a token was kept for, as this run resolves it: a token is used only for the same
 *  environment name, base URL, auth URL and realm it was signed in for, so it never reaches another
 *  service. */
export interface SignInTarget {
  environment: string;
  baseUrl: string;
  authUrl: string;
  realm: string;
}

/** The file's content. */
interface Kept {
  format_version: "1";
  environment: string;
  base_url: string;
  auth_url: string;
  realm: string;
  role: Role;
  user: string | null;
  client_id: string;
  signed_in_at: string;
  expires_at: string;
  access_token: string;
}

/** A kept token, as a run finds it: alive (with whom it names), or ended (and removed). */
export type Found = { kind: "live"; token: string; user: string | undefined; expiresAt: number; path: string } | { kind: "ended"; expiresAt: number };

/** The folder of kept sign-ins: on Linux under XDG_STATE_HOME (default ~/.local/state), as a token is
 *  state that should outlive a shell, not a setting; elsewhere under the home folder. */
export function signInFolder(penv: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  const home = penv.HOME || penv.USERPROFILE || homedir();
  if (platform === "linux") {
    const state = penv.XDG_STATE_HOME && isAbsolute(penv.XDG_STATE_HOME) ? penv.XDG_STATE_HOME : join(home, ".local", "state");
    return join(state, "revsync", "sign-ins");
  }
  return join(home, ".revsync", "sign-ins");
}

/** The file of one environment's token for one role: the environment's name where a person can read it,
 *  and a hash of everything the token is bound to. */
export function signInFile(folder: string, target: SignInTarget, role: Role): string {
  const bound = [target.environment, serviceUrl(target.baseUrl), serviceUrl(target.authUrl), target.realm].join("\n");
  const hash = createHash("sha256").update(bound).digest("hex").slice(0, 16);
  const name = target.environment.replace(/[^A-Za-z0-9_-]+/g, "-").slice(0, 40) || "env";
  return join(folder, `${name}.${role}.${hash}.json`);
}

/** Keeps a token for its lifetime; returns the file. */
export function keepSignIn(
  folder: string,
  target: SignInTarget,
  role: Role,
  token: { token: string; user: string | undefined; expiresAt: number; clientId: string },
  now: number,
): string {
  privateFolder(folder);
  const kept: Kept = {
    format_version: "1",
    environment: target.environment,
    base_url: target.baseUrl,
    auth_url: target.authUrl,
    realm: target.realm,
    role,
    user: token.user ?? null,
    client_id: token.clientId,
    signed_in_at: new Date(now).toISOString(),
    expires_at: new Date(token.expiresAt).toISOString(),
    access_token: token.token,
  };
  const path = signInFile(folder, target, role);
  writeFileAtomic(path, JSON.stringify(kept, null, 2) + "\n", 0o600, true);
  return path;
}

/** The token kept for this environment and role, if any. One that has ended is removed (kept for its
 *  lifetime only). A file others could read or write, or a link, is refused, naming it, never used. */
export function findSignIn(folder: string, target: SignInTarget, role: Role, now: number, platform: NodeJS.Platform = process.platform): Found | undefined {
  const path = signInFile(folder, target, role);
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch {
    return undefined;
  }
  const problem = platform === "win32" ? undefined : privacyProblem(stats, 0o600);
  if (problem)
    throw new UserError(
      `the sign-in kept at ${path} is not used: ${problem}; a token someone else may have read is no one's proof of who you are`,
      `remove it (revsync logout --env ${target.environment}) and sign in again`,
    );
  const kept = readKept(path);
  if (!kept || !sameTarget(kept, target, role)) return undefined;
  const expiresAt = Date.parse(kept.expires_at);
  if (!(expiresAt > now)) {
    rmSync(path, { force: true });
    return { kind: "ended", expiresAt: Number.isNaN(expiresAt) ? 0 : expiresAt };
  }
  return { kind: "live", token: kept.access_token, user: kept.user ?? undefined, expiresAt, path };
}

/** Removes this environment's kept tokens, both roles; returns the roles that had one. */
export function forgetSignIns(folder: string, target: SignInTarget): Role[] {
  const removed: Role[] = [];
  for (const role of ROLES) {
    const path = signInFile(folder, target, role);
    try {
      lstatSync(path);
    } catch {
      continue;
    }
    rmSync(path, { force: true });
    removed.push(role);
  }
  return removed;
}

/** Removes every kept token of the folder that has ended (whatever environment it was for). */
export function sweepEnded(folder: string, now: number): void {
  let names: string[];
  try {
    names = readdirSync(folder).filter((n) => n.endsWith(".json"));
  } catch {
    return;
  }
  for (const name of names) {
    const kept = readKept(join(folder, name));
    if (kept && !(Date.parse(kept.expires_at) > now)) rmSync(join(folder, name), { force: true });
  }
}

function readKept(path: string): Kept | undefined {
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as Partial<Kept> | null;
    return v && v.format_version === "1" && typeof v.access_token === "string" && typeof v.expires_at === "string" ? (v as Kept) : undefined;
  } catch {
    return undefined;
  }
}

function sameTarget(kept: Kept, target: SignInTarget, role: Role): boolean {
  return (
    kept.role === role &&
    kept.environment === target.environment &&
    kept.realm === target.realm &&
    serviceUrl(kept.base_url) === serviceUrl(target.baseUrl) &&
    serviceUrl(kept.auth_url) === serviceUrl(target.authUrl)
  );
}

/** Why a file or folder is not private to this user: a link, someone else's, or open to others. */
function privacyProblem(stats: Stats, mode: number): string | undefined {
  if (stats.isSymbolicLink()) return "it is a symbolic link";
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) return `it belongs to another user (uid ${stats.uid})`;
  if (stats.mode & 0o077)
    return `others may read or write it (mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")}, not ${mode.toString(8).padStart(4, "0")})`;
  return undefined;
}

/** Makes the folder (and revsync's folder above it) 0700 and checks that it is this user's own. */
function privateFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  for (const dir of [dirname(folder), folder]) {
    const stats = lstatSync(dir);
    if (stats.isSymbolicLink() || !stats.isDirectory())
      throw new UserError(`${dir} is not a folder of its own (a link or a file): revsync keeps no token there`);
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) throw new UserError(`${dir} belongs to another user (uid ${stats.uid}): revsync keeps no token there`);
    if (process.platform !== "win32" && stats.mode & 0o077) chmodSync(dir, 0o700);
  }
}
