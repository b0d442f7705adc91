import { describe, expect, it } from "vitest";
import { runFleet } from "./run.js";

/** A work whose environments end when the test says so, in any order. */
function gated(names: string[]) {
  const gates = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  const running = new Set<string>();
  let most = 0;
  const work = (name: string): Promise<string> =>
    new Promise<void>((resolve, reject) => {
      gates.set(name, { resolve, reject });
      running.add(name);
      most = Math.max(most, running.size);
    }).then(
      () => {
        running.delete(name);
        return `${name}: done`;
      },
      (e: unknown) => {
        running.delete(name);
        throw e;
      },
    );
  const settle = async (name: string, error?: string): Promise<void> => {
    // Let the pool start what it may before the test looks.
    for (let i = 0; i < 5 && !gates.has(name); i++) await Promise.resolve();
    const g = gates.get(name);
    if (!g) throw new Error(`${name} never started (running: ${[...running].join(", ")}; of ${names.join(", ")})`);
    if (error) g.reject(new Error(error));
    else g.resolve();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { work, settle, running, most: () => most };
}

describe("a run across environments", () => {
  it("runs at most `parallel` at once, hands each outcome on in the given order as soon as those before it are done, and a failure is that environment's outcome alone", async () => {
    const names = ["a", "b", "c", "d", "e"];
    const g = gated(names);
    const inOrder: string[] = [];
    const events: string[] = [];
    const run = runFleet(names, {
      parallel: 2,
      work: g.work,
      failed: (name, e) => `${name}: failed (${(e as Error).message})`,
      observer: {
        started: (n) => events.push(`start ${n}`),
        finished: (n) => events.push(`end ${n}`),
        inOrder: (o, i) => inOrder.push(`${i} ${o}`),
      },
    });
    await g.settle("b");
    expect([...g.running].sort()).toEqual(["a", "c"]);
    // b is done, but a is not: nothing is handed on yet.
    expect(inOrder).toEqual([]);
    await g.settle("a", "connection refused");
    expect(inOrder).toEqual(["0 a: failed (connection refused)", "1 b: done"]);
    await g.settle("d");
    await g.settle("c");
    await g.settle("e");
    expect(await run).toEqual(["a: failed (connection refused)", "b: done", "c: done", "d: done", "e: done"]);
    expect(inOrder.map((l) => l[0])).toEqual(["0", "1", "2", "3", "4"]);
    expect(g.most()).toBe(2);
    expect(events.slice(0, 3)).toEqual(["start a", "start b", "end b"]);
  });

  it("one at a time with --parallel 1; never more workers than environments; none for none", async () => {
    const order: string[] = [];
    const one = await runFleet(["x", "y", "z"], {
      parallel: 1,
      work: async (n) => {
        order.push(`start ${n}`);
        await Promise.resolve();
        order.push(`end ${n}`);
        return n;
      },
      failed: () => "failed",
    });
    expect(one).toEqual(["x", "y", "z"]);
    expect(order).toEqual(["start x", "end x", "start y", "end y", "start z", "end z"]);
    expect(await runFleet(["only"], { parallel: 64, work: async (n) => n.toUpperCase(), failed: () => "" })).toEqual(["ONLY"]);
    expect(await runFleet([], { parallel: 4, work: async () => "never", failed: () => "never" })).toEqual([]);
  });
});
