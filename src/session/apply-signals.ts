/** Signals during apply: the first SIGINT or SIGTERM never kills apply mid-step (nothing new starts,
 *  what is in flight finishes); a second one stops at once and says what became of each step that
 *  finished and names what was in flight (like Terraform). While the confirmation prompt waits, Ctrl-C
 *  belongs to the prompt (it cancels). */

type Signal = "SIGINT" | "SIGTERM";

/** Where signals come from: the process, or a stand-in in tests. */
export interface SignalSource {
  on(signal: Signal, listener: () => void): unknown;
  off(signal: Signal, listener: () => void): unknown;
}

export interface ApplySignals {
  /** Whether a first signal came: start nothing new. */
  isStopping(): boolean;
  /** Settles when a second signal comes. */
  readonly stopNow: Promise<"stop now">;
  /** Runs `fn` with the handlers off (the prompt handles Ctrl-C itself), then puts them back. */
  without<T>(fn: () => Promise<T>): Promise<T>;
  /** A step started or finished (`outcome`: its line in apply's report): what a stop at once lists. */
  started(id: number, what: string): void;
  finished(id: number, outcome: string): void;
  inFlight(): string[];
  /** What a stop at once says. */
  stopNowMessage(): string;
  /** Takes the handlers off. */
  close(): void;
}

export function applySignals(source: SignalSource, warn: (line: string) => void): ApplySignals {
  let stopping = false;
  let stop: () => void = () => undefined;
  const stopNow = new Promise<"stop now">((resolve) => (stop = () => resolve("stop now")));
  const running = new Map<number, string>();
  const done: string[] = [];
  const handler = (signal: Signal) => (): void => {
    if (stopping) return stop();
    stopping = true;
    warn(`${signal}: starting nothing new; waiting for the requests in flight (interrupt again to stop at once)`);
  };
  const handlers: [Signal, () => void][] = [
    ["SIGINT", handler("SIGINT")],
    ["SIGTERM", handler("SIGTERM")],
  ];
  const on = (): void => handlers.forEach(([s, h]) => source.on(s, h));
  const off = (): void => handlers.forEach(([s, h]) => source.off(s, h));
  on();
  return {
    isStopping: () => stopping,
    stopNow,
    async without<T>(fn: () => Promise<T>): Promise<T> {
      off();
      try {
        return await fn();
      } finally {
        on();
      }
    },
    started: (id, what) => void running.set(id, what),
    finished: (id, outcome) => {
      running.delete(id);
      done.push(outcome);
    },
    inFlight: () => [...running.values()],
    stopNowMessage: () =>
      [
        running.size ? "interrupted again: stopping now." : "interrupted again: stopping now; no write was in flight.",
        ...(done.length ? ["Finished before the stop:", ...done.map((l) => `  ${l}`)] : ["No step had finished."]),
        ...(running.size ? ["The outcome of these requests in flight is unknown:", ...[...running.values()].map((l) => `  ${l}`)] : []),
        running.size ? "Run revsync plan to see what landed." : "Run revsync plan to see what is left.",
      ].join("\n"),
    close: off,
  };
}
