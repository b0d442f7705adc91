import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliProcess, DEMO_ENV, useEmulatorRepo } from "../src/testing/helpers.js";

// Every command with --verbose, through errors and retries: stdout, stderr, the saved plan, the evidence
// records and every file written are scanned for the password, the client secret, the approver identity's
// password and token (four eyes) and every token the emulator issued. The CLI runs as a process here: the sweep covers all the process writes, Node's own
// words included.
const fx = useEmulatorRepo({ reset: false });
const APPROVER = { REVSYNC_APPROVER_USERNAME: "bob", REVSYNC_APPROVER_PASSWORD: "bob-password" };

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe("secrets sweep", () => {
  it("no command prints or writes a secret, even with --verbose through faults", async () => {
    const chaos = {
      seed: 7,
      faults: [
        { kind: "status", status: 503, probability: 0.3, path: "/apis/" },
        // A few 429s: each slows the rest of its command (the rate governor learns a lower rate), and
        // their retries are what the sweep needs, not their number.
        { kind: "rate_limit", probability: 0.03, retry_after: 1, path: "/apis/" },
        { kind: "status", status: 502, times: 1, path: "/token" },
        { kind: "error_array", probability: 0.2, method: "PATCH" },
        { kind: "drop", probability: 0.05, after_commit: true, path: "/apis/" },
      ],
    };
    mkdirSync(join(fx.repo, "out"), { recursive: true });
    const commands: string[][] = [
      // validate has no --verbose: it sends nothing and says little.
      ["validate"],
      ["plan", "--verbose", "--out", "out/plan.json"],
      ["plan", "--verbose", "--format", "markdown"],
      ["apply", "out/plan.json", "--auto-approve", "--verbose", "--evidence", "out/evidence"],
      ["apply", "--auto-approve", "--verbose", "--format", "json", "--evidence", "out/evidence"],
      ["evidence", "verify", "out/evidence", "--live", "--verbose"],
      ["evidence", "show", "out/evidence", "--format", "markdown"],
      ["drift", "--verbose", "--format", "json"],
      ["export", "--verbose", "--dir", "out/export"],
      ["approvals", "list", "--verbose"],
      ["approvals", "approve", "APR-0001", "APR-0003", "--comment", "ok", "--verbose", "--yes"],
      ["approvals", "reject", "APR-0002", "--comment", "no", "--verbose"],
      ["errors", "--type", "order", "--summary", "--verbose"],
      ["ssp", "template", "--verbose", "--output", "out/template.csv"],
      ["ssp", "download", "FILE-SSP-HW-1", "--verbose", "--output", "out/dl.csv"],
    ];
    let output = "";
    const tokens = new Set<string>();
    const collect = async () => {
      const state: any = await fx.emu.admin("GET", "state");
      for (const t of Object.keys(state.tokens)) tokens.add(t);
    };
    for (const args of commands) {
      await fx.emu.admin("POST", "faults", chaos);
      // The approver identity is given to every command: apply signs it in and sends the approves as bob.
      const r = await cliProcess(args, { cwd: fx.repo, env: { ...DEMO_ENV, ...APPROVER, REVSYNC_MAX_RETRY_WAIT_MS: "20" } });
      // Every command runs to its end (the faults may fail an apply's writes, never a command's start).
      expect({ args, stderr: r.stderr }).not.toMatchObject({ stderr: expect.stringMatching(/unknown option|error: (missing|too many)/) });
      output += `$ ${args.join(" ")} (${r.code})\n${r.stdout}${r.stderr}`;
      await collect();
      await fx.emu.admin("POST", "faults", { faults: [{ kind: "token_expiry", include_refresh: true }] });
    }
    // A wrong password, a wrong secret and a bearer token given as is, through errors.
    for (const env of [
      { ...DEMO_ENV, REVSYNC_PASSWORD: "wrong-pass-1234" },
      { ...DEMO_ENV, REVSYNC_CLIENT_SECRET: "wrong-secret-5678" },
      { REVSYNC_TOKEN: "at.made-up-bearer-token-9999" },
    ]) {
      const r = await cliProcess(["plan", "--verbose"], { cwd: fx.repo, env });
      expect(r.code).toBe(1);
      output += r.stdout + r.stderr;
    }
    // A bearer token given as the approver's, which the service refuses: through errors. (A refused
    // approver password is swept in process: test/four-eyes.e2e.test.ts.)
    await fx.emu.admin("POST", "reset", { seed: "demo" });
    const approverToken = await cliProcess(["apply", "--auto-approve", "--verbose"], {
      cwd: fx.repo,
      env: { ...DEMO_ENV, REVSYNC_APPROVER_TOKEN: "at.made-up-approver-token-1357" },
    });
    expect(approverToken.code).toBe(1);
    output += approverToken.stdout + approverToken.stderr;
    const demo = await cliProcess(["demo", "--verbose"], { cwd: fx.repo });
    output += demo.stdout + demo.stderr;
    expect(output).toMatch(/http GET \/apis\//);
    expect(output).toMatch(/send 2\/6 of /);
    expect(output).toMatch(/PATCH \/apis\/policy-sets\/v1\/policy\/ssp\/approve\/[^\n]*\(as bob\)/);
    const files = filesUnder(join(fx.repo, "out")).map((f) => readFileSync(f, "utf8"));
    expect(existsSync(join(fx.repo, "out", "plan.json"))).toBe(true);
    // Both applies left a record through the faults; they are among the files scanned, and name no header,
    // form or body: the sign-in is there as a request (method, path, status), nothing more.
    const records = readdirSync(join(fx.repo, "out", "evidence")).filter((f) => f.endsWith(".json"));
    expect(records).toHaveLength(2);
    for (const f of records) {
      const text = readFileSync(join(fx.repo, "out", "evidence", f), "utf8");
      expect(text).toContain('"path": "/auth/realms/demo/protocol/openid-connect/token"');
      expect(text).not.toMatch(/authorization|bearer|password|client_secret|access_token|refresh_token/i);
    }
    expect(files.length).toBeGreaterThan(3);
    const haystack = [output, ...files].join("\n");
    const secrets = [
      "alice-password",
      "demo-secret",
      "wrong-pass-1234",
      "wrong-secret-5678",
      "at.made-up-bearer-token-9999",
      "bob-password",
      "at.made-up-approver-token-1357",
      ...tokens,
    ];
    for (const s of secrets) expect({ secret: s, found: haystack.includes(s) }).toEqual({ secret: s, found: false });
    expect(tokens.size).toBeGreaterThan(20);
    // Twenty processes, one after another, through faults: some 10 s on a quiet machine; the time limit
    // only ends a hang (it met 120 s at a load average of 30 on two cores).
  }, 300_000);
});
