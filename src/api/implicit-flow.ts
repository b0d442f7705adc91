import { randomBytes, timingSafeEqual } from "node:crypto";
import { readWhole } from "../number.js";
import { tokenClaims, tokenUser } from "./auth.js";
import { checkUrl, realmEndpoint } from "./core.js";

/** The spec's implicit flow (5.6) as revsync runs it: the person signs in through a browser at the
 *  realm's authorization endpoint, which sends the browser back to revsync's loopback listener with the
 *  token in the URL's fragment. Pure: the request's URL, and what revsync accepts of the answer
 *  (docs/security.md, "Signing in through a browser"). */

/** The two values that bind an answer to the sign-in revsync started: `state`, which the answer must
 *  carry back (a page elsewhere cannot hand revsync a token of its choosing), and `nonce`, which the
 *  token itself must carry (a token issued for another sign-in is refused). Each 256 random bits. */
export interface FlowBinding {
  state: string;
  nonce: string;
}

export function newBinding(random: (n: number) => Buffer = randomBytes): FlowBinding {
  return { state: random(32).toString("base64url"), nonce: random(32).toString("base64url") };
}

/** The authorization request: the realm's `…/protocol/openid-connect/auth`, with the client id,
 *  `response_type=token` and a redirect to revsync's listener. */
export function authorizeUrl(target: { authUrl: string; realm: string; clientId: string }, redirectUri: string, binding: FlowBinding): string {
  const url = new URL(realmEndpoint(checkUrl("auth_url", target.authUrl), target.realm, "auth"));
  url.search = new URLSearchParams({
    client_id: target.clientId,
    redirect_uri: redirectUri,
    response_type: "token",
    scope: "openid",
    state: binding.state,
    nonce: binding.nonce,
  }).toString();
  return url.href;
}

/** A token the answer gave, accepted: until when it lives (epoch ms) and whom its claims name. */
export interface AcceptedToken {
  token: string;
  expiresAt: number;
  user: string | undefined;
}

/** What revsync makes of the fragment the browser handed back: the token, or why it is refused (words
 *  that never hold the token). */
export type Answer = { ok: true; accepted: AcceptedToken } | { ok: false; reason: string };

/** The longest text of the service a refusal repeats (its error and description). */
const SHOWN = 200;

/** Checks the answer of the authorization endpoint (the URL fragment, as the listener's page handed it
 *  back) against the sign-in revsync started: the state first (an answer to another sign-in is refused
 *  whatever it says), then an error the service gave, then the token: a bearer token, with a lifetime,
 *  that carries the nonce. It lives for `expires_in` seconds from `now`, or less when its own `exp`
 *  says so. */
export function checkAnswer(fragment: string, binding: FlowBinding, now: number): Answer {
  const p = new URLSearchParams(fragment.replace(/^#/, ""));
  const state = p.get("state");
  if (state === null || !same(state, binding.state))
    return {
      ok: false,
      reason: `the answer's state ${state === null ? "is missing" : "is not the one revsync sent"}: it answers another sign-in (an earlier tab, or a page that is not the service's) and was refused; nothing was kept`,
    };
  const error = p.get("error");
  if (error !== null) {
    const description = p.get("error_description");
    return { ok: false, reason: `the service refused the sign-in: ${shown(error)}${description ? ` (${shown(description)})` : ""}` };
  }
  const token = p.get("access_token");
  if (!token) return { ok: false, reason: "the answer holds no access_token; nothing was kept" };
  const type = p.get("token_type");
  if (type !== null && type.toLowerCase() !== "bearer")
    return { ok: false, reason: `the token is of type ${JSON.stringify(shown(type))}, not a bearer token (spec 5.5); nothing was kept` };
  const claims = tokenClaims(token);
  if (typeof claims?.nonce !== "string" || !same(claims.nonce, binding.nonce))
    return {
      ok: false,
      reason: `the token ${claims ? (claims.nonce === undefined ? "carries no nonce" : "carries another nonce than revsync sent") : "is not a JWT, so it cannot show the nonce revsync sent"}: it was not issued for this sign-in and was refused; nothing was kept`,
    };
  const expiresAt = lifetime(p.get("expires_in"), claims.exp, now);
  if (expiresAt === undefined)
    return {
      ok: false,
      reason:
        "the answer gives the token no lifetime (expires_in, a whole number of seconds above 0): revsync keeps a token for its lifetime only; nothing was kept",
    };
  if (expiresAt <= now) return { ok: false, reason: "the token has expired already (its exp claim is past); nothing was kept" };
  return { ok: true, accepted: { token, expiresAt, user: tokenUser(token) } };
}

/** When a token ends: `expires_in` seconds from now, or its `exp` claim when that is sooner. */
function lifetime(expiresIn: string | null, exp: unknown, now: number): number | undefined {
  const read = expiresIn === null ? undefined : readWhole(expiresIn);
  const seconds = read?.ok ? read.value : undefined;
  if (seconds === undefined || seconds <= 0) return undefined;
  const until = now + seconds * 1000;
  return typeof exp === "number" && Number.isFinite(exp) ? Math.min(until, exp * 1000) : until;
}

/** The service's words, on one line and of a bounded length (the terminal shows control characters as
 *  text; this keeps a refusal readable). */
function shown(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > SHOWN ? `${one.slice(0, SHOWN)}…` : one;
}

/** Equal, in a time that does not depend on where two values first differ. */
function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
