/** What plan, drift and test --live share when they run across environments (--all-envs, --envs): the
 *  environments named and checked, --parallel, the progress line naming the environments in flight, and
 *  the one place a fleet opens an environment: its own settings, sign-in, client (and so its own rate
 *  governor and connections) and output, shared with no other environment. The run itself is
 *  src/fleet/run.ts. */
import type { ApiCore } from "../api/core.js";
import { environmentNames, overridesSet, selectEnv, type Repo, type ResolvedEnv } from "../config/repo.js";
import { inEnvironment, UserError } from "../errors.js";
import { failedOutcome, type EnvOutcome, type FleetCommand } from "../fleet/outcome.js";
import { runFleet } from "../fleet/run.js";
import { numberOf } from "../number.js";
import { terminalText } from "../report/escape.js";
import type { FleetView } from "../report/views/fleet.js";
import { andList, plural } from "../words.js";
import { envOf, openClient, openEnv } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import { Output, type Stream } from "./output.js";
import { startProgress, type Progress } from "./progress.js";
import { noteTurnedAway } from "./rate-limit.js";

export interface FleetFlags extends GlobalFlags {
  allEnvs?: boolean;
  envs?: string;
  parallel?: string;
}

/** Whether the command line asks for a run across environments. */
export const isFleet = (flags: FleetFlags): boolean => !!flags.allEnvs || flags.envs !== undefined;

const fleetFlag = (flags: FleetFlags): string => (flags.allEnvs ? "--all-envs" : "--envs");

/** --parallel: how many environments run at once (default 4). */
export function parallelOf(flags: FleetFlags): number {
  if (flags.parallel === undefined) return 4;
  const n = numberOf(flags.parallel) ?? NaN;
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new UserError(`--parallel must be a whole number from 1 to 64, got ${JSON.stringify(flags.parallel)}`, "--parallel 4 runs four environments at once");
  return n;
}

/** The environments a run across environments goes over, in the order of revsync.yaml (--all-envs) or of
 *  --envs, each checked, before anything is read. `reads` (all but summary, which reads no service):
 *  REVSYNC_BASE_URL and the other overrides are refused. */
export function fleetNames(repo: Repo, flags: FleetFlags, reads = true): string[] {
  if (flags.allEnvs && flags.envs !== undefined)
    throw new UserError("--all-envs and --envs both given: use one (--envs names some environments, --all-envs every one)");
  if (flags.env !== undefined)
    throw new UserError(`--env and ${fleetFlag(flags)} both given: --env runs one environment, ${fleetFlag(flags)} several; use one`);
  const asked = flags.allEnvs ? environmentNames(repo) : [...new Set((flags.envs ?? "").split(",").map((n) => n.trim()))].filter(Boolean);
  if (!asked.length) throw new UserError("--envs names no environment", `name them with commas, e.g. --envs ${environmentNames(repo).slice(0, 2).join(",")}`);
  for (const name of asked) selectEnv(repo, name, {});
  if (reads && asked.length > 1) refuseOverrides(envOf(flags), fleetFlag(flags));
  return asked;
}

/** An override names one tenant; applied to every environment, each would read that tenant and report its
 *  state as its own. So a run across environments runs only on the URLs of revsync.yaml. */
function refuseOverrides(penv: NodeJS.ProcessEnv, flag: string): void {
  const set = overridesSet(penv);
  if (!set.length) return;
  const names = andList(set);
  const one = set.length === 1;
  throw new UserError(
    `${names} ${one ? "is" : "are"} set, and ${flag} reads ${flag === "--all-envs" ? "every environment" : "several environments"}: ${one ? "it" : "they"} would point each of them at the same tenant, so nothing was read`,
    `unset ${names} to check every environment with the URLs of revsync.yaml, or check the one environment ${one ? "it is" : "they are"} for with --env NAME, without ${flag}`,
  );
}

/** What one environment's work is given: its own settings, client and output. */
export interface EnvRun {
  env: ResolvedEnv;
  core: ApiCore;
  flags: GlobalFlags;
  out: Output;
}

const VERB: Record<FleetCommand, string> = { plan: "Planning", drift: "Checking drift in", test: "Testing the policies of" };

/** Runs `work` for each environment, at most --parallel at once, and returns every outcome in the order of
 *  `names`; `view` shows each as soon as it and those before it are done. A failure is that environment's
 *  outcome (and a line on stderr), never the run's. */
export async function runEnvironments(
  repo: Repo,
  names: string[],
  flags: FleetFlags,
  out: Output,
  command: FleetCommand,
  view: FleetView,
  work: (run: EnvRun) => Promise<EnvOutcome>,
): Promise<EnvOutcome[]> {
  const parallel = parallelOf(flags);
  const line = await fleetLine(out, VERB[command], names.length, flags.quiet);
  try {
    return await runFleet(names, {
      parallel,
      work: (name) => oneEnvironment(repo, name, flags, out, line, work),
      failed: (name, e) => {
        line.above(() => out.error(`${terminalText(name)}: ${(e as Error)?.message ?? String(e)}`));
        return failedOutcome(name, command, e);
      },
      observer: { started: line.started, finished: line.finished, inOrder: (o) => line.above(() => view.environment(o, out)) },
    });
  } finally {
    line.stop();
  }
}

/** One environment: its settings, its own client (sign-in, rate governor, connections) and its own output
 *  (its notes and warnings named with it), closed when its work ends. */
async function oneEnvironment(repo: Repo, name: string, flags: FleetFlags, out: Output, line: FleetLine, work: (run: EnvRun) => Promise<EnvOutcome>) {
  try {
    const own: GlobalFlags = { ...flags, progressTo: (text) => line.update(name, text) };
    const envOut = environmentOutput(out, name, line);
    const env = openEnv(repo, own, name);
    const core = openClient(env, own, envOut);
    try {
      const outcome = await work({ env, core, flags: own, out: envOut });
      noteTurnedAway(core.governor, env, own, envOut);
      return outcome;
    } finally {
      await core.close();
    }
  } catch (e) {
    throw inEnvironment(e, name);
  }
}

/** An environment's own output: the run's streams and redactor, each line on stderr named with the
 *  environment (notes, warnings, --verbose's requests), written above the progress line. */
function environmentOutput(out: Output, name: string, line: FleetLine): Output {
  const prefix = `${terminalText(name)}: `;
  const stderr: Stream = {
    isTTY: out.stderrIsTTY,
    write: (chunk) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
      line.above(() => out.errStream.write(text.replace(/^(?=[^\n])/gm, prefix)));
      return true;
    },
  };
  return new Output(out.redactor, out.io.stdout, stderr, { ...out.opts, io: out.io });
}

interface FleetLine extends Omit<Progress, "update"> {
  started(name: string): void;
  finished(name: string, o: EnvOutcome): void;
  update(name: string, text: string): void;
}

/** The progress line of a fleet, on a terminal: how many are done (and failed), and the environments in
 *  flight, each with its reads so far. */
async function fleetLine(out: Output, verb: string, total: number, quiet?: boolean): Promise<FleetLine> {
  const inFlight = new Map<string, string>();
  let done = 0;
  let failed = 0;
  const text = (): string => {
    const now = [...inFlight].map(([n, s]) => (s ? `${terminalText(n)} (${s})` : terminalText(n))).join(", ");
    return `${verb} ${plural(total, "environment")}: ${done} done${failed ? ` (${failed} failed)` : ""}${now ? `; now ${now}` : ""}`;
  };
  const progress = await startProgress(out, text(), quiet);
  return {
    started: (name) => {
      inFlight.set(name, "");
      progress.update(text());
    },
    finished: (name, o) => {
      inFlight.delete(name);
      done++;
      if (o.status === "failed") failed++;
      progress.update(text());
    },
    update: (name, s) => {
      if (!inFlight.has(name)) return;
      inFlight.set(name, s);
      progress.update(text());
    },
    above: progress.above,
    stop: progress.stop,
  };
}
