/** Virtual time for unit tests (excluded from the build): a clock that moves only when everything
 *  waits on it, and a client that sends through a governor to a simulated rate-limited gateway. */
import type { Clock } from "../api/clock.js";
import type { Governor } from "../api/governor.js";
import { seededRandom, TokenBucket } from "../emulator/faults.js";

/** Time moves only when every promise waits on a sleep: run() fires the timers in time order. */
export class VirtualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: { at: number; seq: number; fire: () => void }[] = [];

  constructor(start = 1_000_000) {
    this.t = start;
  }

  now = (): number => this.t;

  sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      this.timers.push({ at: this.t + Math.max(0, ms), seq: this.seq++, fire: resolve });
    });

  /** Settles `work`, moving time on whenever nothing else can happen. */
  async run<T>(work: Promise<T>): Promise<T> {
    let done = false;
    work.then(
      () => (done = true),
      () => (done = true),
    );
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (done) return work;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift();
      if (!next) throw new Error("virtual time: everything waits and no timer is set");
      this.t = Math.max(this.t, next.at);
      next.fire();
    }
  }
}

/** Jitter that replays (the emulator's seeded generator). */
export const seeded = seededRandom;

export interface GatewayRun {
  seconds: number;
  forwarded: number;
  turnedAway: number;
}

/** `requests` requests, `workers` at a time (as plan reads: two lists, then the details), each sent
 *  through the governor to a token-bucket gateway (an empty bucket answers 429 at once, a passed request
 *  takes `latencyMs`), sent again after a 429 as revsync does: after the governor's pause when there is
 *  a Retry-After, else after a backoff of its own. */
export async function throughGateway(
  clock: VirtualClock,
  gov: Governor,
  o: { rate: number; burst: number; latencyMs: number; requests: number; workers: number; retryAfter: boolean; random: () => number },
): Promise<GatewayRun> {
  const bucket = new TokenBucket(o.rate, o.burst, clock.now);
  let forwarded = 0;
  let turnedAway = 0;
  const one = async (): Promise<void> => {
    for (let throttles = 0; ; throttles++) {
      const ticket = await gov.acquire();
      await clock.sleep(1);
      forwarded++;
      const wait = bucket.take();
      if (wait === undefined) {
        await clock.sleep(o.latencyMs);
        gov.settle(ticket, { kind: "accepted" });
        return;
      }
      turnedAway++;
      await clock.sleep(1);
      gov.settle(ticket, { kind: "turned-away", retryAfterMs: o.retryAfter ? wait * 1000 : undefined });
      if (!o.retryAfter) await clock.sleep(Math.floor(o.random() * Math.min(20_000, 250 * 2 ** throttles)));
    }
  };
  const started = clock.now();
  await clock.run(
    (async () => {
      await Promise.all([one(), one()]);
      let next = 2;
      await Promise.all(
        Array.from({ length: o.workers }, async () => {
          while (next < o.requests) {
            next++;
            await one();
          }
        }),
      );
    })(),
  );
  return { seconds: (clock.now() - started) / 1000, forwarded, turnedAway };
}
