import { describe, expect, it } from "vitest";
import { seeded, throughGateway, VirtualClock } from "../testing/virtual-time.js";
import { Governor, TimeLimitReached, type Ticket } from "./governor.js";

// The rate governor under virtual time: every assertion is a count or a virtual duration, never a
// measurement of real time.

function governor(clock: VirtualClock, o: Partial<ConstructorParameters<typeof Governor>[0]> = {}): Governor {
  return new Governor({ clock, random: seeded(1), concurrency: 8, timeoutMs: 600_000, ...o });
}

/** Sends one request that the service accepts `ms` later. */
async function accepted(clock: VirtualClock, gov: Governor, ms = 10): Promise<Ticket> {
  const t = await gov.acquire();
  await clock.sleep(ms);
  gov.settle(t, { kind: "accepted" });
  return t;
}

describe("the rate governor", () => {
  it("without a 429 or a known limit it only caps the requests in flight at --concurrency", async () => {
    const clock = new VirtualClock();
    const gov = governor(clock, { concurrency: 3 });
    let inFlight = 0;
    let most = 0;
    await clock.run(
      Promise.all(
        Array.from({ length: 20 }, async () => {
          const t = await gov.acquire();
          most = Math.max(most, ++inFlight);
          await clock.sleep(10);
          inFlight--;
          gov.settle(t, { kind: "accepted" });
        }),
      ),
    );
    expect(most).toBe(3);
    expect(gov.currentRate).toBeUndefined();
    expect(gov.window).toBe(3);
  });

  it("slows down on 429s, and its rate rises again once they stop, with the requests in flight back to --concurrency", async () => {
    const clock = new VirtualClock();
    const gov = governor(clock);
    await clock.run(
      (async () => {
        for (let i = 0; i < 20; i++) await accepted(clock, gov);
        // The first 429: slow start from what the first moments took.
        gov.settle(await gov.acquire(), { kind: "turned-away" });
        for (let i = 0; i < 30; i++) await accepted(clock, gov);
        // The second: the rate drops to 0.7 of what the service was accepting.
        await clock.sleep(1000);
        const before = gov.currentRate ?? 0;
        gov.settle(await gov.acquire(), { kind: "turned-away" });
        const after = gov.currentRate ?? 0;
        expect(after).toBeLessThan(before);
        expect(gov.window).toBeLessThan(8);
        // No 429 from here, and more requests than the rate allows: the rate climbs back to where it
        // met the 429, then beyond it, and the requests in flight grow back to --concurrency.
        const rates: number[] = [];
        let sent = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (sent++ < 3000) {
              await accepted(clock, gov);
              rates.push(gov.currentRate ?? Infinity);
            }
          }),
        );
        expect(rates.every((r, j) => j === 0 || r >= (rates[j - 1] ?? 0))).toBe(true);
        expect(rates[rates.length - 1]).toBeGreaterThan(before);
        expect(gov.window).toBe(8);
      })(),
    );
    expect(gov.turnedAway).toBe(2);
  });

  it("decreases once per congestion event: the 429s of requests sent before the decrease do not decrease again", async () => {
    const clock = new VirtualClock();
    const gov = governor(clock);
    await clock.run(
      (async () => {
        for (let i = 0; i < 10; i++) await accepted(clock, gov);
        const inFlight = await Promise.all(Array.from({ length: 6 }, () => gov.acquire()));
        await clock.sleep(1);
        gov.settle(inFlight[0] as Ticket, { kind: "turned-away" });
        const rate = gov.currentRate;
        for (const t of inFlight.slice(1)) gov.settle(t, { kind: "turned-away" });
        expect(gov.currentRate).toBe(rate);
      })(),
    );
    expect(gov.turnedAway).toBe(6);
  });

  it("a Retry-After pauses every request for that long, with up to a tenth more of jitter; REVSYNC_MAX_RETRY_WAIT_MS caps it", async () => {
    for (const [maxWaitMs, least, most] of [
      [Infinity, 2000, 2200],
      [20, 20, 20],
    ] as const) {
      const clock = new VirtualClock();
      const gov = governor(clock, { maxWaitMs });
      await clock.run(
        (async () => {
          for (let i = 0; i < 10; i++) await accepted(clock, gov);
          const [a, b] = await Promise.all([gov.acquire(), gov.acquire()]);
          const at = clock.now();
          gov.settle(a as Ticket, { kind: "turned-away", retryAfterMs: 2000 });
          expect(gov.pausedForMs).toBeGreaterThanOrEqual(least);
          expect(gov.pausedForMs).toBeLessThanOrEqual(most);
          expect(gov.waiting).toBe(false); // nobody queued yet
          const next = gov.acquire();
          expect(gov.waiting).toBe(true);
          gov.settle(b as Ticket, { kind: "accepted" });
          await next;
          expect(clock.now() - at).toBeGreaterThanOrEqual(least);
        })(),
      );
    }
  });

  it("with a known limit it starts at that rate and never goes above it", async () => {
    const clock = new VirtualClock();
    const gov = governor(clock, { rateLimit: 5 });
    const start = clock.now();
    await clock.run(Promise.all(Array.from({ length: 51 }, () => accepted(clock, gov))));
    // 51 sends at 5 per second: the first at once, then one every 200 ms.
    expect(clock.now() - start).toBeGreaterThanOrEqual(10_000);
    expect(gov.currentRate).toBe(5);
  });

  it("nothing is sent after the run's time limit: waiting past it fails at once, naming why", async () => {
    const clock = new VirtualClock();
    const gov = governor(clock, { timeoutMs: 5000 });
    await clock.run(
      (async () => {
        const t = await gov.acquire();
        gov.settle(t, { kind: "turned-away", retryAfterMs: 60_000 });
        const at = clock.now();
        const err = await gov.acquire().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(TimeLimitReached);
        expect((err as TimeLimitReached).waitedFor).toBe("limit");
        expect(clock.now()).toBe(at);
      })(),
    );
    const quiet = new VirtualClock();
    const idle = governor(quiet, { timeoutMs: 5000 });
    await quiet.run(quiet.sleep(6000));
    const late = await idle.acquire().catch((e: unknown) => e);
    expect((late as TimeLimitReached).waitedFor).toBe("time");
  });

  it("time left out of the time limit (apply's prompt) moves it on by that much", async () => {
    const clock = new VirtualClock();
    const gov = governor(clock, { timeoutMs: 5000 });
    const before = gov.deadline;
    await clock.run(clock.sleep(60_000));
    gov.excludeFromTimeLimit(60_000);
    expect(gov.deadline).toBe(before + 60_000);
    const t = await gov.acquire();
    gov.settle(t, { kind: "accepted" });
    await clock.run(clock.sleep(5000));
    expect(await gov.acquire().catch((e: unknown) => e)).toBeInstanceOf(TimeLimitReached);
  });
});

describe("through a token-bucket gateway of 25 requests/s, burst 10 (10 ms a request, 302 requests, 8 workers)", () => {
  // The gateway `npm run bench -- ratelimit` puts in front of the emulator, in virtual time: the requests
  // take at least (302 - 10) / 25 s.
  const gateway = { rate: 25, burst: 10, latencyMs: 10, requests: 302, workers: 8 };
  const bound = gateway.requests / gateway.rate;

  it.each([true, false])("Retry-After %s: within 1.3 x of requests / rate, at most 10% turned away", async (retryAfter) => {
    for (const seed of [1, 2, 3]) {
      const clock = new VirtualClock();
      const random = seeded(seed);
      const run = await throughGateway(clock, new Governor({ clock, random, concurrency: 8, timeoutMs: 600_000 }), { ...gateway, retryAfter, random });
      expect(run.forwarded - run.turnedAway).toBe(gateway.requests);
      expect(run.turnedAway / run.forwarded).toBeLessThanOrEqual(0.1);
      expect(run.seconds).toBeLessThanOrEqual(1.3 * bound);
    }
  });

  it("with rate_limit 25 known: none turned away", async () => {
    const clock = new VirtualClock();
    const random = seeded(1);
    const gov = new Governor({ clock, random, concurrency: 8, timeoutMs: 600_000, rateLimit: 25 });
    const run = await throughGateway(clock, gov, { ...gateway, retryAfter: true, random });
    expect(run.turnedAway).toBe(0);
    expect(run.seconds).toBeLessThanOrEqual(1.05 * bound);
  });
});
