import { spawn } from "node:child_process";
import { createServer, request, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, cli, DEMO_ENV, useEmulatorRepo } from "../src/testing/helpers.js";

const fx = useEmulatorRepo();

/** A command under a pseudo-terminal (script(1)), answering its confirmation once it is asked. */
function applyOnTerminal(answer: string, columns: number, args = "apply"): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const sizing = columns > 0 ? `stty cols ${columns}; ` : "";
    const child = spawn("script", ["-qfec", `${sizing}${process.execPath} ${BIN} ${args}`, "/dev/null"], {
      cwd: fx.repo,
      env: { ...process.env, ...DEMO_ENV, CI: "", NO_COLOR: "1" },
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("Only 'yes' will be accepted:") && !child.stdin.writableEnded) child.stdin.end(answer);
      if (out.length > 200_000) child.kill("SIGKILL"); // a runaway terminal writer, reported below
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 80_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}

describe("apply on a terminal", () => {
  it.each([0, 100])(
    "asks first; 'no' cancels and writes nothing (terminal width %i)",
    async (columns) => {
      const r = await applyOnTerminal("no\n", columns);
      expect(r.out.length).toBeLessThan(20_000);
      expect(r.out).toContain("apply cancelled: nothing was written");
      // NO_COLOR: the prompt is a plain line, no cursor codes around it.
      expect(r.out.slice(r.out.indexOf("Do you want"))).not.toContain("\u001b[");
      expect(r.code).toBe(1);
      expect(await fx.emu.writes()).toEqual([]);
    },
    40_000,
  );

  it("'yes' applies, with a progress spinner that ends cleanly", async () => {
    const r = await applyOnTerminal("yes\n", 100);
    expect(r.out.length).toBeLessThan(20_000);
    expect(r.out).toContain("Reading the service");
    expect(r.out).toContain("Apply complete: 7 done, 0 failed, 0 skipped.");
    expect(r.code).toBe(0);
  });
});

describe("cancelling at a prompt", () => {
  it.each([
    ["Ctrl-C", "\u0003"],
    ["EOF (Ctrl-D)", "\u0004"],
  ])(
    "%s at apply's prompt: 'Cancelled, nothing was changed', exit 130, zero writes",
    async (name, key) => {
      const folder = `evidence-cancel-${name.length}`;
      const r = await applyOnTerminal(key, 100, `apply --evidence ${folder}`);
      expect(r.out).toContain("Cancelled, nothing was changed.");
      expect(r.out).not.toMatch(/internal error/);
      expect(r.code).toBe(130);
      expect(await fx.emu.writes()).toEqual([]);
      // The evidence record says what the process did: cancelled at the prompt, exit 130.
      const dir = join(fx.repo, folder);
      const [file] = readdirSync(dir).filter((f) => f.endsWith(".json"));
      const record = JSON.parse(readFileSync(join(dir, file ?? ""), "utf8"));
      expect(record).toMatchObject({ approval: "cancelled", exit_code: 130, interrupted: true });
      expect(new Set(record.changes.map((c: { outcome: string }) => c.outcome))).not.toContain("done");
    },
    40_000,
  );

  it("approvals --all asks on a terminal, listing what it will act on; 'yes' acts", async () => {
    const r = await applyOnTerminal("yes\n", 100, "approvals reject --all --uploaded-by carol --comment dup");
    expect(r.out).toContain("revsync will reject 2 uploads in demo");
    expect(r.out).toMatch(/APR-0004 {2}events-/);
    expect(r.out).toContain("Rejected: APR-0003, APR-0004.");
    expect(r.code).toBe(0);
  });

  it("Ctrl-C at the approvals prompt sends nothing", async () => {
    const r = await applyOnTerminal("\u0003", 100, "approvals reject --all --comment dup");
    expect(r.code).toBe(130);
    expect(await fx.emu.writes()).toEqual([]);
  });
});

describe("colour on a terminal", () => {
  it("is decided per stream: revsync plan 2>err.txt colours the plan on the terminal and leaves err.txt plain", async () => {
    const err = join(fx.repo, "err.txt");
    const cmd = `${process.execPath} ${BIN} plan 2>${err}; ${process.execPath} ${BIN} plan --target ssp/nothing 2>>${err}`;
    const out = await new Promise<string>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, ...DEMO_ENV, CI: "", TERM: "xterm" };
      delete env.NO_COLOR;
      delete env.FORCE_COLOR;
      const child = spawn("script", ["-qfec", cmd, "/dev/null"], { cwd: fx.repo, env });
      let text = "";
      child.stdout.on("data", (d: Buffer) => (text += d.toString()));
      child.on("close", () => resolve(text));
    });
    expect(out).toContain("\u001b[32m +\u001b[39m \u001b[1mssp/Training Courses SSP\u001b[22m");
    const errText = readFileSync(err, "utf8");
    expect(errText).toContain("Error: --target matches nothing in git or in the service");
    expect(errText).not.toContain("\u001b[");
  });
});

describe("proxies", () => {
  let proxy: Server;
  let proxied: string[] = [];
  let proxyUrl = "";
  beforeAll(async () => {
    // A forward proxy: CONNECT tunnels (what undici uses) and absolute-URI requests, each recorded.
    proxy = createServer((req, res) => {
      proxied.push(`${req.method} ${req.url}`);
      const upstream = request(req.url ?? "", { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      upstream.on("error", () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    proxy.on("connect", (req, socket, head) => {
      proxied.push(`CONNECT ${req.url}`);
      const [host, port] = (req.url ?? "").split(":");
      const upstream = connect(Number(port), host ?? "127.0.0.1", () => {
        socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on("error", () => socket.destroy());
      socket.on("error", () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    proxy.closeAllConnections();
    return new Promise<void>((r) => proxy.close(() => r()));
  });

  it("HTTP_PROXY carries every request; NO_PROXY exempts the host", async () => {
    proxied = [];
    const via = await cli(["plan", "--quiet"], { cwd: fx.repo, env: { ...DEMO_ENV, HTTP_PROXY: proxyUrl } });
    expect(via.code).toBe(0);
    const target = new URL(fx.emu.url).host;
    expect(proxied.length).toBeGreaterThan(0);
    expect(proxied.every((p) => p === `CONNECT ${target}` || p.includes(target))).toBe(true);
    proxied = [];
    const direct = await cli(["plan", "--quiet"], { cwd: fx.repo, env: { ...DEMO_ENV, HTTP_PROXY: proxyUrl, NO_PROXY: "127.0.0.1" } });
    expect(direct.code).toBe(0);
    expect(proxied).toEqual([]);
  });
});

describe("a reader that goes away (revsync apply | head -1)", () => {
  it("ends the output, not the command: apply finishes every step, exits 0, no stack", async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, "apply", "--auto-approve"], { cwd: fx.repo, env: { ...process.env, ...DEMO_ENV, NO_COLOR: "1" } });
      // The reader is gone before the first line: every write to stdout meets a closed pipe (EPIPE).
      child.stdout.destroy();
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(r.stderr).not.toMatch(/EPIPE|internal error|at .*\.js:\d+/);
    expect(r.code).toBe(0);
    const again = await cli(["plan", "--detailed-exitcode"], { cwd: fx.repo, env: DEMO_ENV });
    expect(again.code).toBe(0);
  });
});
