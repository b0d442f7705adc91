/** Reading the service for plan, drift, export and the policy tests: each kind of the registry reads
 *  what it needs, all of them at once. */
import type { ApiCore } from "../api/core.js";
import { desiredOf, type DesiredState, type LiveState, type ReadOptions, type ReadProgress, type Registry } from "../kinds/kind.js";
import { KINDS } from "../kinds/registry.js";

export type { LiveState, ReadOptions };

/** Reads what plan, drift and export compare against: each kind's state, concurrently; `progress` says
 *  how many reads of how many have ended. */
export async function readLive(
  core: ApiCore,
  desired: DesiredState,
  opts: ReadOptions & { progress?: (done: number, total: number, what: string) => void },
  kinds: Registry = KINDS,
): Promise<LiveState> {
  let done = 0;
  let total = kinds.length;
  const progress: ReadProgress = {
    more: (n) => void (total += n),
    done: (what) => opts.progress?.(++done, total, what),
  };
  const read = await Promise.all(kinds.map(async (k) => [k.name, await k.read(core, desiredOf(k, desired), opts, progress)] as const));
  return new Map(read);
}

/** git's state with nothing in it: what a read of the service alone starts from (export, test --live). */
export const nothingInGit = (kinds: Registry = KINDS): DesiredState => new Map(kinds.map((k) => [k.name, []]));
