import { describe, expect, it } from "vitest";
import { TokenManager, tokenUser } from "./auth.js";
import { environmentCredentials } from "./credentials.js";
import { systemClock } from "./clock.js";

const jwt = (claims: object): string =>
  [{ alg: "RS256", typ: "JWT" }, claims].map((p) => Buffer.from(JSON.stringify(p)).toString("base64url")).join(".") + ".c2lnbmF0dXJl";

const manager = (env: NodeJS.ProcessEnv): TokenManager =>
  new TokenManager(
    environmentCredentials({ name: "default", credentialPrefix: null }, env).signIn(),
    async () => ({ status: 500, body: {} }),
    systemClock,
    () => undefined,
    () => undefined,
  );

describe("the signed-in user", () => {
  it("a JWT names its preferred_username, else its sub; read without verifying", () => {
    expect(tokenUser(jwt({ preferred_username: "dana", sub: "f81d4fae" }))).toBe("dana");
    expect(tokenUser(jwt({ sub: "f81d4fae" }))).toBe("f81d4fae");
    expect(tokenUser(jwt({ preferred_username: " ", email: "x@example.com" }))).toBeUndefined();
    expect(tokenUser("at.opaque-token")).toBeUndefined();
    expect(tokenUser("a.!!!.c")).toBeUndefined();
  });

  it("password grant: the username; static token: its claims, else REVSYNC_USER, else nobody", () => {
    const password = { REVSYNC_CLIENT_ID: "c", REVSYNC_CLIENT_SECRET: "s", REVSYNC_USERNAME: "alice", REVSYNC_PASSWORD: "p", REVSYNC_USER: "ignored" };
    expect(manager(password).username).toBe("alice");
    expect(manager({ REVSYNC_TOKEN: jwt({ preferred_username: "dana" }), REVSYNC_USER: "erin" }).username).toBe("dana");
    expect(manager({ REVSYNC_TOKEN: "opaque", REVSYNC_USER: "erin" }).username).toBe("erin");
    expect(manager({ REVSYNC_TOKEN: "opaque" }).username).toBeUndefined();
  });
});
