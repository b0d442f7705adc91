/** revsync summary: the JSON outputs of a CI matrix's jobs (plan, drift or test --live of one environment
 *  each, a failed run's error object included, or a whole fleet's output) as one fleet's outcomes. Each
 *  output is read as what it says it is, and checked before it is believed: a file that is none of them,
 *  or that holds an environment another file holds too, is an error naming the file. */
import { UserError } from "../errors.js";
import type { DriftReport, Plan } from "../plan/model.js";
import { driftOutcome, FLEET_COMMANDS, planOutcome, testOutcome, type EnvOutcome, type FleetCommand, type TestReport } from "./outcome.js";

/** One file's JSON: `source` is how the summary names it. */
export interface Output {
  source: string;
  data: unknown;
}

/** `checkPlan`: a plan as apply would take it (schema, checksum), or an error saying why not. */
export type PlanCheck = (raw: unknown, source: string) => Plan;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);
const isCommand = (v: unknown): v is FleetCommand => typeof v === "string" && (FLEET_COMMANDS as readonly string[]).includes(v);

function notOutput(source: string, why: string): UserError {
  return new UserError(
    `${source} is not a JSON output of revsync plan, drift or test --live: ${why}`,
    "give revsync summary the files that revsync plan --format json (or --out), drift --format json and test --live --format json wrote, a failed run's included",
  );
}

/** The outcomes one output holds: one, or a fleet's each. */
export function outcomesOf(output: Output, checkPlan: PlanCheck): EnvOutcome[] {
  const { source, data } = output;
  if (!isObject(data)) throw notOutput(source, "it is not a JSON object");
  const version = data.format_version;
  if (typeof version !== "string") throw notOutput(source, "it has no format_version");
  if (version.split(".")[0] !== "1") throw new UserError(`${source} has format ${version}; this revsync reads format 1: upgrade revsync`);
  if (Array.isArray(data.environments)) {
    const command = data.command;
    return data.environments.map((e, i) => entryOf(e, `${source} (environments[${i}])`, isCommand(command) ? command : undefined, checkPlan));
  }
  return [{ ...entryOf(data, source, undefined, checkPlan), source }];
}

/** One environment's output: a failed run's error object, a plan, a drift report or a test run. An entry
 *  of a fleet's output carries `command`, `status` and `file` beside its report: they are not part of it. */
function entryOf(raw: unknown, source: string, fleetCommand: FleetCommand | undefined, checkPlan: PlanCheck): EnvOutcome {
  if (!isObject(raw)) throw notOutput(source, "an environment's entry is not a JSON object");
  const { status: _status, command: own, file: _file, ...report } = raw;
  const command = isCommand(own) ? own : fleetCommand;
  if (isObject(report.error)) return failedOf(report, source, command);
  if (Array.isArray(report.changes) && typeof report.checksum === "string") return planOutcome(checkPlan(report, source));
  if (Array.isArray(report.drift)) return driftOutcome(checkDrift(report, source));
  if (Array.isArray(report.cases) && isObject(report.summary)) {
    const test = checkTest(report, source);
    if (typeof test.environment !== "string")
      throw notOutput(source, "its policy tests name no environment (revsync test without --live runs git's policies, in no environment)");
    return testOutcome(test.environment, test);
  }
  throw notOutput(source, "it holds no plan, drift report, policy test results or error");
}

function failedOf(raw: Json, source: string, command: FleetCommand | undefined): EnvOutcome {
  const error = raw.error as Json;
  if (typeof error.message !== "string") throw notOutput(source, "its error has no message");
  if (!command) throw notOutput(source, "its error does not say which command failed (no command: made by an older revsync?)");
  const environment = typeof raw.environment === "string" ? raw.environment : null;
  return { environment, command, status: "failed", error };
}

const text = (v: unknown): boolean => typeof v === "string";
const counts = (v: unknown): boolean => isObject(v) && Object.values(v).every((n) => typeof n === "number");

/** A drift report as revsync wrote it, in the parts every view reads. */
function checkDrift(raw: Json, source: string): DriftReport {
  const items = raw.drift as unknown[];
  const bad = items.findIndex((d) => !isObject(d) || !text(d.address) || !text(d.class) || !text(d.message) || !Array.isArray(d.diff));
  if (!text(raw.environment) || !counts(raw.summary) || bad >= 0)
    throw notOutput(source, bad >= 0 ? `drift[${bad}] is not a drifted resource as revsync writes one` : "its drift report has no environment or summary");
  return raw as unknown as DriftReport;
}

/** Policy test results as revsync wrote them, in the parts a summary reads. */
function checkTest(raw: Json, source: string): TestReport {
  const summary = raw.summary as Json;
  const entry = (c: unknown): boolean => isObject(c) && text(c.name) && typeof c.pass === "boolean";
  const contracts = raw.contracts === undefined ? [] : raw.contracts;
  if (!counts(summary) || typeof summary.passed !== "number" || typeof summary.failed !== "number" || !text(raw.source))
    throw notOutput(source, "its policy test results have no summary of passed and failed");
  if (!(raw.cases as unknown[]).every(entry) || !Array.isArray(contracts) || !contracts.every(entry))
    throw notOutput(source, "a case or contract of its policy test results has no name or pass");
  return raw as unknown as TestReport;
}

const key = (o: EnvOutcome): string => `${o.command}\u0000${o.environment ?? `\u0001${o.source ?? ""}`}`;

/** Every output's outcomes as one fleet: an environment (of one command) that two outputs hold is an
 *  error naming both; with `expected` (the environments of revsync.yaml, or --envs), those first in that
 *  order, and each that no output holds is a failure of its own (its job did not run, or failed before
 *  revsync wrote its JSON), for each command the outputs are of. */
export function mergeOutcomes(lists: readonly EnvOutcome[][], expected?: readonly string[]): EnvOutcome[] {
  const seen = new Map<string, EnvOutcome>();
  for (const o of lists.flat()) {
    const before = seen.get(key(o));
    if (before)
      throw new UserError(
        `environment ${JSON.stringify(o.environment)} (${o.command}) is in two outputs: ${before.source ?? "?"} and ${o.source ?? "?"}`,
        "give revsync summary one output per environment (a job run again leaves two: keep the last)",
      );
    seen.set(key(o), o);
  }
  const all = [...seen.values()];
  if (!expected) return all;
  const commands = [...new Set(all.map((o) => o.command))];
  const missing = (name: string, command: FleetCommand): EnvOutcome => ({
    environment: name,
    command,
    status: "failed",
    error: {
      kind: "missing",
      message: `no output of revsync ${command} for this environment among the files given: its job did not run, or failed before revsync wrote its JSON`,
    },
  });
  const listed = expected.flatMap((name) => commands.map((c) => all.find((o) => o.environment === name && o.command === c) ?? missing(name, c)));
  return [...listed, ...all.filter((o) => o.environment === null || !expected.includes(o.environment))];
}
