import type { Clock } from "./clock.js";

/** How the governor learns: CUBIC (RFC 9438), as the AWS SDKs' adaptive retry mode applies it to a
 *  request rate. After a 429 the rate drops to BETA times the rate the service was accepting; then it
 *  grows back along a cubic curve that is flat near that rate and probes above it once the rate has held. */
const BETA = 0.7;
/** Requests/s per s³: how fast the cubic curve grows away from the last rate that met a 429. */
const SCALE = 0.4;
/** Never slower than this (requests/s), whatever the service says. */
const MIN_RATE = 0.5;

export interface GovernorOptions {
  clock: Clock;
  random: () => number;
  /** The most requests in flight at once (--concurrency). */
  concurrency: number;
  /** A known limit (requests/s): the rate to start at and never to exceed. */
  rateLimit?: number;
  /** The run's time limit (ms from now): nothing is sent after it. */
  timeoutMs: number;
  /** Caps every pause (Retry-After included): REVSYNC_MAX_RETRY_WAIT_MS, for tests. */
  maxWaitMs?: number;
  log?: (line: string) => void;
}

/** A send the governor let go: settle it with what the service answered. */
export interface Ticket {
  readonly sentAt: number;
  /** How many sends the run made before this one. */
  readonly seq: number;
}

/** What a send's answer says about the rate: the service took it (any answer but a 429), turned it away
 *  (429, with its Retry-After in ms when it gave one), or there was no answer at all. */
export type RateSignal = { kind: "accepted" } | { kind: "turned-away"; retryAfterMs?: number } | { kind: "no-answer" };

/** The run's time limit ran out before a request could be sent (again). */
export class TimeLimitReached extends Error {
  constructor(readonly waitedFor: "limit" | "time") {
    super("the run's time limit ran out");
    this.name = "TimeLimitReached";
  }
}

interface Waiter {
  resolve: (t: Ticket) => void;
  reject: (e: Error) => void;
}

/** One per run, shared by every request to the service (the token endpoint excepted): it learns the
 *  rate the service accepts from its 429s and keeps revsync just under it. Until the first 429 (and with
 *  no known limit) it only caps the requests in flight at --concurrency; after it, sends are paced by a
 *  token bucket whose rate follows CUBIC, and the requests in flight shrink with the rate. A Retry-After
 *  pauses every request, with jitter. */
export class Governor {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly max: number;
  private readonly ceiling: number;
  private readonly startedAt: number;
  /** When the run's time limit runs out (ms, the clock's time). */
  private timeLimitAt: number;
  private readonly maxWaitMs: number;
  private readonly log: (line: string) => void;
  private readonly listeners = new Set<() => void>();

  private queue: Waiter[] = [];
  private inFlight = 0;
  /** Pacing: a token bucket refilled at `rate` (requests/s); off (Infinity) until the first 429 unless a
   *  limit is known. */
  private rate: number;
  private tokens = 1;
  private refilledAt: number;
  /** Retry-After: nothing is sent before pausedUntil. Paused time is not active time. */
  private pausedUntil = 0;
  private pauseStart = 0;
  private pausedTotal = 0;
  /** Slow start, from the first 429 to the next: the rate doubles every half second. */
  private slowStart: { at: number; rate: number } | undefined;
  /** CUBIC: the rate at the last decrease, and the active time the curve takes to climb back to it. */
  private lastMax = 0;
  private climbS = 0;
  /** The last decrease: when (wall and active time), and what came after it. */
  private decreases = 0;
  private decreasedAt: number;
  private activeAtDecrease: number;
  private acceptedSince = 0;
  private pausesSince = 0;
  /** When the answers of the last two seconds were accepted (wall time). */
  private recent: number[] = [];
  /** The service's burst as its first 429 showed it: what it took before, beyond a known rate. */
  private burst = 0;
  /** Smoothed round-trip time (ms) of accepted answers, for the requests in flight the rate needs. */
  private srtt = 0;
  private wakeAt: number | undefined;
  private waitingBefore = false;
  /** The rate last shown with --verbose. */
  private shownRate = 0;

  /** Requests the service turned away (429), and requests sent, in this run. */
  turnedAway = 0;
  sent = 0;
  /** After the first 429: when it came and the last accepted answer (active time), and the answers
   *  accepted between them, for the rate the service actually took. */
  private firstTurnedAwayActive: number | undefined;
  private lastAcceptedActive = 0;
  private acceptedAfterFirst = 0;

  constructor(o: GovernorOptions) {
    this.clock = o.clock;
    this.random = o.random;
    this.max = Math.max(1, o.concurrency);
    this.ceiling = o.rateLimit ?? Infinity;
    this.rate = this.ceiling;
    const now = o.clock.now();
    this.startedAt = now;
    this.refilledAt = now;
    this.decreasedAt = now;
    this.activeAtDecrease = now;
    this.timeLimitAt = now + o.timeoutMs;
    this.maxWaitMs = o.maxWaitMs ?? Infinity;
    this.log = o.log ?? (() => undefined);
  }

  /** The rate revsync keeps to (requests/s), or undefined while nothing limits it. */
  get currentRate(): number | undefined {
    return Number.isFinite(this.rate) ? this.rate : undefined;
  }

  /** Requests/s the service took from its first 429 on: the answers it accepted over the active time
   *  (Retry-After pauses left out) up to the last of them. What the pacing rate is not: it probes above
   *  the limit between 429s. undefined before a 429, or with under a second to measure. */
  get achievedRate(): number | undefined {
    if (this.firstTurnedAwayActive === undefined) return undefined;
    const seconds = (this.lastAcceptedActive - this.firstTurnedAwayActive) / 1000;
    return seconds >= 1 ? this.acceptedAfterFirst / seconds : undefined;
  }

  /** The requests revsync lets be in flight at once. */
  get window(): number {
    if (!Number.isFinite(this.rate)) return this.max;
    // Little's law: in flight = rate x round trip; with room to spare, so that pacing sets the pace.
    const needed = Math.ceil((1.5 * this.rate * Math.max(this.srtt, 1)) / 1000) + 1;
    return Math.min(this.max, Math.max(1, needed));
  }

  /** true while some request waits on the service's limit (a Retry-After pause, or pacing after 429s). */
  get waiting(): boolean {
    const now = this.clock.now();
    return this.queue.length > 0 && (this.pausedUntil > now || (this.turnedAway > 0 && this.nextTokenAt(now) > now));
  }

  /** How long every request still waits for the service's Retry-After (ms; 0 when none). */
  get pausedForMs(): number {
    return Math.max(0, this.pausedUntil - this.clock.now());
  }

  /** When the run's time limit runs out (the clock's time, ms): nothing is sent from then on. */
  get deadline(): number {
    return this.timeLimitAt;
  }

  /** Moves the time limit on by `ms` that were not the run's requests' time (apply's confirmation
   *  prompt: a person reading the plan is not the service keeping revsync waiting). */
  excludeFromTimeLimit(ms: number): void {
    this.timeLimitAt += Math.max(0, ms);
  }

  /** Calls `listener` whenever waiting on the service's limit starts or ends; returns the unsubscribe. */
  watch(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when a request may be sent: after any pause, within the window, paced by the rate.
   *  Rejects with TimeLimitReached when that moment is past the run's time limit. */
  acquire(): Promise<Ticket> {
    return new Promise<Ticket>((resolve, reject) => {
      this.queue.push({ resolve, reject });
      this.pump();
    });
  }

  /** A send's answer: frees its place and teaches the governor. */
  settle(ticket: Ticket, signal: RateSignal): void {
    this.inFlight--;
    const now = this.clock.now();
    if (signal.kind === "accepted") {
      if (this.firstTurnedAwayActive !== undefined) {
        this.acceptedAfterFirst++;
        this.lastAcceptedActive = this.active(now);
      }
      this.recent.push(now);
      if (this.recent.length > 64 && (this.recent[0] ?? 0) < now - 2000) this.recent = this.recent.filter((t) => t >= now - 2000);
      if (ticket.sentAt > this.decreasedAt || !this.decreases) this.acceptedSince++;
      const rtt = now - ticket.sentAt;
      this.srtt = this.srtt ? this.srtt * 0.875 + rtt * 0.125 : rtt;
      this.grow(now);
    } else if (signal.kind === "turned-away") {
      this.turnedAway++;
      this.firstTurnedAwayActive ??= this.active(now);
      // One decrease per congestion event: the 429s of requests sent before the last decrease say what
      // that decrease already answered (TCP reduces once per window of data, for the same reason).
      if (ticket.sentAt > this.decreasedAt || !this.decreases) this.decrease(now, ticket);
      if (signal.retryAfterMs !== undefined) this.pause(now, signal.retryAfterMs);
    }
    this.pump();
  }

  private active(now: number): number {
    return now - this.pausedTotal - Math.max(0, Math.min(now, this.pausedUntil) - this.pauseStart);
  }

  /** Everyone waits: the service asked for it. Jitter (up to a tenth more) keeps several clients from
   *  coming back at the same moment. */
  private pause(now: number, ms: number): void {
    const wait = Math.min(this.maxWaitMs, ms * (1 + 0.1 * this.random()));
    if (now + wait <= this.pausedUntil) return;
    if (this.pausedUntil <= now) {
      this.pausedTotal += this.pausedUntil - this.pauseStart;
      this.pauseStart = now;
      this.pausesSince++;
    }
    this.pausedUntil = now + wait;
    this.log(`rate limit: the service asked to wait ${ms / 1000} s (Retry-After); every request waits ${Math.round(wait)} ms`);
  }

  /** Answers accepted in the last `ms` of wall time. */
  private acceptedWithin(now: number, ms: number): number {
    while (this.recent.length && (this.recent[0] ?? 0) < now - 2000) this.recent.shift();
    return this.recent.filter((t) => t >= now - ms).length;
  }

  private decrease(now: number, ticket: Ticket): void {
    const active = this.active(now);
    if (!this.decreases) {
      // The requests sent before this one, less those turned away: what the service took before its
      // first 429, which is at most its saved-up burst plus what a known rate allowed.
      const took = ticket.seq - (this.turnedAway - 1);
      const known = Number.isFinite(this.ceiling) ? (this.ceiling * (now - this.startedAt)) / 1000 : 0;
      this.burst = Math.max(1, took - known);
    }
    // Each a lower bound of the service's rate, for a token bucket of this burst: it was empty at the
    // last 429, and holds at most the burst at any time (refilled during a pause, or while revsync sent
    // less than it allows).
    const wallS = (now - this.decreasedAt) / 1000;
    const activeS = (active - this.activeAtDecrease) / 1000;
    const bounds = [this.acceptedSince / Math.max(1, activeS), ...[500, 1000, 2000].map((ms) => ((this.acceptedWithin(now, ms) - this.burst - 1) * 1000) / ms)];
    const known = Math.max(MIN_RATE, ...bounds);
    const first = !this.decreases && !Number.isFinite(this.ceiling);
    this.decreases++;
    this.decreasedAt = now;
    this.activeAtDecrease = active;
    this.acceptedSince = 0;
    this.pausesSince = 0;
    if (first) {
      // Nothing known yet but the first moments: from what they took, double until the next 429.
      const start = Math.max(MIN_RATE, ticket.seq - (this.turnedAway - 1));
      this.slowStart = { at: active, rate: start };
      this.setRate(now, start);
    } else {
      this.slowStart = undefined;
      // Under a second of measuring says little: then the rate at the 429 is all that is known.
      this.lastMax = wallS >= 1 ? Math.min(this.rate, known) : this.rate;
      this.climbS = Math.cbrt((this.lastMax * (1 - BETA)) / SCALE);
      this.setRate(now, Math.max(MIN_RATE, this.lastMax * BETA));
    }
    // The next send waits its turn at the new rate.
    this.tokens = 0;
    this.shownRate = this.rate;
    this.log(`rate limit: 429 from the service; sending at most ${this.rate.toFixed(1)} requests/s, ${this.window} at once`);
  }

  private grow(now: number): void {
    if (!Number.isFinite(this.rate) || !this.decreases) return;
    const t = (this.active(now) - this.activeAtDecrease) / 1000;
    const target = this.slowStart ? this.slowStart.rate * 4 ** t : SCALE * (t - this.climbS) ** 3 + this.lastMax;
    // Never more than twice what was measured: a rate that is not used is not known to be accepted.
    const next = Math.min(this.ceiling, Math.max(MIN_RATE, target), Math.max(2 * this.acceptedWithin(now, 1000), this.rate));
    if (next === this.rate) return;
    this.setRate(now, next);
    if (next >= this.shownRate * 1.25 || (next === this.ceiling && this.shownRate !== next)) {
      this.shownRate = next;
      this.log(`rate limit: no 429 since; sending at most ${next.toFixed(1)} requests/s, ${this.window} at once`);
    }
  }

  private setRate(now: number, rate: number): void {
    this.refill(now);
    this.rate = rate;
  }

  /** The pacing bucket holds up to 50 ms of sends (one at least, two at most): enough to make up for
   *  timers that fire late, too little for a burst. */
  private capacity(): number {
    return Math.max(1, Math.min(2, this.rate * 0.05));
  }

  private refill(now: number): void {
    if (Number.isFinite(this.rate)) this.tokens = Math.min(this.capacity(), this.tokens + ((now - this.refilledAt) * this.rate) / 1000);
    this.refilledAt = now;
  }

  private nextTokenAt(now: number): number {
    if (!Number.isFinite(this.rate)) return now;
    this.refill(now);
    return this.tokens >= 1 ? now : now + ((1 - this.tokens) * 1000) / this.rate;
  }

  private pump(): void {
    const now = this.clock.now();
    while (this.queue.length && this.inFlight < this.window) {
      const at = Math.max(this.pausedUntil, this.nextTokenAt(now));
      if (at >= this.timeLimitAt) {
        const why = this.pausedUntil >= this.timeLimitAt || this.turnedAway > 0 ? "limit" : "time";
        for (const w of this.queue.splice(0)) w.reject(new TimeLimitReached(why));
        break;
      }
      if (at > now) {
        this.wake(now, at);
        break;
      }
      if (Number.isFinite(this.rate)) this.tokens -= 1;
      this.inFlight++;
      this.queue.shift()?.resolve({ sentAt: now, seq: this.sent++ });
    }
    const waiting = this.waiting;
    if (waiting !== this.waitingBefore) {
      this.waitingBefore = waiting;
      for (const l of this.listeners) l();
    }
  }

  private wake(now: number, at: number): void {
    if (this.wakeAt !== undefined && this.wakeAt <= at && this.wakeAt > now) return;
    this.wakeAt = at;
    void this.clock.sleep(at - now).then(() => {
      if (this.wakeAt === at) this.wakeAt = undefined;
      this.pump();
    });
  }
}
