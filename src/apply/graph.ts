import { UserError } from "../errors.js";
import type { Kind, Registry } from "../kinds/kind.js";
import { KINDS, kindOf } from "../kinds/registry.js";
import { isApplied, type Change, type Plan } from "../plan/model.js";
import type { FourEyesFacts } from "../shared/entries.js";

export interface Step {
  id: number;
  change: Change;
  /** The kind whose write the step is. */
  kind: Kind;
  /** Steps that must succeed first; if one fails or is skipped, this step is skipped. */
  needs: number[];
  /** Steps that must have finished first (whatever their outcome): ordering only. */
  after: number[];
}

/** The apply order (docs/concepts.md, "Apply order"): the kinds in the registry's order, each kind's steps after
 *  every step of the kinds before it (src/kinds/registry.ts lists them in that order); within a kind,
 *  as the kind orders its own (SSP: creates, a batch's review after its policy exists, approve after
 *  review). Entries apply does not act on (blocked, not in git, unsupported) are not steps. */
export function buildSteps(plan: Pick<Plan, "changes">, kinds: Registry = KINDS): Step[] {
  const steps: Step[] = plan.changes.filter(isApplied).map((change, id) => {
    const kind = kindOf(kinds, change.address);
    if (!kind) throw new UserError(`${change.address} (${change.action}): revsync does not know this kind of address, so nothing was sent`);
    return { id, change, kind, needs: [], after: [] };
  });
  const earlier: number[] = [];
  for (const kind of kinds) {
    const own = steps.filter((s) => s.kind === kind);
    const order = kind.order?.(own.map((s) => s.change)) ?? [];
    own.forEach((s, i) => {
      s.after.push(...earlier);
      s.needs.push(...(order[i]?.needs ?? []).map((n) => (own[n] as Step).id));
      s.after.push(...(order[i]?.after ?? []).map((n) => (own[n] as Step).id));
    });
    earlier.push(...own.map((s) => s.id));
  }
  return steps;
}

export type { FourEyesFacts };

/** How a step ended: done, failed, or skipped (a step it needs did not succeed, or apply was interrupted). */
export type StepOutcome = {
  step: Step;
  status: "done" | "failed" | "skipped";
  message: string;
  /** What became of the step's write, as data (the write unit's outcome kind), where the step says. */
  outcome?: string;
  /** An approve's preparers and approver, where its step read them. */
  four_eyes?: FourEyesFacts;
  /** already: the status that answered the step's own send before its write was found made by someone
   *  else. */
  answered?: number;
};

/** What a step's run gives: its message, and the kind of its outcome. A step that fails throws; an
 *  error with an `outcome` property says its kind, and one with `four_eyes` an approve's people. */
export type StepResult = string | { message: string; outcome?: string; four_eyes?: FourEyesFacts; answered?: number };

export interface ScheduleOptions {
  concurrency: number;
  isStopping: () => boolean;
  onStart?: (step: Step, running: number) => void;
  onFinish?: (outcome: StepOutcome) => void;
}

/** Skips whatever depends on a step that did not succeed (and what depends on those). */
function skipDependents(steps: Step[], outcomes: Map<number, StepOutcome>, running: Set<number>, settle: (o: StepOutcome) => void): void {
  let changed = true;
  while (changed) {
    changed = false;
    for (const s of steps) {
      if (outcomes.has(s.id) || running.has(s.id)) continue;
      const bad = s.needs.map((n) => outcomes.get(n)).find((o) => o && o.status !== "done");
      if (!bad) continue;
      const why = `${bad.step.change.action} of ${bad.step.change.address} ${bad.status === "failed" ? "failed" : "was skipped"}`;
      settle({ step: s, status: "skipped", message: `skipped: ${why}` });
      changed = true;
    }
  }
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
      skipDependents(steps, outcomes, running, settle);
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
