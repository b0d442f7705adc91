import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { cli, cliProcess, DEMO_ENV, ROOT, useEmulator } from "../src/testing/helpers.js";

// One chain per environment, whatever the runners' clocks say and however many runs write at once: the
// chain is ordered by links and sequence numbers, and each record is appended by an exclusive create of
// the next sequence's slot. Real processes, each with its own clock (one of them set wrong) and all at once.

const fx = useEmulator({ clear: ["faults"] });

/** A policy repo with no policy files, aimed at the emulator: every run plans, has nothing to apply (the
 *  live SSP policies are "not in git"), takes no lock, and writes its record. */
function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-chain-"));
  fx.dirs.push(dir);
  writeFileSync(join(dir, "revsync.yaml"), `version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: ${fx.emu.url}\n    realm: demo\n`);
  mkdirSync(join(dir, "policies"));
  return dir;
}
const records = (dir: string): any[] =>
  readdirSync(dir)
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")));

describe("a chain that is a chain", () => {
  it("a record written by a runner whose clock is ten minutes behind: verify holds the genuine chain, its head is the latest record, and the next run links to it", async () => {
    const dir = repo();
    const apply = ["apply", "--auto-approve", "--evidence", "ev"];
    expect((await cli(apply, { cwd: dir, env: DEMO_ENV })).code).toBe(0);
    const skewed = await cliProcess(apply, {
      cwd: dir,
      env: {
        ...DEMO_ENV,
        REVSYNC_TEST_CLOCK_SKEW_MS: String(-10 * 60_000),
        NODE_OPTIONS: `--import=${pathToFileURL(join(ROOT, "test", "fixtures", "clock", "skewed.mjs")).href}`,
      },
    });
    expect(skewed.code, skewed.stderr).toBe(0);
    expect((await cli(apply, { cwd: dir, env: DEMO_ENV })).code).toBe(0);
    const [a, b, c] = records(join(dir, "ev"));
    // The second record says it finished ten minutes before the first.
    expect(Date.parse(a.finished_at) - Date.parse(b.finished_at)).toBeGreaterThan(9 * 60_000);
    expect([a.sequence, b.sequence, c.sequence, b.prev, c.prev]).toEqual([1, 2, 3, a.hash, b.hash]);
    const verify = await cli(["evidence", "verify", "ev", "--format", "json"], { cwd: dir });
    expect(verify.code, verify.stdout).toBe(0);
    expect(JSON.parse(verify.stdout).heads.demo.hash).toBe(c.hash);
  });

  it("six runs at once with --evidence, none holding a lock: one chain of six records, verify exits 0", async () => {
    const dir = repo();
    const runs = await Promise.all(Array.from({ length: 6 }, () => cliProcess(["apply", "--auto-approve", "--evidence", "ev"], { cwd: dir, env: DEMO_ENV })));
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0]);
    const all = records(join(dir, "ev"));
    expect(all.map((r) => r.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(all.slice(1).map((r, i) => r.prev === all[i].hash)).toEqual([true, true, true, true, true]);
    const verify = await cli(["evidence", "verify", "ev"], { cwd: dir });
    expect(verify.code, verify.stdout).toBe(0);
    expect(verify.stdout).toContain("6 records: every hash and every link holds.");
  });
});
