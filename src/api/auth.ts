import { ApiError } from "../errors.js";
import type { TokenResponse } from "../schema/generated/api.js";
import type { Clock } from "./clock.js";

export type Credentials =
  | {
      kind: "password";
      clientId: string;
      clientSecret: string;
      username: string;
      password: string;
      /** The variables they came from, in words for a refused sign-in (never their values). */
      from?: string;
    }
  /** `user`: REVSYNC_USER, the user to name when the token itself names none. `login`: a token that
   *  `revsync login` kept, which lives until `expiresAt` (epoch ms) and is never renewed: `again` is the
   *  command that signs in anew, for the error that says so. */
  | { kind: "token"; token: string; user?: string; login?: KeptLogin };

/** What a token of `revsync login` carries beside itself: until when it lives, and how to get another. */
export interface KeptLogin {
  expiresAt: number;
  again: string;
}

/** The secrets revsync reads from the environment: the service's client secret, the passwords and
 *  tokens of both identities, and the CI tokens read for four eyes. Every output redacts their values. */
export const SECRET_VARIABLES = [
  "REVSYNC_CLIENT_SECRET",
  "REVSYNC_PASSWORD",
  "REVSYNC_TOKEN",
  "REVSYNC_APPROVER_PASSWORD",
  "REVSYNC_APPROVER_TOKEN",
  "GITHUB_TOKEN",
  "GITLAB_API_TOKEN",
] as const;

/** The variables that make revsync somebody: the service's client and user, a token, the approver's,
 *  and the CI tokens it reads a pull request's approvals with. No file ever reads them as a ${VAR}: a
 *  policy file or revsync.yaml that names one is an error (docs/decisions.md, "What a policy file may
 *  read"). */
export const SIGN_IN_VARIABLES: ReadonlySet<string> = new Set([
  "REVSYNC_CLIENT_ID",
  "REVSYNC_USERNAME",
  "REVSYNC_USER",
  "REVSYNC_APPROVER_USERNAME",
  "REVSYNC_APPROVER_USER",
  ...SECRET_VARIABLES,
]);

/** The variables that give apply its approver identity, in words for a fix. */
export const APPROVER_FIX = "set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user";

/** The claims that name a token's user, in the order revsync names the user by: the user name, the
 *  subject id, the e-mail (an OpenID Connect provider's, Keycloak's among them). */
const NAME_CLAIMS = ["preferred_username", "sub", "email"] as const;

/** Every name a bearer token gives its user (preferred_username, sub, email), read without verifying it
 *  (the service verifies it): who the service's token says the user is, by each name the service may
 *  record them by. Empty for a token that is not a JWT or names nobody. */
export function tokenNames(token: string): string[] {
  const claims = tokenClaims(token);
  const names = NAME_CLAIMS.map((k) => claims?.[k]).filter((v): v is string => typeof v === "string" && v.trim() !== "");
  return [...new Set(names)];
}

/** The user a bearer token names, read without verifying it (the service verifies it): a JWT's
 *  `preferred_username`, else its `sub`. A token that is not a JWT, or names nobody, gives undefined. */
export function tokenUser(token: string): string | undefined {
  const claims = tokenClaims(token);
  for (const k of ["preferred_username", "sub"]) {
    const v = claims?.[k];
    if (typeof v === "string" && v.trim() !== "") return v;
  }
  return undefined;
}

/** A JWT's claims, read without verifying its signature (the service verifies it); undefined for a
 *  token that is not a JWT whose claims are a JSON object. */
export function tokenClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split(".");
  const part = parts[1];
  if (parts.length !== 3 || !part) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as unknown;
    return claims && typeof claims === "object" && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    // Not a JWT: no claims.
    return undefined;
  }
}

export type TokenPoster = (form: URLSearchParams) => Promise<{ status: number; body: unknown }>;

interface Held {
  value: string;
  expiresAt: number;
}

/** Owns the access and refresh tokens: refreshes before expiry, falls back to a new password grant,
 *  and shares one token request among all concurrent callers. */
export class TokenManager {
  private access: Held | undefined;
  private refresh: Held | undefined;
  private inflight: Promise<string> | undefined;
  /** The user as the run's token names it (a password grant's, once signed in; a static token's). */
  private named: { user: string | undefined; names: string[] } | undefined;
  /** Where `username` comes from: the password grant the service signed in (`sign-in`), a JWT's claims
   *  revsync reads without verifying them (`token claims`), or a variable (`variable`: REVSYNC_USER,
   *  REVSYNC_APPROVER_USER). Only the service's own answers confirm a token's user. */
  readonly usernameFrom: "sign-in" | "token claims" | "variable" | undefined;

  constructor(
    private readonly creds: Credentials,
    private readonly post: TokenPoster,
    private readonly clock: Clock,
    private readonly onSecret: (s: string) => void,
    private readonly log: (line: string) => void,
    /** Called when the service accepted a password grant, before its token is used: a check that may
     *  only be made then throws here (a secret too short to be kept out of the output, refused only once
     *  the service said it is the right one: a wrong one is "sign-in refused"). */
    private readonly signedIn?: () => void,
  ) {
    if (creds.kind === "token") {
      onSecret(creds.token);
      this.named = { user: tokenUser(creds.token), names: tokenNames(creds.token) };
      this.usernameFrom = this.named.user ? "token claims" : creds.user ? "variable" : undefined;
    } else {
      onSecret(creds.clientSecret);
      onSecret(creds.password);
      this.usernameFrom = "sign-in";
    }
  }

  /** The signed-in user: as the token the service issued names it (its preferred_username, else its
   *  sub: a password grant signed in by e-mail is the user the token names), else the password grant's
   *  username until it has signed in; with a static token the user its claims name, else REVSYNC_USER;
   *  undefined when none does. */
  get username(): string | undefined {
    if (this.named?.user) return this.named.user;
    return this.creds.kind === "token" ? this.creds.user : this.creds.username;
  }

  /** Every name the token names its user by (preferred_username, sub, email: docs/security.md, "Who the
   *  service says you are"), for four eyes to compare with who prepared a batch; undefined where no
   *  token names anybody (an opaque token, or a password grant not yet signed in). Never a variable. */
  get identity(): string[] | undefined {
    return this.named?.names.length ? this.named.names : undefined;
  }

  get isStatic(): boolean {
    return this.creds.kind === "token";
  }

  /** The token of `revsync login` this sign-in sends, when it is one. */
  get login(): KeptLogin | undefined {
    return this.creds.kind === "token" ? this.creds.login : undefined;
  }

  /** Why a token of `revsync login` may not be sent any more (it has lived its lifetime), in words;
   *  undefined while it lives, and for any other sign-in. Such a token is never renewed, nor replaced
   *  by other credentials: the person signs in again. */
  loginEnded(): string | undefined {
    const login = this.login;
    if (!login || this.clock.now() < login.expiresAt) return undefined;
    return `the sign-in of revsync login${this.username ? ` (${this.username})` : ""} ended at ${new Date(login.expiresAt).toISOString()}: its token lives only as long as the service gave it`;
  }

  async token(): Promise<string> {
    if (this.creds.kind === "token") return this.creds.token;
    if (this.access && this.clock.now() < this.access.expiresAt) return this.access.value;
    this.inflight ??= this.obtain().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** Forget an access token that the service refused, unless a newer one replaced it already. */
  invalidate(used: string): void {
    if (this.access?.value === used) this.access = undefined;
  }

  private async obtain(): Promise<string> {
    if (this.creds.kind === "token") return this.creds.token;
    if (this.refresh && this.clock.now() < this.refresh.expiresAt) {
      const form = new URLSearchParams({
        grant_type: "refresh_token",
        client_id: this.creds.clientId,
        client_secret: this.creds.clientSecret,
        refresh_token: this.refresh.value,
      });
      const res = await this.post(form);
      if (res.status === 200) {
        this.log("auth: access token refreshed");
        return this.accept(res.body);
      }
      this.log(`auth: refresh refused (${res.status}); signing in again`);
      this.refresh = undefined;
    }
    const form = new URLSearchParams({
      grant_type: "password",
      client_id: this.creds.clientId,
      client_secret: this.creds.clientSecret,
      username: this.creds.username,
      password: this.creds.password,
    });
    const res = await this.post(form);
    if (res.status !== 200) {
      const b = (res.body ?? {}) as { error?: string; error_description?: string };
      throw new ApiError({
        method: "POST",
        path: "token endpoint",
        status: res.status,
        message: `sign-in refused: ${b.error_description ?? b.error ?? "no reason given"}`,
        ...(this.creds.from ? { hint: `check ${this.creds.from}: the service refused them` } : {}),
      });
    }
    this.log("auth: signed in with the password grant");
    this.signedIn?.();
    return this.accept(res.body);
  }

  private accept(body: unknown): string {
    const t = body as TokenResponse;
    this.onSecret(t.access_token);
    this.named = { user: tokenUser(t.access_token), names: tokenNames(t.access_token) };
    if (t.refresh_token) this.onSecret(t.refresh_token);
    const now = this.clock.now();
    // Renew a little early: a tenth of the lifetime, at most 30 s.
    const early = (s: number): number => Math.min(30_000, s * 100);
    this.access = { value: t.access_token, expiresAt: now + t.expires_in * 1000 - early(t.expires_in) };
    this.refresh =
      t.refresh_token && t.refresh_expires_in
        ? { value: t.refresh_token, expiresAt: now + t.refresh_expires_in * 1000 - early(t.refresh_expires_in) }
        : undefined;
    return t.access_token;
  }
}
