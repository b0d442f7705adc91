import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chaosRepo, runSeed } from "../src/testing/chaos.js";
import { cli, cliProcess, DEMO_ENV, removeDir, startEmulatorProcess, type EmulatorProcess } from "../src/testing/helpers.js";

// One fixed seed of the chaos suite (npm run chaos runs 20+): 12% 503s, 8% 502s, 5% dropped
// connections (half after the write committed), 429 bursts with Retry-After, tokens expiring every 3 s,
// and 200 answers with an error array (a definite refusal: never sent again within a run): about a
// quarter of requests fail; 12 formula policies and 4 upload policies with batches here (npm run chaos
// runs 160 and 20 per seed). Converge within three applies (each re-sends only what failed), never a
// duplicate.
describe("chaos", () => {
  it.each([11])(
    "seed %i converges within three applies with no duplicate",
    async (seed) => {
      // Waits capped as in every CLI test: a random 429's Retry-After (1 s) pauses every request.
      const row = await runSeed(seed, { formulas: 12, uploads: 4, env: { REVSYNC_MAX_RETRY_WAIT_MS: "20" } });
      expect(row.detail).toBe("");
      // The faults' chances add up to about 30% of the API requests (the emulator's seeded draw).
      expect(row.faults).toBeGreaterThan(0.15 * row.requests);
      expect(row.duplicates).toBe(0);
      expect(row.converged).toBe(true);
    },
    120_000,
  );
});

describe("interruption mid-apply", () => {
  let emu: EmulatorProcess;
  beforeAll(async () => {
    emu = await startEmulatorProcess();
  });
  afterAll(async () => emu.stop());

  // Each signal goes once the CLI says (--verbose: "start <action> <address>") that this many steps have
  // started, never on a timer: the same moment on a loaded machine as on a quiet one.
  const moments: [number, "SIGINT" | "SIGTERM"][] = [
    [5, "SIGTERM"],
    [30, "SIGINT"],
  ];
  const started = (n: number) => (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("start ")).length >= n;

  it.each(moments)(
    "once %i steps started, %s: in-flight steps finish, the rest is skipped, the report agrees with the service and the next apply finishes",
    async (n, signal) => {
      // The chaos repo holds its own policies only: on the demo seed its four would be "not in git".
      await emu.admin("POST", "reset", { seed: "empty" });
      const dir = chaosRepo(emu.url, 40, 6);
      try {
        await emu.admin("POST", "faults", { faults: [{ kind: "latency", latency_ms: 40, path: "/apis/" }] });
        // A signal to the process: the CLI runs as one.
        const r = await cliProcess(["apply", "--auto-approve", "--concurrency", "4", "--verbose"], {
          cwd: dir,
          env: DEMO_ENV,
          when: { stderr: started(n), act: (child) => child.kill(signal) },
        });
        expect(r.code).toBe(130);
        expect(r.stderr).toContain(`${signal}: starting nothing new`);
        const state = await emu.admin("GET", "state");
        const policies = new Map<string, any>(state.tenants[0].ssp.map((p: any) => [p.compliance_name, p]));
        const lines = r.stdout.split("\n").filter((l: string) => /^(done|failed|skipped) /.test(l));
        expect(lines.filter((l: string) => l.startsWith("failed"))).toEqual([]);
        expect(lines.filter((l: string) => l.startsWith("done")).length).toBeGreaterThanOrEqual(n);
        expect(lines.filter((l: string) => l.startsWith("skipped")).length).toBeGreaterThan(0);
        for (const line of lines) {
          const m = /^(done|skipped)\s+(\w+)\s+ssp\/([^/:]+)(?:\/batch\/(\w+))?:/.exec(line);
          if (!m) continue;
          const [, status, action, name, batch] = m;
          const p = policies.get(name as string);
          if (action === "create") expect({ line, exists: !!p }).toEqual({ line, exists: status === "done" });
          if (batch && status === "done") {
            const b = p.batches.find((x: any) => x.batch_name === batch);
            expect(action === "review" ? ["reviewed", "approved"] : ["approved"]).toContain(b.status);
          }
        }
        await emu.admin("DELETE", "faults");
        const again = await cli(["apply", "--auto-approve"], { cwd: dir, env: DEMO_ENV });
        expect(again.code).toBe(0);
        const final = await cli(["plan", "--detailed-exitcode"], { cwd: dir, env: DEMO_ENV });
        expect(final.stdout.trim()).toBe('No changes. Environment "demo" matches the policy repo.');
      } finally {
        removeDir(dir);
      }
    },
    60_000,
  );
});
