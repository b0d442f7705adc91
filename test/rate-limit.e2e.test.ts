import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, DEMO_ENV, useEmulatorRepo } from "../src/testing/helpers.js";

// Behind a rate limit nobody told revsync about (issue 20), through the real CLI: the emulator's token
// bucket in front of the API, the journal as the witness of what was sent and turned away.

const fx = useEmulatorRepo();
const run = (args: string[]) => cli(args, { cwd: fx.repo, env: DEMO_ENV });
const api = async () => (await fx.emu.admin<{ path: string; status: number }[]>("GET", "requests")).filter((j) => j.path.startsWith("/apis/"));
/** A gateway of `rate` requests/s and `burst`, in front of the API only (the token endpoint is another host). */
const gateway = (rate: number, burst: number) => fx.emu.admin("POST", "faults", { faults: [{ kind: "rate_limit", rate, burst, path: "/apis/" }] });

describe("behind the service's rate limit", () => {
  it("plan and drift: every read answered in the end, the 429s counted in a closing note; --verbose shows the rate learned", async () => {
    // A burst of 2: revsync's reads sent at once (the policies' details, eight at a time) meet a 429 however
    // slowly the machine runs; the count of 429s is the gateway's to say.
    await gateway(16, 2);
    const plan = await run(["plan", "--verbose"]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain("Plan:");
    let journal = await api();
    const turned = journal.filter((j) => j.status === 429).length;
    expect(turned).toBeGreaterThan(0);
    expect(plan.stderr).toContain(`Note: the service's rate limit turned away ${turned} request${turned === 1 ? "" : "s"} of ${journal.length} (429); `);
    expect(plan.stderr).toMatch(/\(429\); (from then on it took about [\d.]+ requests\/s|revsync slowed down)\./);
    // The rate said is what the 16/s gateway took, never the pacing rate probing above it.
    const took = /it took about ([\d.]+) requests\/s/.exec(plan.stderr)?.[1];
    if (took !== undefined) expect(Number(took)).toBeLessThanOrEqual(16.5);
    expect(plan.stderr).toContain('If you know the limit, set rate_limit for environment "demo" in revsync.yaml (or --rate-limit).');
    expect(plan.stderr).toMatch(/rate limit: 429 from the service; sending at most \d+\.\d requests\/s, \d at once/);
    expect(plan.stderr).toMatch(/rate limit: the service asked to wait 1 s \(Retry-After\)/);

    await fx.emu.admin("DELETE", "requests");
    await gateway(16, 2);
    const drift = await run(["drift"]);
    expect(drift.code).toBe(2);
    journal = await api();
    const again = journal.filter((j) => j.status === 429).length;
    expect(again).toBeGreaterThan(0);
    expect(drift.stderr).toContain(`Note: the service's rate limit turned away ${again} request${again === 1 ? "" : "s"} of ${journal.length} (429)`);
  });

  it("rate_limit in revsync.yaml: apply keeps to it and meets no 429, so no note", async () => {
    const config = join(fx.repo, "revsync.yaml");
    const original = readFileSync(config, "utf8");
    // A gateway of twice revsync's rate, with room for a burst of ten (revsync's pacing sends at most two
    // at once, a stall of 0.16 s at most), as 20/s behind 40/s with five had. Not faster: unpaced, its
    // 55-odd requests (eight at a time, about a second's work in process) must still meet a 429.
    writeFileSync(config, original.replace("    realm: demo\n", "    realm: demo\n    rate_limit: 50\n"));
    try {
      await gateway(100, 10);
      const r = await run(["apply", "--auto-approve"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Apply complete: 7 done, 0 failed, 0 skipped.");
      expect((await api()).filter((j) => j.status === 429)).toEqual([]);
      expect(r.stderr).not.toContain("turned away");
    } finally {
      writeFileSync(config, original);
    }
  });

  it("a bad --rate-limit or --timeout: exit 1, the flag named, nothing sent", async () => {
    for (const [args, message] of [
      [["plan", "--rate-limit", "0"], '--rate-limit must be a number of requests per second above 0 (at most 10000), got "0"'],
      [["drift", "--rate-limit", "fast"], '--rate-limit must be a number of requests per second above 0 (at most 10000), got "fast"'],
      [["apply", "--timeout", "soon"], '--timeout must be a duration such as 90s, 10m or 1h, got "soon"'],
    ] as const) {
      const r = await run([...args]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
    }
    expect(await fx.emu.admin("GET", "requests")).toEqual([]);
  });
});
