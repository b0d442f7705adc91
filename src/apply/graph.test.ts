import { describe, expect, it } from "vitest";
import type { Change, Plan } from "../plan/model.js";
import { changeOf } from "../testing/builders.js";
import { buildSteps, schedule, type Step } from "./graph.js";

const change = (action: Change["action"], address: string, policy?: string): Change =>
  changeOf(action, address, {
    payload:
      action === "update"
        ? { kind: "update", compliance_id: "TC", compliance_name: "T", unique_key: "u", item: {} as never }
        : action === "create"
          ? { kind: "create", body: { compliance_name: address.slice(4) } as never, hierarchy_no: 1 }
          : action === "unsupported" || action === "blocked" || action === "not_in_git"
            ? undefined
            : { kind: "batch", compliance_id: null, policy: policy ?? "", batch: address.split("/").pop() ?? "" },
  });

const planOf = (changes: Change[]): Plan => ({ changes }) as Plan;

describe("buildSteps", () => {
  it("updates first; a batch needs its policy's create; approve needs its review; blocked, not in git and unsupported are no steps", () => {
    const steps = buildSteps(
      planOf([
        change("update", "tenant-configuration/T"),
        change("create", "ssp/A"),
        change("review", "ssp/A/batch/B1", "A"),
        change("approve", "ssp/A/batch/B1", "A"),
        change("approve", "ssp/Z/batch/B9", "Z"),
        change("unsupported", "ssp/Q"),
        change("blocked", "ssp/R"),
        change("not_in_git", "ssp/S"),
      ]),
    );
    const view = steps.map((s) => ({ id: s.id, what: `${s.change.action} ${s.change.address}`, needs: s.needs, after: s.after }));
    expect(view).toEqual([
      { id: 0, what: "update tenant-configuration/T", needs: [], after: [] },
      { id: 1, what: "create ssp/A", needs: [], after: [0] },
      { id: 2, what: "review ssp/A/batch/B1", needs: [1], after: [0] },
      // The batch steps of one policy go one after another (each moves the version the next If-Match names).
      { id: 3, what: "approve ssp/A/batch/B1", needs: [1, 2], after: [0, 2] },
      { id: 4, what: "approve ssp/Z/batch/B9", needs: [], after: [0] },
    ]);
  });
});

describe("schedule", () => {
  const steps = (): Step[] =>
    buildSteps(
      planOf([
        change("update", "tenant-configuration/T"),
        change("create", "ssp/A"),
        change("review", "ssp/A/batch/B1", "A"),
        change("approve", "ssp/A/batch/B1", "A"),
        change("create", "ssp/B"),
        change("review", "ssp/B/batch/B2", "B"),
      ]),
    );

  it("a failed step skips only what depends on it; the rest runs, never over the concurrency", async () => {
    let running = 0;
    let peak = 0;
    const order: string[] = [];
    const out = await schedule(
      steps(),
      async (s) => {
        running++;
        peak = Math.max(peak, running);
        await Promise.resolve();
        running--;
        order.push(s.change.address + ":" + s.change.action);
        if (s.change.address === "ssp/A") throw new Error("refused");
        return "ok";
      },
      { concurrency: 2, isStopping: () => false },
    );
    expect(out.map((o) => `${o.status} ${o.step.change.action} ${o.step.change.address}`)).toEqual([
      "done update tenant-configuration/T",
      "failed create ssp/A",
      "skipped review ssp/A/batch/B1",
      "skipped approve ssp/A/batch/B1",
      "done create ssp/B",
      "done review ssp/B/batch/B2",
    ]);
    expect(out[2]?.message).toBe("skipped: create of ssp/A failed");
    expect(out[3]?.message).toBe("skipped: create of ssp/A failed");
    expect(order[0]).toBe("tenant-configuration/T:update");
    expect(peak).toBeLessThanOrEqual(2);
  });

  it("once stopping, nothing new starts: what did not start is skipped", async () => {
    let stop = false;
    const out = await schedule(
      steps(),
      async () => {
        stop = true;
        return "ok";
      },
      { concurrency: 1, isStopping: () => stop },
    );
    expect(out.map((o) => o.status)).toEqual(["done", "skipped", "skipped", "skipped", "skipped", "skipped"]);
    expect(out[1]?.message).toBe("skipped: interrupted before it started");
  });
});
