import { describe, expect, it } from "vitest";
import { authorizeUrl, checkAnswer, newBinding } from "./implicit-flow.js";

const jwt = (claims: object): string =>
  [{ alg: "HS256", typ: "JWT" }, claims].map((p) => Buffer.from(JSON.stringify(p)).toString("base64url")).join(".") + ".c2lnbmF0dXJl";
const binding = { state: "the-state", nonce: "the-nonce" };
const NOW = Date.UTC(2026, 0, 1);
const answer = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
const good = {
  state: "the-state",
  access_token: jwt({ nonce: "the-nonce", preferred_username: "alice", sub: "f81d4fae" }),
  token_type: "Bearer",
  expires_in: "300",
};

describe("the implicit flow's request and answer", () => {
  it("asks the realm's auth endpoint for a token, with the client id, the loopback redirect, state and nonce; each binding is new", () => {
    const url = new URL(
      authorizeUrl({ authUrl: "https://auth.example.com/base/", realm: "acme corp", clientId: "revsync" }, "http://127.0.0.1:5000/callback", binding),
    );
    expect(`${url.origin}${url.pathname}`).toBe("https://auth.example.com/base/auth/realms/acme%20corp/protocol/openid-connect/auth");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: "revsync",
      redirect_uri: "http://127.0.0.1:5000/callback",
      response_type: "token",
      scope: "openid",
      state: "the-state",
      nonce: "the-nonce",
    });
    expect(() => authorizeUrl({ authUrl: "http://auth.example.com", realm: "r", clientId: "c" }, "http://127.0.0.1:1/callback", binding)).toThrow(
      /only loopback hosts may use plain http/,
    );
    const [a, b] = [newBinding(), newBinding()];
    expect(a.state).toMatch(/^[\w-]{43}$/);
    expect(new Set([a.state, a.nonce, b.state, b.nonce]).size).toBe(4);
  });

  it("takes a bearer token that carries the nonce, for expires_in or its exp when sooner, naming its user", () => {
    expect(checkAnswer(answer(good), binding, NOW)).toEqual({ ok: true, accepted: { token: good.access_token, expiresAt: NOW + 300_000, user: "alice" } });
    const sooner = jwt({ nonce: "the-nonce", sub: "f81d4fae", exp: NOW / 1000 + 60 });
    expect(checkAnswer(`#${answer({ ...good, access_token: sooner })}`, binding, NOW)).toMatchObject({
      ok: true,
      accepted: { expiresAt: NOW + 60_000, user: "f81d4fae" },
    });
  });

  it("refuses an answer to another sign-in first, whatever else it holds, then the service's error, then a token not bound to this sign-in or without a lifetime; no reason holds the token", () => {
    const refusal = (fields: Record<string, string>): string => {
      const a = checkAnswer(answer(fields), binding, NOW);
      if (a.ok) throw new Error("accepted");
      expect(a.reason).not.toContain(fields.access_token ?? "\u0000");
      return a.reason;
    };
    expect(refusal({ ...good, state: "another" })).toMatch(/^the answer's state is not the one revsync sent: it answers another sign-in/);
    expect(refusal({ access_token: good.access_token })).toMatch(/^the answer's state is missing/);
    expect(refusal({ state: "other", error: "access_denied" })).toMatch(/^the answer's state is not the one/);
    expect(refusal({ state: "the-state", error: "access_denied", error_description: "User\ncancelled" })).toBe(
      "the service refused the sign-in: access_denied (User cancelled)",
    );
    expect(refusal({ state: "the-state" })).toBe("the answer holds no access_token; nothing was kept");
    expect(refusal({ ...good, token_type: "mac" })).toMatch(/^the token is of type "mac", not a bearer token/);
    expect(refusal({ ...good, access_token: jwt({ nonce: "another", sub: "x" }) })).toMatch(
      /^the token carries another nonce than revsync sent: it was not issued for this sign-in/,
    );
    expect(refusal({ ...good, access_token: jwt({ sub: "x" }) })).toMatch(/^the token carries no nonce/);
    expect(refusal({ ...good, access_token: "opaque-token-value" })).toMatch(/^the token is not a JWT, so it cannot show the nonce/);
    for (const expires_in of ["0", "-5", "1.5", "1e3", "soon"]) expect(refusal({ ...good, expires_in })).toMatch(/^the answer gives the token no lifetime/);
    const { expires_in: _left, ...without } = good;
    expect(refusal(without)).toMatch(/^the answer gives the token no lifetime/);
    expect(refusal({ ...good, access_token: jwt({ nonce: "the-nonce", exp: NOW / 1000 - 1 }) })).toMatch(/^the token has expired already/);
  });
});
