/** What plan, drift and test --live share when they run across environments (--all-envs, --envs): the
 *  environments named and checked, --parallel, the progress line naming the environments in flight, and
 *  the one place a fleet opens an environment: its own settings, sign-in, client (and so its own rate
 *  governor and connections) and output, shared with no other environment. The run itself is
 *  src/fleet/run.ts. */
import type { ApiCore } from "../api/core.js";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { inEnvironment } from "../errors.js";
import { fleetNames as namesOf, isFleet, parallelOf } from "../fleet/environments.js";
import { failedOutcome, type EnvOutcome, type FleetCommand } from "../fleet/outcome.js";
import { runFleet } from "../fleet/run.js";
import { terminalText } from "../report/escape.js";
import type { FleetView } from "../report/views/fleet.js";
import { plural } from "../words.js";
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

/** The environments a run across environments goes over, each checked (src/fleet/environments.ts). */
export const fleetNames = (repo: Repo, flags: FleetFlags, reads = true): string[] => namesOf(repo, flags, envOf(flags), reads);

export { isFleet, parallelOf };

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
