import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evidenceRecords } from "../src/testing/evidence-records.js";
import { cli, cliProcess, DEMO_ENV, dropKeptLock, useEmulatorRepo } from "../src/testing/helpers.js";

// apply --evidence when the run is the CLI as a process of its own, interrupted by signals while a write is
// in flight (the record's other outcomes, in process: evidence.e2e.test.ts).

const fx = useEmulatorRepo();

describe("apply --evidence, interrupted", () => {
  it("a run interrupted at once (exit 130): the write in flight is unknown, the lock kept and said so, nothing else claims more; the record links to the one before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-evidence-"));
    try {
      expect((await cli(["apply", "--auto-approve", "--evidence", dir], { cwd: fx.repo, env: DEMO_ENV })).code).toBe(0);
      const [rec] = evidenceRecords(dir).map((r) => r.record);
      // Interrupted at once while the PATCH is held (until a reset: a slow one could land first on a loaded
      // machine): its outcome is unknown, nothing else claims more.
      await fx.emu.reset();
      await fx.emu.admin("POST", "faults", { faults: [{ kind: "latency", latency_ms: 600_000, method: "PATCH", path: "/tenant-configurations/" }] });
      let signals = 0;
      // Driven by what apply prints: the update has started; then, once the first interrupt is seen, again.
      const stopped = await cliProcess(["apply", "--auto-approve", "--verbose", "--evidence", dir], {
        cwd: fx.repo,
        env: DEMO_ENV,
        when: {
          stderr: "start update tenant-configuration/",
          act: (child) => {
            let seen = "";
            child.stderr?.on("data", (d: Buffer) => {
              seen += d.toString();
              if (signals !== 1 || !seen.includes("starting nothing new")) return;
              signals++;
              child.kill("SIGINT");
            });
            child.kill("SIGINT");
            signals++;
          },
        },
      });
      expect(signals).toBe(2);
      expect(stopped.stderr).toContain("interrupted again: stopping now");
      expect(stopped.code).toBe(130);
      const second = evidenceRecords(dir)[1]?.record;
      expect(second).toMatchObject({ sequence: 2, prev: rec.hash, exit_code: 130, interrupted: true });
      const held = second.changes.find((c: any) => c.action === "update");
      expect(held.outcome).toBe("unknown");
      // The lock is kept under the write in flight, and the record, written while it was held, says so.
      expect(second.lock).toMatchObject({ backend: "local", released: false, note: "kept: writes were in flight when the run stopped at once" });
      dropKeptLock(fx.emu.url);
      // The PATCH the emulator holds (until the next reset) was sent and never answered:
      // listed, in flight, without a status.
      expect(held.requests.filter((q: any) => q.method === "PATCH")).toEqual([
        expect.objectContaining({ path: expect.stringMatching(/\/tenant-configurations\/TC-/), status: null, in_flight: true, resend: false }),
      ]);
      // The rest either finished before the interrupt (with the write's answer) or never started.
      for (const c of second.changes.filter((x: any) => x.action !== "update")) {
        if (c.outcome === "done") expect(c.requests.some((q: any) => q.method !== "GET" && q.status === 200)).toBe(true);
        else expect([c.address, c.outcome, c.why]).toEqual([c.address, "skipped", expect.stringMatching(/^(not started|skipped)/)]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
