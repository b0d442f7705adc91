/** The emulator's access tokens: JWTs that name their user by the claims an OpenID Connect provider
 *  (Keycloak, the spec's token URL) gives, `sub`, `preferred_username` and `email`, so that a client
 *  can tell who the service says it is. The emulator keeps every token it issued and looks each one up
 *  as a whole (it never reads the claims back); the signature part is random, so no token can be
 *  guessed. A tenant may also issue opaque tokens that name nobody (the opaque_tokens setting). */
import { createHash, randomBytes } from "node:crypto";

const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString("base64url");

/** A user's stable subject id in a realm, in the form Keycloak gives (a UUID's shape): the same for every
 *  token of the user, whichever flow issued it. */
export function subjectOf(realm: string, user: string): string {
  return createHash("sha256")
    .update(`${realm}\n${user}`)
    .digest("hex")
    .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12}).*$/, "$1-$2-$3-$4-$5");
}

/** An access token for `user` of `realm`: a JWT naming them, or with `opaque` a random string. */
export function accessToken(o: { realm: string; user: string; email?: string; clientId: string; session: string; ttlS: number; opaque: boolean }): string {
  if (o.opaque) return `at.${randomBytes(24).toString("base64url")}`;
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    exp: now + o.ttlS,
    iat: now,
    jti: randomBytes(8).toString("hex"),
    iss: `revsync-emulator/realms/${o.realm}`,
    sub: subjectOf(o.realm, o.user),
    typ: "Bearer",
    azp: o.clientId,
    session_state: o.session,
    preferred_username: o.user,
    ...(o.email ? { email: o.email } : {}),
  };
  return `${part({ alg: "HS256", typ: "JWT" })}.${part(claims)}.${randomBytes(24).toString("base64url")}`;
}
