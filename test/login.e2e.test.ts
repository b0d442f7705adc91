import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keepSignIn } from "../src/api/sign-in-store.js";
import { cli, removeDir, useEmulatorRepo } from "../src/testing/helpers.js";

// revsync login against the emulator's authorization endpoint, in process, with the browser's part
// played by fetch (the real browser: test/login.tools.test.ts): the form posted, the redirect's fragment
// handed to revsync's listener as its page does. Then the commands use the kept token, as that user.

const fx = useEmulatorRepo({ reset: true });
type Entry = { method: string; path: string; status: number; user?: string };

/** A fresh folder of kept sign-ins, and the environment a command runs with: the client id only (no
 *  password, no token), BROWSER a command that opens nothing. */
function person(extra: Record<string, string> = {}): { state: string; env: Record<string, string | undefined> } {
  const state = mkdtempSync(join(tmpdir(), "revsync-login-"));
  const env = {
    XDG_STATE_HOME: state,
    BROWSER: "true",
    REVSYNC_CLIENT_ID: "revsync",
    REVSYNC_CLIENT_SECRET: undefined,
    REVSYNC_USERNAME: undefined,
    REVSYNC_PASSWORD: undefined,
    REVSYNC_TOKEN: undefined,
    ...extra,
  };
  return { state, env };
}

/** What a browser does: the sign-in form posted, the redirect followed to revsync's page, which hands the
 *  fragment back. `state` replaces the state revsync sent (an answer to another sign-in). */
async function browser(address: string, user: string, opts: { state?: string } = {}): Promise<{ status: number; text: string }> {
  const url = new URL(address);
  if (opts.state) url.searchParams.set("state", opts.state);
  const form = await fetch(url);
  expect(form.status).toBe(200);
  expect(await form.text()).toContain('<form id="kc-form-login" method="post">');
  const signIn = await fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...Object.fromEntries(url.searchParams), username: user, password: `${user}-password` }).toString(),
  });
  expect(signIn.status).toBe(302);
  const back = new URL(signIn.headers.get("location") ?? "");
  expect(back.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect((await fetch(back)).headers.get("content-security-policy")).toContain("connect-src 'self'");
  const handed = await fetch(`${back.origin}${back.pathname}`, {
    method: "POST",
    headers: { origin: back.origin, "content-type": "text/plain" },
    body: back.hash.slice(1),
  });
  return { status: handed.status, text: await handed.text() };
}

/** revsync login, with the browser's part played once it prints the address and waits. */
async function signIn(env: Record<string, string | undefined>, user: string, args: string[] = [], opts: { state?: string } = {}) {
  let page: Promise<{ status: number; text: string }> | undefined;
  let stderrSoFar = "";
  const r = await cli(["login", ...args], {
    cwd: fx.repo,
    env,
    when: {
      stderr: (text) => {
        stderrSoFar = text;
        return text.includes("Waiting for the browser");
      },
      act: () => {
        const address = /^ {2}(http\S+)$/m.exec(stderrSoFar)?.[1] ?? "";
        page = browser(address, user, opts);
        page.catch(() => undefined);
      },
    },
  });
  return { r, page: await page };
}

const journal = (): Promise<Entry[]> => fx.emu.admin<Entry[]>("GET", "requests");

describe("revsync login, the browser played by fetch", () => {
  it("signs alice in; plan runs as alice on the kept token (0600, folder 0700), never shown; a token the service refuses is an error that says to sign in again, with no other sign-in tried; logout removes it", async () => {
    const { state, env } = person();
    try {
      const { r, page } = await signIn(env, "alice");
      expect(r.code, r.stderr).toBe(0);
      expect(page).toEqual({ status: 200, text: "Signed in to demo as alice. You may close this tab." });
      expect(r.stderr).toMatch(
        /^Opening your browser to sign in; if it does not open, open this address:\n {2}http:\/\/127\.0\.0\.1:\d+\/auth\/realms\/demo\/protocol\/openid-connect\/auth\?client_id=revsync&redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback&response_type=token&scope=openid&state=[\w-]{43}&nonce=[\w-]{43}$/m,
      );
      expect(r.stderr).toMatch(/^Signed in to environment "demo" as alice, until \d{4}-\d\d-\d\dT[\d:.]+Z; the token is kept, readable by you alone/m);
      const folder = join(state, "revsync", "sign-ins");
      const [file] = readdirSync(folder);
      expect(file).toMatch(/^demo\.signer\.[0-9a-f]{16}\.json$/);
      expect(statSync(folder).mode & 0o777).toBe(0o700);
      expect(statSync(join(state, "revsync")).mode & 0o777).toBe(0o700);
      expect(statSync(join(folder, file ?? "")).mode & 0o777).toBe(0o600);
      const kept = JSON.parse(readFileSync(join(folder, file ?? ""), "utf8"));
      expect(kept).toMatchObject({ environment: "demo", realm: "demo", role: "signer", user: "alice", client_id: "revsync" });
      expect(r.stdout + r.stderr).not.toContain(kept.access_token);
      const signedIn = (await journal()).filter((e) => e.path.endsWith("/openid-connect/auth"));
      expect(signedIn.map((e) => [e.method, e.status, e.user])).toEqual([
        ["GET", 200, undefined],
        ["POST", 302, "alice"],
      ]);

      await fx.emu.admin("DELETE", "requests");
      const plan = await cli(["plan", "--verbose"], { cwd: fx.repo, env });
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout + plan.stderr).not.toContain(kept.access_token);
      const sent = await journal();
      expect(sent.length).toBeGreaterThan(0);
      expect(new Set(sent.map((e) => e.user))).toEqual(new Set(["alice"]));

      // The service ends the token mid-way: the next command says so, and tries no other sign-in.
      await fx.emu.admin("POST", "faults", { kind: "token_expiry" });
      await fx.emu.admin("DELETE", "requests");
      const refused = await cli(["plan"], { cwd: fx.repo, env: { ...env, REVSYNC_CLIENT_SECRET: "demo-secret" } });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("the service refused the token of revsync login (it expired or was revoked); nothing was processed");
      expect(refused.stderr).toContain("Hint: sign in again: revsync login --env demo");
      expect((await journal()).filter((e) => e.path.endsWith("/token"))).toEqual([]);

      const out = await cli(["logout"], { cwd: fx.repo, env });
      expect(out.stderr).toBe('Signed out of environment "demo": removed the kept token of your sign-in.\n');
      expect(readdirSync(folder)).toEqual([]);
      const none = await cli(["plan"], { cwd: fx.repo, env });
      expect(none.code).toBe(1);
      expect(none.stderr).toContain("or sign in through a browser with revsync login");
    } finally {
      removeDir(state);
    }
  });

  it("an answer to another sign-in (its state not the one revsync sent) is refused, on the page and by the command: exit 1, nothing kept", async () => {
    const { state, env } = person();
    try {
      const { r, page } = await signIn(env, "alice", [], { state: "forged-state" });
      expect(r.code).toBe(1);
      expect(page?.status).toBe(400);
      expect(page?.text).toMatch(/^Not signed in: the answer's state is not the one revsync sent/);
      expect(r.stderr).toContain("Error: not signed in: the answer's state is not the one revsync sent: it answers another sign-in");
      expect(existsSync(join(state, "revsync", "sign-ins")) ? readdirSync(join(state, "revsync", "sign-ins")) : []).toEqual([]);
    } finally {
      removeDir(state);
    }
  });

  it("variables win over a kept sign-in, with a warning; a kept token that has ended is an error before anything is sent, and is removed", async () => {
    const { state, env } = person();
    try {
      const folder = join(state, "revsync", "sign-ins");
      const target = { environment: "demo", baseUrl: fx.emu.url, authUrl: fx.emu.url, realm: "demo" };
      keepSignIn(
        folder,
        target,
        "signer",
        { token: "at.kept-token-of-someone", user: "carol", expiresAt: Date.now() + 60_000, clientId: "revsync" },
        Date.now(),
      );
      await fx.emu.admin("DELETE", "requests");
      const bob = await cli(["plan"], {
        cwd: fx.repo,
        env: { ...env, REVSYNC_CLIENT_SECRET: "demo-secret", REVSYNC_USERNAME: "bob", REVSYNC_PASSWORD: "bob-password" },
      });
      expect(bob.code, bob.stderr).toBe(0);
      expect(bob.stderr).toContain(
        'Warning: REVSYNC_USERNAME and REVSYNC_PASSWORD are set, so this run signs in with them, not with the sign-in revsync login kept for environment "demo" (carol); unset them to use that one',
      );
      expect(new Set((await journal()).filter((e) => e.path.startsWith("/apis/")).map((e) => e.user))).toEqual(new Set(["bob"]));

      keepSignIn(
        folder,
        target,
        "signer",
        { token: "at.kept-token-of-someone", user: "carol", expiresAt: Date.now() - 1000, clientId: "revsync" },
        Date.now() - 301_000,
      );
      await fx.emu.admin("DELETE", "requests");
      const ended = await cli(["plan"], { cwd: fx.repo, env });
      expect(ended.code).toBe(1);
      expect(ended.stderr).toMatch(/Error: the sign-in of revsync login for environment "demo" ended at [\dT:.-]+Z .*; nothing was sent/);
      expect(ended.stderr).toContain("Hint: sign in again: revsync login --env demo");
      expect(await journal()).toEqual([]);
      expect(readdirSync(folder)).toEqual([]);
    } finally {
      removeDir(state);
    }
  });

  it("the emulator's authorization endpoint refuses an unknown client id and a redirect off this machine with a page, never a redirect", async () => {
    const base = `${fx.emu.url}/auth/realms/demo/protocol/openid-connect/auth?response_type=token&state=s`;
    const page = async (query: string) => {
      const r = await fetch(`${base}&${query}`, { redirect: "manual" });
      return { status: r.status, location: r.headers.get("location"), title: /<h1>(.*)<\/h1>/.exec(await r.text())?.[1] };
    };
    expect(await page("client_id=nobody&redirect_uri=http://127.0.0.1:9/callback")).toEqual({ status: 400, location: null, title: "Client not found" });
    for (const uri of ["https://evil.example/callback", "http://evil.example/callback", "http://127.0.0.1.evil.example/cb", "http://user@127.0.0.1:9/cb"])
      expect(await page(`client_id=revsync&redirect_uri=${encodeURIComponent(uri)}`)).toEqual({
        status: 400,
        location: null,
        title: "Invalid parameter: redirect_uri",
      });
    const wrong = await fetch(`${base}&client_id=revsync&redirect_uri=http://127.0.0.1:9/callback`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "client_id=revsync&redirect_uri=http://127.0.0.1:9/callback&response_type=token&state=s&username=alice&password=nope",
      redirect: "manual",
    });
    expect(wrong.status).toBe(200);
    expect(await wrong.text()).toContain('<p id="input-error" role="alert">Invalid username or password.</p>');
  });
});
