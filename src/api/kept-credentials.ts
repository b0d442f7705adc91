import { shellQuote } from "../shell-quote.js";
import { UserError } from "../errors.js";
import type { Credentials } from "./auth.js";
import type { Found, Role, SignInTarget } from "./sign-in-store.js";

/** What a run takes of a token `revsync login` kept (docs/decisions.md, "Variables win over a kept
 *  sign-in"): credentials in the environment win, as what a run is given for itself (a CI job, one
 *  command); the kept token is used when the environment names nobody for that role, and only for the
 *  environment it was kept for. A kept token that has ended is an error that says to sign in again, never
 *  a reason to try other credentials. Which variables name somebody, and which environment's they are,
 *  environmentCredentials (credentials.ts) says; here, what a kept token gives. */

/** The roles of the variables that name a user of each role, and so win over a kept token: revsync's own
 *  (the client id and secret alone name nobody: login needs the client id too), and the approver's; each
 *  the environment's own variable or the shared one (REVSYNC_PRODUCTION_USERNAME, REVSYNC_USERNAME). */
export const NAMING_ROLES = {
  signer: ["TOKEN", "USERNAME", "PASSWORD"],
  approver: ["APPROVER_TOKEN", "APPROVER_USERNAME", "APPROVER_PASSWORD"],
} as const satisfies Record<Role, readonly string[]>;

/** The command that signs this environment's role in again. */
export function loginCommand(environment: string, role: Role): string {
  return `revsync login --env ${shellQuote(environment)}${role === "approver" ? " --approver" : ""}`;
}

/** The credentials of a kept token; an ended one is an error that says to sign in again. */
export function keptCredentials(found: Found, target: SignInTarget, role: Role): Credentials {
  const again = loginCommand(target.environment, role);
  if (found.kind === "ended")
    throw new UserError(
      `the sign-in of revsync login${role === "approver" ? " --approver" : ""} for environment ${JSON.stringify(target.environment)} ended at ${new Date(found.expiresAt).toISOString()} (its token lives only as long as the service gave it); nothing was sent`,
      `sign in again: ${again}`,
    );
  return { kind: "token", token: found.token, ...(found.user ? { user: found.user } : {}), login: { expiresAt: found.expiresAt, again } };
}

/** The words said once when variables win over a live kept token. */
export function passedOverWords(found: Found | undefined, given: readonly string[], target: SignInTarget, role: Role): string | undefined {
  if (found?.kind !== "live" || !given.length) return undefined;
  return `${given.join(" and ")} ${given.length > 1 ? "are" : "is"} set, so ${role === "approver" ? "the approver identity" : "this run"} signs in with ${given.length > 1 ? "them" : "it"}, not with the sign-in revsync login${role === "approver" ? " --approver" : ""} kept for environment ${JSON.stringify(target.environment)}${found.user ? ` (${found.user})` : ""}; unset ${given.length > 1 ? "them" : "it"} to use that one`;
}
