import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { cli, DEMO_ENV, removeDir, tempRepo, useEmulatorRepo } from "../src/testing/helpers.js";

// The command entry runs with the streams, environment, working directory and signals it is given
// (src/cli/io.ts), never the process's behind its back: what lets the end-to-end tests run commands in
// process, several in one process, and each exactly as `revsync` would run it.
const fx = useEmulatorRepo();

describe("the command entry in process", () => {
  it("two commands at once, each with its own working directory, environment and output; the process's are untouched", async () => {
    const cwd = process.cwd();
    const env = { ...process.env };
    const other = tempRepo(fx.emu.url, { "policies/broken.yaml": "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: X }\nspec: { method: nope }\n" });
    try {
      const [good, bad, wrongPassword] = await Promise.all([
        cli(["plan", "--out", "saved.plan.json", "--quiet"], { cwd: fx.repo, env: DEMO_ENV }),
        cli(["validate"], { cwd: other }),
        cli(["plan"], { cwd: fx.repo, env: { ...DEMO_ENV, REVSYNC_PASSWORD: "not-alice-password" } }),
      ]);
      expect(good.code).toBe(0);
      // The relative --out is relative to the run's working directory.
      expect(existsSync(join(fx.repo, "saved.plan.json"))).toBe(true);
      expect(existsSync(join(cwd, "saved.plan.json"))).toBe(false);
      expect(JSON.parse(readFileSync(join(fx.repo, "saved.plan.json"), "utf8")).user).toBe("alice");
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/^policies\/broken\.yaml:4:17: error: spec\.method/m);
      expect(good.stdout + good.stderr).not.toContain("broken.yaml");
      expect(wrongPassword.code).toBe(1);
      expect(wrongPassword.stderr).toMatch(/sign-in refused/);
      // The wrong password is that run's secret: redacted there.
      expect(wrongPassword.stdout + wrongPassword.stderr).not.toContain("not-alice-password");
      expect(process.cwd()).toBe(cwd);
      expect(process.env).toEqual(env);
    } finally {
      removeDir(other);
    }
  });

  it("colour follows the run's environment and streams, not the process's", async () => {
    const plain = await cli(["plan"], { cwd: fx.repo, env: DEMO_ENV });
    // FORCE_COLOR wins over NO_COLOR when both are set (as Node, supports-color and force-color.org
    // have it); --no-color, said for this one run, wins over both.
    const forced = await cli(["plan"], { cwd: fx.repo, env: { ...DEMO_ENV, NO_COLOR: "1", FORCE_COLOR: "1" } });
    const flag = await cli(["plan", "--no-color"], { cwd: fx.repo, env: { ...DEMO_ENV, NO_COLOR: "1", FORCE_COLOR: "1" } });
    expect(plain.code).toBe(0);
    expect(forced.code).toBe(0);
    expect(plain.stdout).not.toContain("\u001b[");
    expect(forced.stdout).toContain("\u001b[");
    expect(stripVTControlCharacters(forced.stdout)).toBe(plain.stdout);
    expect(flag.stdout).toBe(plain.stdout);
  });

  it("unlock's help says --env is required, not defaulted: it never releases the only environment's or REVSYNC_ENV's lock unasked", async () => {
    const help = await cli(["unlock", "--help"], { env: { REVSYNC_ENV: "demo" } });
    expect(help.code).toBe(0);
    // Help wraps its lines: read it as one line.
    const words = (text: string): string => text.replace(/\s+/g, " ");
    expect(words(help.stdout)).toMatch(/--env <name> the environment whose lock to release \(required/);
    expect(words(help.stdout)).not.toMatch(/default: the only one/);
    // The command holds to what its help says.
    const run = await cli(["unlock", "0123456789"], { cwd: fx.repo, env: { REVSYNC_ENV: "demo" } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("unlock needs --env NAME");
    // Every other command keeps the shared default.
    expect(words((await cli(["lock", "status", "--help"])).stdout)).toContain("default: the only one, or REVSYNC_ENV");
  });
});
