import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, hasTool, removeDir, useEmulatorRepo, type CliResult } from "../src/testing/helpers.js";

// revsync login through a real browser: Debian's Chromium, headless, driven by playwright-core (never a
// browser it downloads), against the emulator's sign-in form. BROWSER is a script that records the
// address revsync opens; Chromium goes there, the form is filled, the service sends the browser back to
// revsync's listener, whose page hands the token over. Then the commands run as the user who signed
// in, as the emulator's journal shows. CI installs chromium (.ci/run); elsewhere these cases are not run
// (npm run test:tools counts them so).

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = hasTool(CHROMIUM, ["--version"], "apt-get install chromium");
const fx = useEmulatorRepo({ fourEyes: true, freshRepo: true });
const dirs: string[] = [];
let context: BrowserContext | undefined;
type Entry = { method: string; path: string; status: number; user?: string };

beforeAll(async () => {
  if (!hasChromium) return;
  const profile = mkdtempSync(join(tmpdir(), "revsync-chromium-"));
  dirs.push(profile);
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

afterAll(async () => {
  await context?.close();
  for (const d of dirs) removeDir(d);
});

/** A person's environment: a fresh folder of kept sign-ins, the client id alone, and BROWSER a script
 *  that records the address revsync opens. */
function person(): { env: Record<string, string | undefined>; folder: string; opened: string } {
  const home = mkdtempSync(join(tmpdir(), "revsync-person-"));
  dirs.push(home);
  const opened = join(home, "opened");
  const browser = join(home, "browser");
  writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`, { mode: 0o755 });
  const env = {
    XDG_STATE_HOME: join(home, "state"),
    BROWSER: browser,
    REVSYNC_CLIENT_ID: "revsync",
    REVSYNC_CLIENT_SECRET: undefined,
    REVSYNC_USERNAME: undefined,
    REVSYNC_PASSWORD: undefined,
    REVSYNC_TOKEN: undefined,
  };
  return { env, folder: join(home, "state", "revsync", "sign-ins"), opened };
}

/** revsync login while Chromium signs `user` in at the address BROWSER was given (with `state` put in
 *  place of revsync's, for an answer to another sign-in); what revsync's page showed at the end. */
async function login(
  who: ReturnType<typeof person>,
  user: string,
  args: string[] = [],
  state?: string,
): Promise<{ r: CliResult; verdict: string; at: string }> {
  let signedIn: Promise<{ verdict: string; at: string }> | undefined;
  let address = "";
  const r = await cli(["login", ...args], {
    cwd: fx.repo,
    env: who.env,
    when: {
      stderr: (text) => {
        address = /^ {2}(http\S+)$/m.exec(text)?.[1] ?? "";
        return text.includes("Waiting for the browser");
      },
      act: () => {
        signedIn = signInWith(address, user, state);
        signedIn.catch(() => undefined);
      },
    },
  });
  // The address revsync printed is the one it gave BROWSER (written by the time the browser came back).
  expect(readFileSync(who.opened, "utf8")).toBe(address);
  return { r, ...(await (signedIn ?? Promise.reject(new Error(`login never waited for the browser: ${r.stderr}`)))) };
}

async function signInWith(address: string, user: string, state?: string): Promise<{ verdict: string; at: string }> {
  const url = new URL(address);
  if (state) url.searchParams.set("state", state);
  const page: Page = await (context as BrowserContext).newPage();
  try {
    await page.goto(url.href);
    expect(await page.title()).toBe("Sign in to demo");
    await page.fill("#username", user);
    await page.fill("#password", `${user}-password`);
    await Promise.all([page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback/), page.click("#kc-login")]);
    const verdict = page.locator("#verdict");
    await verdict.filter({ hasNotText: "Handing the sign-in to revsync" }).waitFor();
    return { verdict: (await verdict.textContent()) ?? "", at: page.url() };
  } finally {
    await page.close();
  }
}

const journal = (): Promise<Entry[]> => fx.emu.admin<Entry[]>("GET", "requests");

// Each case signs in through the browser once or twice and runs commands after: longer than the suite's
// 30 s on two loaded cores.
describe.runIf(hasChromium)("revsync login in Chromium against the emulator", { timeout: 90_000 }, () => {
  it("alice fills the form, the token lands (and leaves the address bar), and plan runs as alice", async () => {
    const alice = person();
    const { r, verdict, at } = await login(alice, "alice");
    expect(r.code, r.stderr).toBe(0);
    expect(verdict).toBe("Signed in to demo as alice. You may close this tab.");
    expect(at).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(r.stderr).toMatch(/^Signed in to environment "demo" as alice, until /m);
    const [file] = readdirSync(alice.folder);
    const token = JSON.parse(readFileSync(join(alice.folder, file ?? ""), "utf8")).access_token as string;

    await fx.emu.admin("DELETE", "requests");
    const plan = await cli(["plan", "--verbose"], { cwd: fx.repo, env: alice.env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("Plan:");
    expect(plan.stdout + plan.stderr).not.toContain(token);
    const users = new Set((await journal()).map((e) => e.user));
    expect(users).toEqual(new Set(["alice"]));
  });

  it("under four_eyes, bob signs in with --approver: plan names him, and apply sends the approves as bob, everything else as alice", async () => {
    appendFileSync(join(fx.repo, "revsync.yaml"), "four_eyes: { local_apply: true }\n");
    const person_ = person();
    expect((await login(person_, "alice")).r.code).toBe(0);
    const bob = await login(person_, "bob", ["--approver"]);
    expect(bob.r.code, bob.r.stderr).toBe(0);
    expect(bob.r.stderr).toMatch(/^Signed in to environment "demo" as bob, the four-eyes approver, until /m);
    expect(
      readdirSync(person_.folder)
        .map((n) => n.split(".")[1])
        .sort(),
    ).toEqual(["approver", "signer"]);

    const plan = await cli(["plan"], { cwd: fx.repo, env: person_.env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("approves go as the approver identity, bob; everything else as alice.");

    await fx.emu.admin("DELETE", "requests");
    const apply = await cli(["apply", "--auto-approve", "--verbose", "--evidence", "ev"], { cwd: fx.repo, env: person_.env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    // Neither token in the output, the plan shown or the evidence record.
    const tokens = readdirSync(person_.folder).map((n) => JSON.parse(readFileSync(join(person_.folder, n), "utf8")).access_token as string);
    const written = [
      apply.stdout,
      apply.stderr,
      plan.stdout,
      plan.stderr,
      ...readdirSync(join(fx.repo, "ev")).map((n) => readFileSync(join(fx.repo, "ev", n), "utf8")),
    ].join("\n");
    expect(tokens).toHaveLength(2);
    for (const t of tokens) expect(written).not.toContain(t);
    const writes = (await journal()).filter((e) => e.method === "PATCH" || e.method === "POST");
    const approves = writes.filter((e) => e.path.includes("/approve/"));
    expect(approves.length).toBeGreaterThan(0);
    expect(new Set(approves.map((e) => [e.status, e.user].join(" ")))).toEqual(new Set(["200 bob"]));
    expect(new Set(writes.filter((e) => !e.path.includes("/approve/")).map((e) => e.user))).toEqual(new Set(["alice"]));
  });

  it("an answer that carries another state than revsync sent is refused: the page and the command say so, nothing is kept", async () => {
    const carol = person();
    const { r, verdict } = await login(carol, "carol", [], "not-the-state-revsync-sent");
    expect(r.code).toBe(1);
    expect(verdict).toMatch(/^Not signed in: the answer's state is not the one revsync sent/);
    expect(r.stderr).toContain("Error: not signed in: the answer's state is not the one revsync sent");
    expect(existsSync(carol.folder) ? readdirSync(carol.folder) : []).toEqual([]);
  });
});
