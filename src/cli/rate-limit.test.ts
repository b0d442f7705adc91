import { describe, expect, it } from "vitest";
import { Governor, type Ticket } from "../api/governor.js";
import { seeded, VirtualClock } from "../testing/virtual-time.js";
import { turnedAwayNote, waitingNote } from "./rate-limit.js";

describe("what the user is told about the service's rate limit", () => {
  it("the progress line says when revsync waits on it, and the closing note how many requests it turned away", async () => {
    const clock = new VirtualClock();
    const gov = new Governor({ clock, random: seeded(1), concurrency: 8, timeoutMs: 600_000 });
    expect(waitingNote(gov)).toBe("");
    expect(turnedAwayNote(gov, "demo", false)).toBeUndefined();
    await clock.run(
      (async () => {
        for (let i = 0; i < 20; i++) gov.settle(await gov.acquire(), { kind: "accepted" });
        const [a, b] = await Promise.all([gov.acquire(), gov.acquire()]);
        gov.settle(a as Ticket, { kind: "turned-away", retryAfterMs: 3000 });
        const next = gov.acquire();
        expect(waitingNote(gov)).toBe("; waiting 3 s on the service's rate limit (Retry-After)");
        gov.settle(b as Ticket, { kind: "turned-away" });
        gov.settle(await next, { kind: "accepted" });
        const paced = gov.acquire();
        expect(waitingNote(gov)).toMatch(/^; waiting on the service's rate limit \(\d+ requests\/s\)$/);
        gov.settle(await paced, { kind: "accepted" });
      })(),
    );
    expect(waitingNote(gov)).toBe("");
    expect(turnedAwayNote(gov, "demo", false)).toMatch(
      /^the service's rate limit turned away 2 requests of 24 \(429\); (from then on it took about [\d.]+ requests\/s|revsync slowed down)\. If you know the limit, set rate_limit for environment "demo" in revsync\.yaml \(or --rate-limit\)\.$/,
    );
    expect(turnedAwayNote(gov, "demo", true)).toMatch(/\(429\); (from then on it took about [\d.]+ requests\/s|revsync slowed down)\.$/);
  });
});

describe("the closing note's rate", () => {
  it("is what the service took behind its limit (a 10/s token bucket), not the pacing rate probing above it", async () => {
    const clock = new VirtualClock();
    const gov = new Governor({ clock, random: seeded(3), concurrency: 8, timeoutMs: 600_000 });
    // The service: a token bucket of 10 requests/s, burst 2; each answer takes 20 ms.
    let tokens = 2;
    let at = 0;
    const take = (): boolean => {
      tokens = Math.min(2, tokens + ((clock.now() - at) * 10) / 1000);
      at = clock.now();
      if (tokens < 1) return false;
      tokens--;
      return true;
    };
    let done = 0;
    const worker = async (): Promise<void> => {
      while (done < 150) {
        const t = await gov.acquire();
        await clock.sleep(20);
        const ok = take();
        if (ok) done++;
        gov.settle(t, ok ? { kind: "accepted" } : { kind: "turned-away" });
      }
    };
    await clock.run(Promise.all(Array.from({ length: 8 }, worker)));
    const took = Number(/from then on it took about ([\d.]+) requests\/s/.exec(turnedAwayNote(gov, "demo", true) ?? "")?.[1]);
    expect(took).toBeGreaterThan(5);
    expect(took).toBeLessThanOrEqual(10.5);
  });
});
