/** What one environment of a fleet came to, whether revsync ran it now (plan, drift or test --live with
 *  --all-envs or --envs) or read it from a CI matrix job's JSON (revsync summary): one shape, so that both
 *  give the same summary in every format, and one exit code over them all. */
import { errorObject } from "../errors.js";
import { needsAction, type DriftReport, type Plan } from "../plan/model.js";

/** The commands that run across environments. */
export const FLEET_COMMANDS = ["plan", "drift", "test"] as const;
export type FleetCommand = (typeof FLEET_COMMANDS)[number];

/** failed: an error stopped it, or (test) a case or contract failed; changes: plan has something apply
 *  would do, or a write blocked until someone acts, drift found drift; clean: neither. */
export type FleetStatus = "failed" | "changes" | "clean";

/** A policy test run as `revsync test --format json` writes it: the parts a summary reads. */
export interface TestReport {
  environment?: string;
  source: string;
  summary: { passed: number; failed: number };
  cases: { name: string; file?: string; line?: number; pass: boolean; expected?: unknown; got?: unknown; why?: string[] }[];
  contracts?: { name: string; file?: string; line?: number; pass: boolean; why?: string[] }[];
  guardrail_tests?: { name: string; file?: string; line?: number; pass: boolean; failures?: string[]; error?: string }[];
}

export interface EnvOutcome {
  /** null: a failed run whose output could not say which environment it was for. */
  environment: string | null;
  command: FleetCommand;
  status: FleetStatus;
  plan?: Plan;
  drift?: DriftReport;
  test?: TestReport;
  /** The error that stopped it, as a failed run's JSON holds it (kind, message, hint, …). */
  error?: Record<string, unknown>;
  /** The file its report was read from (revsync summary); where the report is whole. */
  source?: string;
}

/** A plan or drift report that could not read part of the service failed (it says which, and does the rest). */
export function planOutcome(plan: Plan): EnvOutcome {
  const status = plan.unread?.length ? "failed" : plan.changes.some(needsAction) ? "changes" : "clean";
  return { environment: plan.environment, command: "plan", status, plan };
}

export function driftOutcome(drift: DriftReport): EnvOutcome {
  return { environment: drift.environment, command: "drift", status: drift.unread?.length ? "failed" : drift.drift.length ? "changes" : "clean", drift };
}

export function testOutcome(environment: string, test: TestReport): EnvOutcome {
  return { environment, command: "test", status: test.summary.failed > 0 ? "failed" : "clean", test };
}

export function failedOutcome(environment: string | null, command: FleetCommand, e: unknown): EnvOutcome {
  return { environment, command, status: "failed", error: errorObject(e).error };
}

const RANK: Record<FleetStatus, number> = { failed: 0, changes: 1, clean: 2 };

/** Failures first, then changes, then the rest; in each, the order given. */
export function byConcern(outcomes: readonly EnvOutcome[]): EnvOutcome[] {
  return outcomes
    .map((o, i) => [o, i] as const)
    .sort((a, b) => RANK[a[0].status] - RANK[b[0].status] || a[1] - b[1])
    .map(([o]) => o);
}

export interface FleetCounts {
  environments: number;
  failed: number;
  changes: number;
  clean: number;
}

export function countOutcomes(outcomes: readonly EnvOutcome[]): FleetCounts {
  const n = (s: FleetStatus): number => outcomes.filter((o) => o.status === s).length;
  return { environments: outcomes.length, failed: n("failed"), changes: n("changes"), clean: n("clean") };
}

/** The exit code over every environment: 1 if any failed, else 2 if any drifted (drift) or has changes
 *  apply would make or writes blocked until someone acts (plan, only with `planChanges`: plan's
 *  --detailed-exitcode), else 0. */
export function fleetExit(outcomes: readonly EnvOutcome[], opts: { planChanges: boolean }): number {
  if (outcomes.some((o) => o.status === "failed")) return 1;
  const counts = (o: EnvOutcome): boolean => o.status === "changes" && (o.command === "drift" || (o.command === "plan" && opts.planChanges));
  return outcomes.some(counts) ? 2 : 0;
}
