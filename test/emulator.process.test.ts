import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { api, BIN, cli, DEMO_ENV, removeDir, ROOT, startEmulatorProcess, sspCreateBody, token, updateBody } from "../src/testing/helpers.js";

// `revsync emulator` as a process of its own (npm run test:slow; docs/development.md): its flags, the
// URLs it prints, its state kept across a restart. The emulator's behaviour in process:
// test/emulator.e2e.test.ts.

const TC = "/apis/policy-sets/v1/policy/tenant-configurations";
const SSP = "/apis/policy-sets/v1/policy/ssp";

describe("revsync emulator as a process", () => {
  it("--rate-limit puts a token bucket in front of the API (not the token endpoint); --no-retry-after leaves out the header", async () => {
    const emu = await startEmulatorProcess(["--rate-limit", "0.1/s,2", "--no-retry-after"]);
    try {
      const t = await token(emu.url);
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await fetch(`${emu.url}${TC}`, { headers: { authorization: `Bearer ${t}` } }));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      expect(answers[2]?.headers.get("retry-after")).toBeNull();
      // The token endpoint is not behind the bucket: a token (a JWT naming alice) is issued all the same.
      expect(await token(emu.url)).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    } finally {
      await emu.stop();
    }
    const bad = await cli(["emulator", "--rate-limit", "25"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--rate-limit must be requests per second with an optional burst, such as 25/s or 25/s,10; got "25"');
  });

  it("prints its URLs, and a restart with --state keeps everything (atomic writes)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-state-"));
    const state = join(dir, "state.json");
    const first = await startEmulatorProcess(["--state", state]);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const t = await token(first.url);
    const env = (await api(first.url, t, "GET", TC)).body[0];
    expect((await api(first.url, t, "PATCH", `${TC}/${env.compliance_id}`, updateBody(env, { ui_mode: "Modern" }))).status).toBe(200);
    expect((await api(first.url, t, "POST", SSP, sspCreateBody("Persisted"))).status).toBe(200);
    await first.stop();
    expect(existsSync(state)).toBe(true);
    expect(JSON.parse(readFileSync(state, "utf8")).version).toBe(1);
    const second = await startEmulatorProcess(["--state", state]);
    const after = (await api(second.url, t, "GET", TC)).body[0];
    expect(after.compliance_spec[0].ui_mode).toBe("Modern");
    expect((await api(second.url, t, "GET", `${SSP}?policy_name=Persisted`)).status).toBe(200);
    await second.stop();
  });

  it("--seed multi-env serves the two realms of examples/multi-env", async () => {
    const child = spawn(process.execPath, [BIN, "emulator", "--port", "0", "--seed", "multi-env"]);
    try {
      const out = await new Promise<string>((ok) => {
        let text = "";
        child.stdout.on("data", (d: Buffer) => {
          text += d.toString();
          if (/^token_url /m.test(text)) ok(text);
        });
      });
      const base = /^base_url (\S+)$/m.exec(out)?.[1] ?? "";
      expect(out).toContain(`base_url[acme] ${base}/tenants/acme`);
      const ex = mkdtempSync(join(tmpdir(), "revsync-multi-"));
      cpSync(join(ROOT, "examples", "multi-env"), ex, { recursive: true });
      try {
        const env = { SANDBOX_BASE_URL: base, SANDBOX_AUTH_URL: base, PRODUCTION_BASE_URL: `${base}/tenants/acme`, PRODUCTION_AUTH_URL: base };
        for (const e of ["sandbox", "production"]) {
          const p = await cli(["plan", "--env", e, "--format", "json"], { cwd: ex, env: { ...DEMO_ENV, ...env } });
          expect({ e, code: p.code, realm: JSON.parse(p.stdout).realm }).toEqual({ e, code: 0, realm: e === "sandbox" ? "acme-sandbox" : "acme" });
        }
      } finally {
        removeDir(ex);
      }
    } finally {
      child.kill("SIGTERM");
    }
  });
});
