import { resolve } from "node:path";
import { findConfig } from "../config/repo.js";
import { UserError } from "../errors.js";
import { mergeOutcomes, outcomesOf } from "../fleet/merge.js";
import { fleetExit } from "../fleet/outcome.js";
import { pickView } from "../report/view.js";
import { fleetViews } from "../report/views/fleet.js";
import { readFailure, READ_CAPS, readUserFile } from "../user-files.js";
import { cwdOf, openRepo } from "./context.js";
import { fleetNames, type FleetFlags } from "./fleet.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { planFromJson } from "./plan-file.js";

export interface SummaryFlags extends FleetFlags {
  detailedExitcode?: boolean;
}

/** revsync summary FILES…: the JSON outputs of a CI matrix's jobs (one environment each) as one fleet's
 *  summary, as plan, drift or test --live with --all-envs would print it. Offline: no credentials, no
 *  request. With --all-envs or --envs, each environment no file holds is a failure of its own. Exit as the
 *  fleet's: 1 if any failed, else 2 if any drifted (or, with --detailed-exitcode, a plan has changes). */
export async function runSummary(flags: SummaryFlags, out: Output, files: string[]): Promise<number> {
  const view = await pickView(fleetViews, flags.format);
  const expected = expectedEnvironments(flags);
  if (!files.length && !expected?.length)
    throw new UserError("no outputs to sum up", "name the JSON files the jobs wrote, e.g. revsync summary outputs/*.json");
  const lists = files.map((file) => {
    const data = readJson(resolve(cwdOf(flags), file), file);
    return outcomesOf({ source: file, data }, (raw, source) => planFromJson(raw, source, "so it is not summed up", kindsOf(out.io)));
  });
  if (!files.length || !lists.flat().length)
    throw new UserError("the files given hold no environment's output", "name the JSON files the jobs wrote, e.g. revsync summary outputs/*.json");
  const outcomes = mergeOutcomes(lists, expected);
  for (const o of outcomes) view.environment(o, out);
  view.end({ outcomes, whole: (o) => o.source ?? "the job's own output (no file held it)" }, out);
  return fleetExit(outcomes, { planChanges: !!flags.detailedExitcode });
}

/** --all-envs: the environments of revsync.yaml; --envs: those named (checked against revsync.yaml when
 *  there is one); neither: only the files tell. */
function expectedEnvironments(flags: SummaryFlags): string[] | undefined {
  if (!flags.allEnvs && flags.envs === undefined) return undefined;
  let hasConfig = true;
  try {
    findConfig(cwdOf(flags), flags.config);
  } catch (e) {
    if (flags.allEnvs) throw e;
    hasConfig = false;
  }
  if (hasConfig) return fleetNames(openRepo(flags), { ...flags, env: undefined }, false);
  return [...new Set((flags.envs ?? "").split(",").map((n) => n.trim()))].filter(Boolean);
}

function readJson(path: string, shown: string): unknown {
  let text: string;
  try {
    text = readUserFile(path, READ_CAPS.json);
  } catch (e) {
    throw new UserError(`cannot read ${shown}: ${readFailure(e)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UserError(`${shown} is not a JSON output of revsync: it is not valid JSON (${(e as Error).message})`);
  }
}
