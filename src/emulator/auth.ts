/** Who a request is: the realm's token endpoint (spec 5: the password and refresh grants), its
 *  authorization endpoint (the implicit flow, ./authorize.ts), and the bearer token of every API request,
 *  checked against the tokens the emulator issued. */
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { authorize } from "./authorize.js";
import type { Fault } from "./faults.js";
import { Reply } from "./reply.js";
import { EmuError, type Caller } from "./service.js";
import type { EmulatorSettings } from "./settings.js";
import type { EmulatorState, TenantState, TokenRecord } from "./state.js";
import { accessToken, subjectOf } from "./tokens.js";

/** What a sign-in names in the journal: the realm, the client, the user. */
export interface SignInEntry {
  realm?: string;
  user?: string;
  client?: string;
}

/** What the sign-in reads of the emulator: its state (a reset replaces it) and settings, and where the
 *  state is saved. */
export interface AuthHost {
  readonly state: EmulatorState;
  readonly settings: EmulatorSettings;
  persist(): void;
}

/** The user a password grant names: by user name, or by e-mail (compared without case), as Keycloak
 *  signs a user in by either by default; "" matches nobody. */
function userNamed(t: TenantState, login: string): string {
  if (t.users[login] || !login.includes("@")) return login;
  const lower = login.toLowerCase();
  return Object.entries(t.users).find(([, u]) => u.email?.toLowerCase() === lower)?.[0] ?? login;
}

const AUTHORIZE = /^\/auth\/realms\/([^/]+)\/protocol\/openid-connect\/auth$/;
const TOKEN = /^\/auth\/realms\/([^/]+)\/protocol\/openid-connect\/token$/;

export class EmulatorAuth {
  /** The key the implicit flow's tokens are signed with (HS256): the emulator's own, for this run. */
  private readonly signingKey = randomBytes(32);

  constructor(
    private readonly host: AuthHost,
    private accessTtlS: number,
    private refreshTtlS: number,
  ) {}

  private tenant(realm: string): TenantState | undefined {
    return this.host.state.tenants.find((t) => t.realm === realm);
  }

  /** The answer of the token or the authorization endpoint, or undefined for any other path. */
  answer(req: IncomingMessage, url: URL, method: string, raw: string, entry: SignInEntry): Reply | undefined {
    const auth = AUTHORIZE.exec(url.pathname);
    if (auth) return this.authorizePage(req, url, method, decodeURIComponent(auth[1] ?? ""), raw, entry);
    const token = TOKEN.exec(url.pathname);
    if (!token) return undefined;
    if (method !== "POST") return new Reply(405, { error: "invalid_request", error_description: "use POST" });
    return this.token(decodeURIComponent(token[1] ?? ""), req.headers["content-type"] ?? "", raw, entry);
  }

  /** The caller of an API request to tenant `t`, by its bearer token (401 for any token that does not
   *  name a user of the tenant, now). */
  authenticate(req: IncomingMessage, t: TenantState): Caller {
    const header = req.headers.authorization ?? "";
    const m = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header);
    if (!m) throw new EmuError(401, header ? "malformed Authorization header" : "a bearer token is required");
    const rec = this.host.state.tokens[m[1] ?? ""];
    if (!rec || rec.kind !== "access") throw new EmuError(401, "unknown access token");
    if (rec.expiresAt <= Date.now()) throw new EmuError(401, "the access token has expired");
    if (rec.realm !== t.realm) throw new EmuError(401, "the access token belongs to another realm");
    const user = t.users[rec.user];
    if (!user) throw new EmuError(401, "the token's user no longer exists");
    return { user: rec.user, roles: user.roles };
  }

  /** token_expiry faults: the lifetimes of tokens issued from now on, and the current ones expired. */
  expire(faults: Fault[]): void {
    for (const f of faults) {
      if (f.kind !== "token_expiry") continue;
      if (f.access_ttl_s !== undefined) this.accessTtlS = f.access_ttl_s;
      if (f.refresh_ttl_s !== undefined) this.refreshTtlS = f.refresh_ttl_s;
      if (f.expire_now !== false) {
        for (const rec of Object.values(this.host.state.tokens)) {
          if (rec.kind === "access" || f.include_refresh) rec.expiresAt = 0;
        }
      }
    }
  }

  private issue(kind: TokenRecord["kind"], base: Omit<TokenRecord, "kind" | "expiresAt">, ttlS: number): string {
    const email = this.tenant(base.realm)?.users[base.user]?.email;
    const value =
      kind === "access"
        ? accessToken({ ...base, ...(email ? { email } : {}), ttlS, opaque: this.host.settings.opaque_tokens })
        : `rt.${randomBytes(24).toString("base64url")}`;
    this.host.state.tokens[value] = { ...base, kind, expiresAt: Date.now() + ttlS * 1000 };
    return value;
  }

  /** Tokens whose time is up, forgotten. */
  private sweep(now: number): void {
    for (const [k, v] of Object.entries(this.host.state.tokens)) if (v.expiresAt <= now) delete this.host.state.tokens[k];
  }

  /** The authorization endpoint of the implicit flow (src/emulator/authorize.ts): its pages, never
   *  cached or framed; a sign-in names its user in the journal. */
  private authorizePage(req: IncomingMessage, url: URL, method: string, realm: string, raw: string, entry: SignInEntry): Reply {
    const form =
      method === "POST" && (req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")
        ? new URLSearchParams(raw)
        : new URLSearchParams();
    const page = authorize(this.tenant(realm), method, url.searchParams, form, (user, clientId, nonce) => {
      entry.realm = realm;
      entry.user = user;
      return this.issueImplicit(`http://${req.headers.host ?? "127.0.0.1"}/auth/realms/${realm}`, realm, user, clientId, nonce);
    });
    const headers: Record<string, string> = {
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      ...(page.location ? { location: page.location } : {}),
    };
    return new Reply(page.status, page.html, "text/html; charset=utf-8", headers);
  }

  /** An access token of the implicit flow: a JWT as Keycloak issues one (the user in preferred_username
   *  and sub, the client in azp, the sign-in's nonce), bound to its realm and user as every token is. No
   *  refresh token: the implicit flow has none. */
  private issueImplicit(
    issuer: string,
    realm: string,
    user: string,
    clientId: string,
    nonce: string | undefined,
  ): { token: string; expiresIn: number; session: string } {
    const now = Date.now();
    this.sweep(now);
    const session = randomUUID();
    const iat = Math.floor(now / 1000);
    const sub = subjectOf(realm, user);
    const claims = {
      exp: iat + this.accessTtlS,
      iat,
      auth_time: iat,
      jti: randomUUID(),
      iss: issuer,
      aud: "account",
      sub,
      typ: "Bearer",
      azp: clientId,
      ...(nonce === undefined ? {} : { nonce }),
      session_state: session,
      sid: session,
      scope: "openid profile email",
      preferred_username: user,
    };
    const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString("base64url");
    const unsigned = `${part({ alg: "HS256", typ: "JWT", kid: "emulator" })}.${part(claims)}`;
    const token = `${unsigned}.${createHmac("sha256", this.signingKey).update(unsigned).digest("base64url")}`;
    this.host.state.tokens[token] = { kind: "access", realm, user, clientId, session, expiresAt: now + this.accessTtlS * 1000 };
    this.host.persist();
    return { token, expiresIn: this.accessTtlS, session };
  }

  /** Whose sign-in a grant is: the user of a password grant, or the user and session a refresh token
   *  carries; or the refusal. */
  private grant(t: TenantState, realm: string, clientId: string, form: URLSearchParams, now: number): { user: string; session: string } | Reply {
    const fail = (status: number, error: string, description: string): Reply => new Reply(status, { error, error_description: description });
    const grant = form.get("grant_type");
    if (grant === "password") {
      const user = userNamed(t, form.get("username") ?? "");
      const u = t.users[user];
      if (!u || u.password !== form.get("password")) return fail(401, "invalid_grant", "invalid user credentials");
      return { user, session: randomUUID() };
    }
    if (grant !== "refresh_token") return fail(400, "unsupported_grant_type", "grant_type must be password or refresh_token");
    const rt = form.get("refresh_token") ?? "";
    const rec = this.host.state.tokens[rt];
    if (!rec || rec.kind !== "refresh" || rec.realm !== realm || rec.clientId !== clientId) return fail(400, "invalid_grant", "invalid refresh token");
    if (rec.expiresAt <= now) return fail(400, "invalid_grant", "refresh token expired");
    delete this.host.state.tokens[rt];
    return { user: rec.user, session: rec.session };
  }

  private token(realm: string, contentType: string, raw: string, entry: SignInEntry): Reply {
    const fail = (status: number, error: string, description: string): Reply => new Reply(status, { error, error_description: description });
    const t = this.tenant(realm);
    if (!t) return fail(404, "invalid_realm", "realm not found");
    if (!contentType.startsWith("application/x-www-form-urlencoded"))
      return fail(400, "invalid_request", "content type must be application/x-www-form-urlencoded");
    const form = new URLSearchParams(raw);
    const clientId = form.get("client_id") ?? "";
    // Whose sign-in the request carried, as the journal shows it: the realm, the client, the user named.
    entry.realm = realm;
    entry.client = clientId;
    if (form.get("username")) entry.user = form.get("username") ?? "";
    if (!clientId || t.clients[clientId] === undefined || t.clients[clientId] !== form.get("client_secret")) {
      return fail(401, "invalid_client", "invalid client credentials");
    }
    const now = Date.now();
    this.sweep(now);
    const signedIn = this.grant(t, realm, clientId, form, now);
    if (signedIn instanceof Reply) return signedIn;
    const base = { realm, user: signedIn.user, clientId, session: signedIn.session };
    const access = this.issue("access", base, this.accessTtlS);
    const refresh = this.issue("refresh", base, this.refreshTtlS);
    this.host.persist();
    return new Reply(200, {
      access_token: access,
      expires_in: this.accessTtlS,
      refresh_expires_in: this.refreshTtlS,
      refresh_token: refresh,
      token_type: "Bearer",
      "not-before-policy": 0,
      session_state: signedIn.session,
      scope: "openid profile email",
    });
  }
}
