import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { request as httpRequest } from "node:http";
import { Readable } from "node:stream";
import { mkdtempSync, mkdirSync, writeFileSync, lstatSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, onTestFinished } from "vitest";
import { systemClock } from "../api/clock.js";
import { createMismatch } from "../kinds/ssp/compare.js";
import { createWrite } from "../kinds/ssp/create.js";
import { batchWrite } from "../kinds/ssp/batch.js";
import { bodyFields } from "../kinds/envelope-list/list.js";
import { updateBody as revsyncUpdateBody, updateWrite as envelopeWrite } from "../kinds/envelope-list/write.js";
import { TENANT_CONFIGURATIONS } from "../kinds/tenant-configuration/kind.js";
import { seedState, type SeedName } from "../emulator/seed.js";
import type { Profile } from "../emulator/profile.js";
import { startEmulator } from "../emulator/server.js";
import { LocalLock, machineLockDir } from "../lock/local-lock.js";
import { ApiCore, type ClientOptions } from "../api/core.js";
import type { WriteOutcome } from "../api/write.js";
import type { Registry } from "../kinds/kind.js";
import type { SspCreateBody, TenantConfigurationUpdateBody } from "../schema/generated/api.js";

// Two levels up from src/testing/ (tests) and from build/testing/ (benches): the repository.
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BIN = join(ROOT, "dist", "bin.js");

/** One request of a test's own to the emulator (admin, sign-in, API), on a connection of its own closed
 *  after it: a kept connection left idle past the server's keep-alive timeout is closed by the server as
 *  the next request goes out on it (ECONNRESET in a beforeEach's reset, on a loaded machine where the
 *  client's timer is late). Through node:http rather than fetch: the suite sends a few thousand of
 *  these, and fetch took three times the CPU of node:http for each (2.9 ms against 1.0 ms). */
function localRequest(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; ok: boolean; text: string }> {
  return new Promise((resolvePromise, reject) => {
    const length = body === undefined ? 0 : Buffer.byteLength(body);
    const req = httpRequest(url, { method, agent: false, headers: { ...headers, connection: "close", "content-length": String(length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        resolvePromise({ status, ok: status >= 200 && status < 300, text: Buffer.concat(chunks).toString("utf8") });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

export const DEMO_ENV = {
  REVSYNC_CLIENT_ID: "revsync",
  REVSYNC_CLIENT_SECRET: "demo-secret",
  REVSYNC_USERNAME: "alice",
  REVSYNC_PASSWORD: "alice-password",
};

export interface Emu {
  url: string;
  close(): Promise<void>;
  admin<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  writes(): Promise<{ method: string; path: string; status: number }[]>;
  reset(seed?: SeedName): Promise<void>;
}

/** The emulator on 127.0.0.1 with an OS-chosen port, spoken to over real HTTP. */
export async function startEmu(
  seed: SeedName = "demo",
  opts: { accessTtlS?: number; refreshTtlS?: number; profile?: Profile; fourEyes?: boolean; honourIfMatch?: boolean } = {},
): Promise<Emu> {
  const running = await startEmulator({ state: seedState(seed), host: "127.0.0.1", port: 0, ...opts });
  dropKeptLock(running.url);
  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await localRequest(
      `${running.url}/__admin/${path}`,
      method,
      { "content-type": "application/json" },
      body === undefined ? undefined : JSON.stringify(body),
    );
    if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${res.text}`);
    return JSON.parse(res.text) as T;
  };
  return {
    url: running.url,
    close: running.close,
    admin,
    writes: async () =>
      (await admin<{ method: string; path: string; status: number }[]>("GET", "requests")).filter(
        (r) => r.method !== "GET" && r.path.startsWith("/apis/") && !r.path.startsWith("/apis/errortransactions"),
      ),
    reset: async (s = "demo") => {
      await admin("POST", "reset", { seed: s });
    },
  };
}

/** An HTTP client of the emulator's demo tenant, signed in as alice, for in-process tests. */
export function demoClient(url: string, extra: Partial<ClientOptions> = {}): ApiCore {
  return new ApiCore({
    baseUrl: url,
    authUrl: url,
    realm: "demo",
    credentials: { kind: "password", clientId: "revsync", clientSecret: "demo-secret", username: "alice", password: "alice-password" },
    ...extra,
  });
}

export interface EmulatorProcess {
  url: string;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** `revsync emulator` as a process of its own (the CLI's), on an OS-chosen port. */
export async function startEmulatorProcess(args: string[] = []): Promise<EmulatorProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "emulator", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d;
      const m = /^base_url (\S+)$/m.exec(out);
      if (m) {
        const url = m[1] as string;
        dropKeptLock(url);
        const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
          const res = await localRequest(`${url}/__admin/${path}`, method, {}, body === undefined ? undefined : JSON.stringify(body));
          if (!res.ok) throw new Error(`admin ${path}: ${res.status}`);
          return JSON.parse(res.text) as T;
        };
        resolve({
          url,
          admin,
          stop: () =>
            new Promise<void>((r) => {
              child.once("close", () => r());
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.on("error", reject);
    child.on("close", (code) => reject(new Error(`emulator exited ${code}: ${out}`)));
  });
}

/** One emulator on the demo seed for a whole test file, restored before each test with the lists of
 *  `clear` emptied (its faults, its request journal); `dirs` are removed at the end (the folders the
 *  tests made). */
export function useEmulator(opts: { honourIfMatch?: boolean; clear: ("faults" | "requests")[] }): { emu: Emu; dirs: string[] } {
  const fx = { dirs: [] as string[] } as { emu: Emu; dirs: string[] };
  beforeAll(async () => {
    fx.emu = await startEmu("demo", opts.honourIfMatch === undefined ? {} : { honourIfMatch: opts.honourIfMatch });
  });
  afterAll(async () => {
    for (const d of fx.dirs) removeDir(d);
    await fx.emu.close();
  });
  beforeEach(async () => {
    await fx.emu.reset();
    for (const list of opts.clear) await fx.emu.admin("DELETE", list);
  });
  return fx;
}

/** One emulator (of `profile`, with `fourEyes`) and one copy of the policy repo aimed at it, for a whole
 *  test file (or a describe block); the demo seed is restored before each test unless `reset` is false,
 *  and with `freshRepo` the repo is copied anew too. */
export function useEmulatorRepo(opts: { reset?: boolean; freshRepo?: boolean; profile?: Profile; fourEyes?: boolean } = {}): { emu: Emu; repo: string } {
  const fx = {} as { emu: Emu; repo: string };
  beforeAll(async () => {
    fx.emu = await startEmu("demo", { ...(opts.profile ? { profile: opts.profile } : {}), ...(opts.fourEyes ? { fourEyes: true } : {}) });
    fx.repo = tempRepo(fx.emu.url);
  });
  afterAll(async () => {
    removeDir(fx.repo);
    await fx.emu.close();
  });
  if (opts.reset !== false)
    beforeEach(async () => {
      await fx.emu.reset();
      if (!opts.freshRepo) return;
      removeDir(fx.repo);
      fx.repo = tempRepo(fx.emu.url);
    });
  return fx;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a test's command runs with: this process's, with colour off, no CI or GitHub Actions
 *  (the suite may run there), no REVSYNC_ENV, retry waits capped, then the test's own (undefined or ""
 *  removes a variable). */
function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  // Retry waits capped (REVSYNC_MAX_RETRY_WAIT_MS): tests count sends, they do not wait out backoff;
  // the waits themselves are tested in process with an injected clock (test/client.e2e.test.ts).
  for (const [k, v] of Object.entries({
    ...process.env,
    NO_COLOR: "1",
    CI: "",
    GITHUB_ACTIONS: "",
    REVSYNC_ENV: "",
    REVSYNC_MAX_RETRY_WAIT_MS: "20",
    ...extra,
  }))
    if (v !== undefined && v !== "") env[k] = v;
  return env;
}

export interface CliOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  input?: string;
  /** cli() only: stdout is a terminal (isTTY), as an interactive run's is. */
  tty?: boolean;
  /** cli() only: stdin is a terminal (isTTY), as when someone at a terminal types the input. */
  stdinTty?: boolean;
  /** cli() only: the wall clock the run's guardrails judge by (an ISO time or epoch ms). */
  now?: string | number;
  /** cli() only: the resource kinds the run knows (a kind written outside the tree beside the registry's). */
  kinds?: Registry;
}

/** Runs a command line through the command entry (runCli) in this process, with its own stdout, stderr,
 *  stdin, environment, working directory and signals: the same code as `revsync` runs, against the
 *  emulator over real HTTP, without a process of its own (a child process costs some 0.1 s of CPU to
 *  start). For what the process itself is about (signals, exit as the process sets it, a terminal,
 *  start-up, the built package) use cliProcess. `when`: act once stderr shows this text, or once this
 *  test of all stderr so far holds (change the service from outside): driven by what the command says,
 *  never by the clock. */
export async function cli(
  args: string[],
  opts: CliOptions & { when?: { stderr: string | ((stderr: string) => boolean); act: () => unknown } } = {},
): Promise<CliResult> {
  const { runCli } = await import("../cli/main.js");
  let stdout = "";
  let stderr = "";
  let acted = false;
  const text = (chunk: string | Uint8Array): string => (typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
  const io = {
    stdout: {
      isTTY: !!opts.tty,
      write: (chunk: string | Uint8Array) => {
        stdout += text(chunk);
        return true;
      },
    },
    stderr: {
      isTTY: false,
      write: (chunk: string | Uint8Array) => {
        stderr += text(chunk);
        const w = opts.when;
        if (w && !acted && (typeof w.stderr === "string" ? stderr.includes(w.stderr) : w.stderr(stderr))) {
          acted = true;
          void w.act();
        }
        return true;
      },
    },
    stdin: Object.assign(Readable.from([opts.input ?? ""]), opts.stdinTty ? { isTTY: true } : {}),
    env: cliEnv(opts.env),
    cwd: resolve(opts.cwd ?? ROOT),
    // Nobody signals a command run in process: tests of signals run the CLI as a process.
    signals: new EventEmitter(),
    ...(opts.now === undefined ? {} : { now: () => (typeof opts.now === "string" ? Date.parse(opts.now) : (opts.now as number)) }),
    ...(opts.kinds ? { kinds: opts.kinds } : {}),
  };
  const code = await runCli([process.execPath, BIN, ...args], io);
  return { code, stdout, stderr };
}

/** A process a test started ends with the test, whatever its end (a timeout included): it never goes on
 *  sending requests into the next test's emulator and journal. Outside a test (the benches) it is left be. */
function endsWithTest(child: ChildProcess): void {
  try {
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
  } catch {
    // Not in a test.
  }
}

/** Runs the built CLI (dist/) as a child process: for tests where the process is the point. */
export function cliProcess(
  args: string[],
  opts: CliOptions & {
    /** Act once stderr shows this text, or once this test of all stderr so far holds (send a signal,
     *  change the service from outside): driven by what the CLI says, never by the clock. */
    when?: { stderr: string | ((stderr: string) => boolean); act: (child: ChildProcess) => unknown };
  } = {},
): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? ROOT, env: cliEnv(opts.env), stdio: ["pipe", "pipe", "pipe"] });
    endsWithTest(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    let acted = false;
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const w = opts.when;
      if (w && !acted && (typeof w.stderr === "string" ? stderr.includes(w.stderr) : w.stderr(stderr))) {
        acted = true;
        void w.act(child);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? "");
  });
}

/** Removes the lock of this machine that an apply stopped at once left for a tenant of the emulator at
 *  `url` (kept: a write was in flight; the next apply would wait out its request deadline, 90 s by
 *  default): what the next apply's takeover stands in for in a test that goes on. A new emulator drops
 *  the one an earlier test run left on its port (the machine's lock folder outlives every run). */
export function dropKeptLock(url: string, realm = "demo"): void {
  rmSync(new LocalLock(machineLockDir(), { baseUrl: url, realm }).path, { force: true });
}

/** The project's policies/ as a list of folders (text null) and files, relative to it, in an order that
 *  makes each folder before what it holds: read once per process, as the suite makes some thousand
 *  copies (cpSync took 4 ms of CPU for each, writing the files read once 0.4 ms). */
let projectPolicies: { path: string; text: Buffer | null; mode: number }[] | undefined;

function policiesOfProject(): { path: string; text: Buffer | null; mode: number }[] {
  if (projectPolicies) return projectPolicies;
  const out: { path: string; text: Buffer | null; mode: number }[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(ROOT, "policies", rel), { withFileTypes: true })) {
      const path = join(rel, e.name);
      const full = join(ROOT, "policies", path);
      if (!e.isDirectory() && !e.isFile()) throw new Error(`tempRepo copies folders and files only: ${full}`);
      out.push({ path, text: e.isDirectory() ? null : readFileSync(full), mode: statSync(full).mode & 0o777 });
      if (e.isDirectory()) walk(path);
    }
  };
  walk("");
  projectPolicies = out;
  return out;
}

/** A temporary policy repo: the project's policies/ (or given files) and a revsync.yaml aimed at url.
 *  Its files are its own: a test may change them. */
export function tempRepo(url: string, files: Record<string, string> | "default" = "default", envName = "demo"): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-test-"));
  writeFileSync(
    join(dir, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n  ${envName}:\n    base_url: ${url}\n    auth_url: ${url}\n    realm: demo\n    vars:\n      contra_account: MJ-CONTRA-100\n`,
  );
  mkdirSync(join(dir, "policies"));
  if (files === "default") {
    for (const f of policiesOfProject()) {
      if (f.text === null) mkdirSync(join(dir, "policies", f.path), { mode: f.mode });
      else writeFileSync(join(dir, "policies", f.path), f.text, { mode: f.mode });
    }
  } else {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
  }
  return dir;
}

/** Removes a folder and all it holds (a file or a link: itself only; nothing when it is not there).
 *  Walked by hand first: rmSync's recursive removal took 1.0 ms of CPU for a tempRepo, this 0.4 ms;
 *  rmSync where the walk fails (a folder without write permission, one already gone). */
export function removeDir(dir: string): void {
  try {
    if (lstatSync(dir).isSymbolicLink()) unlinkSync(dir);
    else removeTree(dir);
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
}

function removeTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) removeTree(path);
    else unlinkSync(path);
  }
  rmdirSync(dir);
}

/** The tenant configuration update body for a live envelope: its 14 fields, with overrides
 *  (the body revsync itself sends, through the same function). */
export function updateBody(env: any, overrides: Record<string, unknown> = {}, user = "alice"): any {
  const item = env.compliance_spec[0];
  const fields = Object.fromEntries(bodyFields(TENANT_CONFIGURATIONS).map((f: string) => [f, item[f]]));
  return revsyncUpdateBody({ compliance_name: env.compliance_name, unique_key: env.unique_key, item: { ...fields, ...overrides } as any }, user, systemClock);
}

/** A token of the emulator's documented sign-in, for direct API calls (tests and benches). */
export async function token(url: string, user = "alice", realm = "demo"): Promise<string> {
  const res = await localRequest(
    `${url}/auth/realms/${realm}/protocol/openid-connect/token`,
    "POST",
    { "content-type": "application/x-www-form-urlencoded" },
    new URLSearchParams({
      grant_type: "password",
      client_id: "revsync",
      client_secret: "demo-secret",
      username: user,
      password: `${user}-password`,
    }).toString(),
  );
  return (JSON.parse(res.text) as { access_token: string }).access_token;
}

export async function api(url: string, tok: string, method: string, path: string, body?: unknown, raw?: string): Promise<{ status: number; body: any }> {
  const res = await localRequest(
    `${url}${path}`,
    method,
    { authorization: `Bearer ${tok}`, "content-type": "application/json" },
    raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  );
  const text = res.text;
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* CSV */
  }
  return { status: res.status, body: parsed };
}

/** A folder to put first on PATH: its `npx` runs `npx revsync …` as the built CLI directly (the same
 *  binary npx resolves, without npx's second of resolving it) and anything else through the real npx.
 *  Tests of README lines and CI recipes use it; the README's first command still goes through the real
 *  npx, and npm start through npm. */
export function npxShim(): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-npx-"));
  const real = execFileSync("bash", ["--norc", "-c", "command -v npx"], { encoding: "utf8" }).trim();
  writeFileSync(
    join(dir, "npx"),
    [
      "#!/usr/bin/env bash",
      'all=("$@")',
      // The CI recipes' form, npx --no -- revsync …, is the same command.
      'if [ "$1" = --no ] && [ "$2" = -- ]; then shift 2; fi',
      `if [ "$1" = revsync ]; then shift; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"; fi`,
      `exec ${JSON.stringify(real)} "\${all[@]}"`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return dir;
}

/** A test that drives a tool for real (a shell, rsync) runs only where it is installed. CI installs every
 *  one (.ci/run), and there a missing one fails the test; elsewhere the test is not run, and says why
 *  (`npm run test:tools` counts it as not run, never as passed). `probe` runs the tool; `install` says
 *  how to get it; `what` is what the test would have tested. Each case that needs a tool is a test of its
 *  own, so that no part of a test it did not run is counted as passed. */
export function needsTool(ctx: { skip(note: string): never }, tool: string, probe: string[], install: string, what: string): void {
  if (hasTool(tool, probe, install)) return;
  ctx.skip(`${tool} is not installed: ${what} was not tested (${install})`);
}

/** Whether a tool the tests drive for real is installed here (for a group of tests run only where it is:
 *  `describe.runIf`, which test:tools counts as not run elsewhere). CI installs every one, and there a
 *  missing one fails. */
export function hasTool(tool: string, probe: string[], install: string): boolean {
  if (spawnSync(tool, probe, { stdio: "ignore" }).status === 0) return true;
  if (process.env.CI) throw new Error(`${tool} is not installed: .ci/run installs it (${install})`);
  return false;
}

/** The body of an SSP create for a formula policy, with overrides of its item. */
export function sspCreateBody(name: string, overrides: Record<string, unknown> = {}): any {
  return {
    compliance_name: name,
    unique_key: name,
    format_type: "JSON",
    compliance_spec: [
      {
        active: true,
        can_delete: true,
        ceiling_percentage: 110,
        data_identifiers: ["product_id"],
        entity_type: "policy",
        expression: "unit_list_price * 0.9",
        floor_percentage: 90,
        hierarchy_no: 70,
        is_user_defined: true,
        method: "formula",
        name,
        transaction_above_range: "",
        transaction_below_range: "",
        transaction_mid_range: "",
        type: "SSP",
        when: [],
        ...overrides,
      },
    ],
  };
}

/** A write's outcome as tests of the API layer take it: the outcome when it landed; its error thrown
 *  when it did not (blocked: an Error with the reason). */
export async function landedWrite<T>(
  o: Promise<WriteOutcome<T>>,
): Promise<{ kind: "done" | "already" | "confirmed"; result: T; status?: string; why?: string }> {
  const out = await o;
  if (out.kind === "already") return { ...out, result: undefined as T };
  if (out.kind === "done" || out.kind === "confirmed") return out;
  if (out.kind === "blocked" || out.kind === "overwritten") throw new Error(out.reason);
  throw out.error;
}

/** The SSP writes through the write unit, each as its kind describes it, without apply's guards. */
export const writes = {
  /** A create as apply sends it, read back (after a lost answer) by the fields it sets. */
  create: (core: ApiCore, body: SspCreateBody) =>
    createWrite(
      core,
      body,
      async () => ({ go: null }),
      async (live) => (body.compliance_spec[0] ? createMismatch(body.compliance_spec[0], live.compliance_spec?.[0]) : []),
    ),
  batchAction: batchWrite,
};

/** A tenant configuration PATCH through the write unit, without apply's guard: the body as given. */
export const updateWrite = (core: ApiCore, id: string, body: TenantConfigurationUpdateBody, ifMatch?: string) =>
  landedWrite(envelopeWrite(TENANT_CONFIGURATIONS, core, id, async () => ({ go: { body, ...(ifMatch ? { ifMatch } : {}) } })));

/** The emulator's state of the multi-env example: two tenants, each a copy of the demo tenant, realm
 *  acme-sandbox at the root and realm acme under /tenants/acme (`demo`: the emulator's demo state). */
export function multiEnvState(demo: { tenants: unknown[] }): { version: 1; seq: number; tokens: object; tenants: unknown[] } {
  const sandbox = { ...(structuredClone(demo.tenants[0]) as object), realm: "acme-sandbox" };
  const production = { ...(structuredClone(demo.tenants[0]) as object), realm: "acme" };
  return { version: 1, seq: 5000, tokens: {}, tenants: [sandbox, production] };
}

/** A fleet on one emulator: a tenant per realm, each a copy of `tenants[i % tenants.length]` (the
 *  emulator's state's tenants, say one in step with git and one not), served under /tenants/<realm>. */
export function fleetState(tenants: unknown[], realms: string[]): { version: 1; seq: number; tokens: object; tenants: unknown[] } {
  return {
    version: 1,
    seq: 9000,
    tokens: {},
    tenants: realms.map((realm, i) => ({ ...(structuredClone(tenants[i % tenants.length]) as object), realm })),
  };
}

/** The revsync.yaml of a fleet: one environment per realm of the emulator at `url` (under /tenants/<realm>),
 *  and one environment per name of `down` whose service nothing answers (127.0.0.1:9), in the order given. */
export function fleetConfig(url: string, names: { realm?: string; down?: string }[], extra = ""): string {
  const env = (name: string, base: string, auth: string): string =>
    `  ${name}:\n    base_url: ${base}\n    auth_url: ${auth}\n    realm: ${name}\n    vars: { contra_account: MJ-CONTRA-100 }\n`;
  const down = "http://127.0.0.1:9";
  const envs = names.map((n) => (n.down ? env(n.down, down, down) : env(n.realm ?? "", `${url}/tenants/${n.realm}`, url)));
  return `version: 1\npolicies: policies\n${extra}environments:\n${envs.join("")}`;
}
