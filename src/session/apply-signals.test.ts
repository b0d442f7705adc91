import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { applySignals, type SignalSource } from "./apply-signals.js";

/** Signals sent by hand: no process receives one. */
function source(): SignalSource & { send(signal: "SIGINT" | "SIGTERM"): void; listening(): number } {
  const e = new EventEmitter();
  return {
    on: (s, l) => e.on(s, l),
    off: (s, l) => e.off(s, l),
    send: (s) => void e.emit(s),
    listening: () => e.listenerCount("SIGINT") + e.listenerCount("SIGTERM"),
  };
}

const settled = async (p: Promise<unknown>): Promise<boolean> => Promise.race([p.then(() => true), Promise.resolve().then(() => false)]);

describe("apply's signals", () => {
  it("the first signal starts nothing new, with a warning; the second stops at once", async () => {
    const src = source();
    const warnings: string[] = [];
    const s = applySignals(src, (l) => warnings.push(l));
    expect(s.isStopping()).toBe(false);
    src.send("SIGTERM");
    expect(s.isStopping()).toBe(true);
    expect(warnings).toEqual(["SIGTERM: starting nothing new; waiting for the requests in flight (interrupt again to stop at once)"]);
    expect(await settled(s.stopNow)).toBe(false);
    src.send("SIGINT");
    expect(await s.stopNow).toBe("stop now");
    expect(warnings).toHaveLength(1);
  });

  it("a stop at once lists the steps already finished, with what became of each, and names the steps in flight", () => {
    const s = applySignals(source(), () => undefined);
    expect(s.stopNowMessage()).toBe("interrupted again: stopping now; no write was in flight.\nNo step had finished.\nRun revsync plan to see what is left.");
    s.started(1, "create ssp/A");
    s.started(2, "approve ssp/B/batch/X");
    s.started(3, "review ssp/C/batch/Y");
    s.finished(1, "done    create   ssp/A: created");
    s.finished(3, "failed  review   ssp/C/batch/Y: 409 conflict");
    expect(s.inFlight()).toEqual(["approve ssp/B/batch/X"]);
    expect(s.stopNowMessage()).toBe(
      [
        "interrupted again: stopping now.",
        "Finished before the stop:",
        "  done    create   ssp/A: created",
        "  failed  review   ssp/C/batch/Y: 409 conflict",
        "The outcome of these requests in flight is unknown:",
        "  approve ssp/B/batch/X",
        "Run revsync plan to see what landed.",
      ].join("\n"),
    );
  });

  it("while the prompt waits the handlers are off (Ctrl-C is the prompt's), and back after it; close takes them off", async () => {
    const src = source();
    const s = applySignals(src, () => undefined);
    expect(src.listening()).toBe(2);
    const during = await s.without(async () => {
      src.send("SIGINT");
      return src.listening();
    });
    expect(during).toBe(0);
    expect(s.isStopping()).toBe(false);
    expect(src.listening()).toBe(2);
    await expect(s.without(async () => Promise.reject(new Error("cancelled")))).rejects.toThrow("cancelled");
    expect(src.listening()).toBe(2);
    s.close();
    expect(src.listening()).toBe(0);
  });
});
