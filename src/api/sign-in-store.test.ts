import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findSignIn, forgetSignIns, keepSignIn, signInFile, signInFolder, sweepEnded } from "./sign-in-store.js";

const dirs: string[] = [];
const fresh = (): string => {
  const d = mkdtempSync(join(tmpdir(), "revsync-store-"));
  dirs.push(d);
  return join(d, "state", "revsync", "sign-ins");
};
afterEach(async () => {
  const { rmSync } = await import("node:fs");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const sandbox = { environment: "sandbox", baseUrl: "https://api.example.com", authUrl: "https://auth.example.com", realm: "acme" };
const NOW = Date.UTC(2026, 0, 1);
const token = (user: string, expiresAt = NOW + 300_000) => ({ token: `jwt-of-${user}`, user, expiresAt, clientId: "revsync" });

describe("where revsync login keeps a token", () => {
  it("on Linux under XDG_STATE_HOME (an absolute one), else ~/.local/state; elsewhere under the home folder", () => {
    expect(signInFolder({ HOME: "/home/ann", XDG_STATE_HOME: "/xdg/state" }, "linux")).toBe("/xdg/state/revsync/sign-ins");
    expect(signInFolder({ HOME: "/home/ann", XDG_STATE_HOME: "relative" }, "linux")).toBe("/home/ann/.local/state/revsync/sign-ins");
    expect(signInFolder({ HOME: "/Users/ann", XDG_STATE_HOME: "/xdg/state" }, "darwin")).toBe("/Users/ann/.revsync/sign-ins");
  });

  it("one file per environment and role, 0600 in folders of 0700; found again only for the same environment, URLs and realm", () => {
    const folder = fresh();
    const path = keepSignIn(folder, sandbox, "signer", token("alice"), NOW);
    keepSignIn(folder, sandbox, "approver", token("bob"), NOW);
    expect(path).toBe(signInFile(folder, sandbox, "signer"));
    expect(readdirSync(folder).sort()).toEqual([
      expect.stringMatching(/^sandbox\.approver\.[0-9a-f]{16}\.json$/),
      expect.stringMatching(/^sandbox\.signer\.[0-9a-f]{16}\.json$/),
    ]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(join(folder, "..")).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(path, "utf8"))).toMatchObject({
      environment: "sandbox",
      role: "signer",
      user: "alice",
      expires_at: "2026-01-01T00:05:00.000Z",
    });
    expect(findSignIn(folder, sandbox, "signer", NOW)).toEqual({ kind: "live", token: "jwt-of-alice", user: "alice", expiresAt: NOW + 300_000, path });
    expect(findSignIn(folder, { ...sandbox, baseUrl: "HTTPS://API.example.com/" }, "approver", NOW)).toMatchObject({ user: "bob" });
    for (const other of [
      { environment: "production" },
      { baseUrl: "https://elsewhere.example.com" },
      { authUrl: "https://auth2.example.com" },
      { realm: "acme2" },
    ])
      expect(findSignIn(folder, { ...sandbox, ...other }, "signer", NOW)).toBeUndefined();
  });

  it("a token that has ended is removed when found, and by a sweep; logout removes both roles", () => {
    const folder = fresh();
    keepSignIn(folder, sandbox, "signer", token("alice"), NOW);
    expect(findSignIn(folder, sandbox, "signer", NOW + 300_000)).toEqual({ kind: "ended", expiresAt: NOW + 300_000 });
    expect(readdirSync(folder)).toEqual([]);
    keepSignIn(folder, sandbox, "signer", token("alice", NOW + 1000), NOW);
    keepSignIn(folder, { ...sandbox, environment: "prod" }, "signer", token("alice", NOW + 9000), NOW);
    sweepEnded(folder, NOW + 5000);
    expect(readdirSync(folder)).toEqual([expect.stringMatching(/^prod\.signer\./)]);
    keepSignIn(folder, sandbox, "signer", token("alice"), NOW);
    keepSignIn(folder, sandbox, "approver", token("bob"), NOW);
    expect(forgetSignIns(folder, sandbox)).toEqual(["signer", "approver"]);
    expect(forgetSignIns(folder, sandbox)).toEqual([]);
    expect(findSignIn(folder, sandbox, "signer", NOW)).toBeUndefined();
  });

  it("a file others may read, or a link, is never used; a folder others may read is made private again", () => {
    const folder = fresh();
    const path = keepSignIn(folder, sandbox, "signer", token("alice"), NOW);
    chmodSync(path, 0o644);
    expect(() => findSignIn(folder, sandbox, "signer", NOW)).toThrow(/is not used: others may read or write it \(mode 0644, not 0600\)/);
    const approver = signInFile(folder, sandbox, "approver");
    symlinkSync(path, approver);
    expect(() => findSignIn(folder, sandbox, "approver", NOW)).toThrow(/is not used: it is a symbolic link/);
    chmodSync(folder, 0o755);
    keepSignIn(folder, { ...sandbox, environment: "x" }, "signer", token("alice"), NOW);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
  });
});
