import { shellQuote } from "../shell-quote.js";
import { UserError } from "../errors.js";
import { approverFromEnv, approverNamed, credentialsFromEnv, type Credentials } from "./auth.js";
import { findSignIn, type Found, type Role, type SignInTarget } from "./sign-in-store.js";

/** Which credentials a run signs in with, where `revsync login` may have kept a token
 *  (docs/decisions.md, "Variables win over a kept sign-in"): credentials in the environment win, as what
 *  a run is given for itself (a CI job, one command); the kept token is used when the environment names
 *  nobody for that role, and only for the environment it was kept for. A kept token that has ended is
 *  an error that says to sign in again, never a reason to try other credentials. */

/** The variables that name a user of each role, and so win over a kept token: revsync's own (the client
 *  id and secret alone name nobody: login needs the client id too), and the approver's. */
export const NAMING_VARIABLES: Record<Role, readonly string[]> = {
  signer: ["REVSYNC_TOKEN", "REVSYNC_USERNAME", "REVSYNC_PASSWORD"],
  approver: ["REVSYNC_APPROVER_TOKEN", "REVSYNC_APPROVER_USERNAME", "REVSYNC_APPROVER_PASSWORD"],
};

export interface Resolved<C> {
  credentials: C;
  /** Said once on stderr: a kept token passed over for variables of the environment. */
  passedOver?: string;
}

/** The command that signs this environment's role in again. */
export function loginCommand(environment: string, role: Role): string {
  return `revsync login --env ${shellQuote(environment)}${role === "approver" ? " --approver" : ""}`;
}

/** revsync's own sign-in: the environment's variables, else the token kept for this environment. */
export function signerCredentials(penv: NodeJS.ProcessEnv, target: SignInTarget, folder: string, now: number): Resolved<Credentials> {
  const found = findSignIn(folder, target, "signer", now);
  const given = NAMING_VARIABLES.signer.filter((n) => penv[n]);
  if (given.length) return { credentials: credentialsFromEnv(penv, target), ...passedOver(found, given, target, "signer") };
  if (found) return { credentials: kept(found, target, "signer") };
  return { credentials: credentialsFromEnv(penv, target) };
}

/** The approver identity (four eyes): the environment's REVSYNC_APPROVER_* variables, else the token
 *  kept by `revsync login --approver`; undefined when neither gives one. */
export function approverCredentials(penv: NodeJS.ProcessEnv, target: SignInTarget, folder: string, now: number): Resolved<Credentials | undefined> {
  const found = findSignIn(folder, target, "approver", now);
  const given = NAMING_VARIABLES.approver.filter((n) => penv[n]);
  if (given.length) return { credentials: approverFromEnv(penv), ...passedOver(found, given, target, "approver") };
  return { credentials: found ? kept(found, target, "approver") : undefined };
}

/** Who the approver identity is, without its secret (plan names who will approve): the environment's
 *  variables, else a kept approver token that lives. */
export function approverNamedKept(penv: NodeJS.ProcessEnv, target: SignInTarget, folder: string, now: number): { configured: boolean; user: string | null } {
  const named = approverNamed(penv);
  if (named.configured || NAMING_VARIABLES.approver.some((n) => penv[n])) return named;
  const found = findSignIn(folder, target, "approver", now);
  return found?.kind === "live" ? { configured: true, user: found.user ?? null } : named;
}

function kept(found: Found, target: SignInTarget, role: Role): Credentials {
  const again = loginCommand(target.environment, role);
  if (found.kind === "ended")
    throw new UserError(
      `the sign-in of revsync login${role === "approver" ? " --approver" : ""} for environment ${JSON.stringify(target.environment)} ended at ${new Date(found.expiresAt).toISOString()} (its token lives only as long as the service gave it); nothing was sent`,
      `sign in again: ${again}`,
    );
  return { kind: "token", token: found.token, ...(found.user ? { user: found.user } : {}), login: { expiresAt: found.expiresAt, again } };
}

function passedOver(found: Found | undefined, given: readonly string[], target: SignInTarget, role: Role): { passedOver?: string } {
  if (found?.kind !== "live") return {};
  return {
    passedOver: `${given.join(" and ")} ${given.length > 1 ? "are" : "is"} set, so ${role === "approver" ? "the approver identity" : "this run"} signs in with ${given.length > 1 ? "them" : "it"}, not with the sign-in revsync login${role === "approver" ? " --approver" : ""} kept for environment ${JSON.stringify(target.environment)}${found.user ? ` (${found.user})` : ""}; unset ${given.length > 1 ? "them" : "it"} to use that one`,
  };
}
