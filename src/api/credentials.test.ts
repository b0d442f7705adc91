import { describe, expect, it } from "vitest";
import { credentialPrefix, environmentCredentials, isCredentialVariable, secretVariablesIn } from "./credentials.js";

const shared = { REVSYNC_CLIENT_ID: "revsync", REVSYNC_CLIENT_SECRET: "shared-secret", REVSYNC_USERNAME: "alice", REVSYNC_PASSWORD: "alice-password" };

describe("an environment's credentials", () => {
  it("the prefix: REVSYNC_ and the name upper-cased, every other character as _; or the one revsync.yaml names", () => {
    expect(credentialPrefix("production")).toBe("REVSYNC_PRODUCTION");
    expect(credentialPrefix("eu-west.2")).toBe("REVSYNC_EU_WEST_2");
    expect(credentialPrefix("zürich")).toBe("REVSYNC_Z_RICH");
    expect(credentialPrefix("production", "REVSYNC_ACME_PROD")).toBe("REVSYNC_ACME_PROD");
  });

  it("its own variables win over the shared ones, part by part; another environment's are never read", () => {
    const env = { ...shared, REVSYNC_PRODUCTION_CLIENT_SECRET: "prod-secret", REVSYNC_PRODUCTION_USERNAME: "pat", REVSYNC_SANDBOX_PASSWORD: "sandbox-pw" };
    expect(environmentCredentials({ name: "production" }, env).signIn()).toEqual({
      kind: "password",
      clientId: "revsync",
      clientSecret: "prod-secret",
      username: "pat",
      password: "alice-password",
      from: 'REVSYNC_CLIENT_ID, REVSYNC_PRODUCTION_CLIENT_SECRET, REVSYNC_PRODUCTION_USERNAME and REVSYNC_PASSWORD (environment "production")',
    });
    expect(environmentCredentials({ name: "staging" }, env).signIn()).toMatchObject({
      clientSecret: "shared-secret",
      username: "alice",
      password: "alice-password",
    });
    const sandbox = environmentCredentials({ name: "sandbox" }, env);
    expect(sandbox.signIn()).toMatchObject({ clientSecret: "shared-secret", password: "sandbox-pw" });
    expect(sandbox.variable("PASSWORD")).toBe("REVSYNC_SANDBOX_PASSWORD");
    expect(sandbox.secrets.map((s) => s.name)).toEqual(["REVSYNC_CLIENT_SECRET", "REVSYNC_SANDBOX_PASSWORD"]);
  });

  it("its own password grant wins over a shared token; its own token over everything; a named prefix over the default", () => {
    const env = { ...shared, REVSYNC_TOKEN: "shared-token", REVSYNC_PRODUCTION_USERNAME: "pat", REVSYNC_ACME_PROD_TOKEN: "acme-token" };
    expect(environmentCredentials({ name: "production" }, env).signIn()).toMatchObject({ kind: "password", username: "pat" });
    expect(environmentCredentials({ name: "sandbox" }, env).signIn()).toMatchObject({ kind: "token", token: "shared-token" });
    expect(environmentCredentials({ name: "production", credentialPrefix: "REVSYNC_ACME_PROD" }, env).signIn()).toMatchObject({
      kind: "token",
      token: "acme-token",
    });
    expect(environmentCredentials({ name: "production", credentialPrefix: null }, env).signIn()).toMatchObject({ kind: "token", token: "shared-token" });
  });

  it("an empty variable is an unset one; what is missing is named as the environment's own where it set some", () => {
    const none = environmentCredentials({ name: "production" }, { REVSYNC_PRODUCTION_TOKEN: "" });
    expect(() => none.signIn()).toThrow(
      /^no credentials for environment "production": set REVSYNC_CLIENT_ID, REVSYNC_CLIENT_SECRET, REVSYNC_USERNAME, REVSYNC_PASSWORD/,
    );
    const half = environmentCredentials({ name: "production" }, { REVSYNC_PRODUCTION_USERNAME: "pat" });
    expect(() => half.signIn()).toThrow(/set REVSYNC_PRODUCTION_CLIENT_ID \(or REVSYNC_CLIENT_ID\), .* REVSYNC_PRODUCTION_PASSWORD \(or REVSYNC_PASSWORD\)/);
  });

  it("the approver: its own, else the shared one, with the environment's client", () => {
    const env = { ...shared, REVSYNC_PRODUCTION_CLIENT_SECRET: "prod-secret", REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "bob-password" };
    expect(environmentCredentials({ name: "production" }, env).approver()).toMatchObject({ username: "bob", clientSecret: "prod-secret" });
    const own = { ...env, REVSYNC_PRODUCTION_APPROVER_USERNAME: "erin" };
    expect(() => environmentCredentials({ name: "production" }, own).approver()).not.toThrow();
    expect(environmentCredentials({ name: "production" }, own).approverNamed()).toEqual({ configured: true, user: "erin" });
    expect(environmentCredentials({ name: "sandbox" }, { REVSYNC_SANDBOX_APPROVER_USERNAME: "erin" }).approver).toThrow(
      /approver identity is incomplete: set REVSYNC_SANDBOX_APPROVER_PASSWORD \(or REVSYNC_APPROVER_PASSWORD\)/,
    );
  });

  it("credential variables, which no file reads, and secrets, which no output shows", () => {
    for (const name of ["REVSYNC_PASSWORD", "REVSYNC_PRODUCTION_PASSWORD", "REVSYNC_EU_WEST_APPROVER_TOKEN", "REVSYNC_ACME_PROD_CLIENT_ID", "GITHUB_TOKEN"])
      expect(isCredentialVariable(name, ["REVSYNC_ACME_PROD"])).toBe(true);
    for (const name of ["REVSYNC_BASE_URL", "REVSYNC_ENV", "REVSYNC_ACME_PROD_BASE_URL", "HW_FLOOR"])
      expect(isCredentialVariable(name, ["REVSYNC_ACME_PROD"])).toBe(false);
    expect(secretVariablesIn({ REVSYNC_PRODUCTION_PASSWORD: "x", REVSYNC_PRODUCTION_USERNAME: "pat", REVSYNC_BASE_URL: "u" }, ["ACME"])).toEqual([
      "ACME_APPROVER_PASSWORD",
      "ACME_APPROVER_TOKEN",
      "ACME_CLIENT_SECRET",
      "ACME_PASSWORD",
      "ACME_TOKEN",
      "REVSYNC_PRODUCTION_PASSWORD",
    ]);
  });
});
