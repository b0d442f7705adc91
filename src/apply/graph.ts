import { isApplied, type Change, type Plan } from "../plan/model.js";

export interface Step {
  id: number;
  change: Change;
  /** Steps that must succeed first; if one fails or is skipped, this step is skipped. */
  needs: number[];
  /** Steps that must have finished first (whatever their outcome): ordering only. */
  after: number[];
}

/** The apply order (docs/concepts.md, "Apply order"): tenant configuration updates; SSP creates in hierarchy_no order;
 *  a batch's review after its policy exists (a policy this run creates: after every create of the run);
 *  approve after review. Entries apply does not act on
 *  (blocked, not in git, unsupported) are not steps. */
export function buildSteps(plan: Plan): Step[] {
  const steps: Step[] = [];
  plan.changes.forEach((change) => {
    if (!isApplied(change)) return;
    steps.push({ id: steps.length, change, needs: [], after: [] });
  });
  const updates = steps.filter((s) => s.change.action === "update").map((s) => s.id);
  const createOf = new Map<string, number>();
  const reviewOf = new Map<string, number>();
  for (const s of steps) {
    if (s.change.action === "create") createOf.set(s.change.address, s.id);
    if (s.change.action === "review") reviewOf.set(s.change.address, s.id);
  }
  // The batch steps of one policy go one after another: each moves the policy's version, which the
  // next one's If-Match names (sent at once, they would turn each other away with 412).
  const lastOfPolicy = new Map<string, number>();
  // A policy this run creates moves its batches forward only after every create of the run has ended:
  // the one read after them says whether another policy took its place in the hierarchy meanwhile.
  const creates = [...createOf.values()];
  for (const s of steps) {
    if (s.change.action === "update") continue;
    s.after.push(...updates);
    if (s.change.action === "review" || s.change.action === "approve") {
      const policy = policyAddressOf(s.change);
      const prev = lastOfPolicy.get(policy);
      if (prev !== undefined) s.after.push(prev);
      lastOfPolicy.set(policy, s.id);
    }
    if (s.change.action === "review" || s.change.action === "approve") {
      const create = createOf.get(policyAddressOf(s.change));
      if (create !== undefined) {
        s.needs.push(create);
        s.after.push(...creates.filter((id) => id !== create));
      }
      if (s.change.action === "approve") {
        const review = reviewOf.get(s.change.address);
        if (review !== undefined) s.needs.push(review);
      }
    }
  }
  return steps;
}

function policyAddressOf(c: Change): string {
  return c.payload?.kind === "batch" ? `ssp/${c.payload.policy}` : c.address;
}

/** Who prepared and who approved an approve's batch (four eyes), as the step found them right before its
 *  send: the batch's reviewer and its policy's creator (the service's fields, or this run's own review and
 *  create), and the user the approve was sent as. */
export interface FourEyesFacts {
  reviewed_by: string | null;
  policy_created_by: string | null;
  approved_by: string | null;
  /** What the four-eyes rule did to the approve: blocked by revsync before it was sent, or refused by the
   *  service (sent as its preparer); absent when it did neither. */
  rule?: "blocked" | "refused";
}

/** How a step ended: done, failed, or skipped (a step it needs did not succeed, or apply was interrupted). */
export type StepOutcome = {
  step: Step;
  status: "done" | "failed" | "skipped";
  message: string;
  /** What became of the step's write, as data (the write unit's outcome kind), where the step says. */
  outcome?: string;
  /** An approve's preparers and approver, where its step read them. */
  four_eyes?: FourEyesFacts;
};

/** What a step's run gives: its message, and the kind of its outcome. A step that fails throws; an
 *  error with an `outcome` property says its kind, and one with `four_eyes` an approve's people. */
export type StepResult = string | { message: string; outcome?: string; four_eyes?: FourEyesFacts };

export interface ScheduleOptions {
  concurrency: number;
  isStopping: () => boolean;
  onStart?: (step: Step, running: number) => void;
  onFinish?: (outcome: StepOutcome) => void;
}

/** Runs steps as their dependencies allow, at most `concurrency` at once, in list order among the ready.
 *  A failed step skips only what depends on it. Once stopping, nothing new starts. */
export async function schedule(steps: Step[], exec: (s: Step) => Promise<StepResult>, opts: ScheduleOptions): Promise<StepOutcome[]> {
  const outcomes = new Map<number, StepOutcome>();
  const running = new Set<number>();
  return new Promise<StepOutcome[]>((resolve) => {
    const settle = (o: StepOutcome): void => {
      outcomes.set(o.step.id, o);
      opts.onFinish?.(o);
    };
    const pump = (): void => {
      // Skip whatever depends on a step that did not succeed.
      let changed = true;
      while (changed) {
        changed = false;
        for (const s of steps) {
          if (outcomes.has(s.id) || running.has(s.id)) continue;
          const bad = s.needs.map((n) => outcomes.get(n)).find((o) => o && o.status !== "done");
          if (bad) {
            settle({
              step: s,
              status: "skipped",
              message: `skipped: ${bad.step.change.action} of ${bad.step.change.address} ${bad.status === "failed" ? "failed" : "was skipped"}`,
            });
            changed = true;
          }
        }
      }
      if (opts.isStopping()) {
        for (const s of steps)
          if (!outcomes.has(s.id) && !running.has(s.id)) settle({ step: s, status: "skipped", message: "skipped: interrupted before it started" });
      }
      for (const s of steps) {
        if (running.size >= opts.concurrency) break;
        if (outcomes.has(s.id) || running.has(s.id)) continue;
        const ready = s.needs.every((n) => outcomes.get(n)?.status === "done") && s.after.every((n) => outcomes.has(n));
        if (!ready) continue;
        running.add(s.id);
        opts.onStart?.(s, running.size);
        exec(s)
          .then(
            (r) => settle({ step: s, status: "done", ...(typeof r === "string" ? { message: r } : r) }),
            (e: unknown) => {
              const { outcome, four_eyes } = (e ?? {}) as { outcome?: unknown; four_eyes?: FourEyesFacts };
              settle({
                step: s,
                status: "failed",
                message: e instanceof Error ? e.message : String(e),
                ...(typeof outcome === "string" ? { outcome } : {}),
                ...(four_eyes ? { four_eyes } : {}),
              });
            },
          )
          .finally(() => {
            running.delete(s.id);
            pump();
          });
      }
      if (running.size === 0 && outcomes.size === steps.length) resolve(steps.map((s) => outcomes.get(s.id) as StepOutcome));
    };
    pump();
  });
}
