/** Which environments a run across environments goes over (--all-envs, --envs), each checked before
 *  anything is read, and how many at once (--parallel): the command line's words for them, checked here,
 *  below the commands that share them (plan, drift, test --live, summary, export --all-envs). */
import { environmentNames, overridesSet, selectEnv, type Repo } from "../config/repo.js";
import { UserError } from "../errors.js";
import { numberOf } from "../number.js";
import { andList } from "../words.js";

/** What the command line asks for: every environment, some (--envs, by name, with commas), one (--env),
 *  and how many at once. */
export interface FleetAsked {
  allEnvs?: boolean;
  envs?: string;
  env?: string;
  parallel?: string;
}

/** Whether the command line asks for a run across environments. */
export const isFleet = (flags: FleetAsked): boolean => !!flags.allEnvs || flags.envs !== undefined;

const fleetFlag = (flags: FleetAsked): string => (flags.allEnvs ? "--all-envs" : "--envs");

/** --parallel: how many environments run at once (default 4). */
export function parallelOf(flags: FleetAsked): number {
  if (flags.parallel === undefined) return 4;
  const n = numberOf(flags.parallel) ?? NaN;
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new UserError(`--parallel must be a whole number from 1 to 64, got ${JSON.stringify(flags.parallel)}`, "--parallel 4 runs four environments at once");
  return n;
}

/** The environments a run across environments goes over, in the order of revsync.yaml (--all-envs) or of
 *  --envs, each checked, before anything is read. `reads` (all but summary, which reads no service):
 *  REVSYNC_BASE_URL and the other overrides are refused. */
export function fleetNames(repo: Repo, flags: FleetAsked, processEnv: NodeJS.ProcessEnv, reads = true): string[] {
  if (flags.allEnvs && flags.envs !== undefined)
    throw new UserError("--all-envs and --envs both given: use one (--envs names some environments, --all-envs every one)");
  if (flags.env !== undefined)
    throw new UserError(`--env and ${fleetFlag(flags)} both given: --env runs one environment, ${fleetFlag(flags)} several; use one`);
  const asked = flags.allEnvs ? environmentNames(repo) : [...new Set((flags.envs ?? "").split(",").map((n) => n.trim()))].filter(Boolean);
  if (!asked.length) throw new UserError("--envs names no environment", `name them with commas, e.g. --envs ${environmentNames(repo).slice(0, 2).join(",")}`);
  for (const name of asked) selectEnv(repo, name, {});
  if (reads && asked.length > 1) refuseOverrides(processEnv, fleetFlag(flags));
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
