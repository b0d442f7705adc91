/** Reading the service for plan, drift, export and the policy tests: each kind of the registry reads
 *  what it needs, all of them at once. */
import type { ApiCore } from "../api/core.js";
import { ApiError } from "../errors.js";
import { desiredOf, type DesiredState, type LiveState, type ReadOptions, type ReadProgress, type Registry, type Unread } from "../kinds/kind.js";
import { byCodePoint } from "../shared/address.js";
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
  const unread: Unread[] = [];
  const failures: ApiError[] = [];
  // Only the service's failures (after the retries of each read) are partial: anything else is a fault.
  const recorded = (address: string, e: unknown): boolean => {
    if (!opts.partial || !(e instanceof ApiError)) return false;
    unread.push({ address, error: e.message });
    failures.push(e);
    return true;
  };
  const progress: ReadProgress = {
    more: (n) => void (total += n),
    done: (what) => opts.progress?.(++done, total, what),
    unread: recorded,
  };
  const read = await Promise.all(
    kinds.map(async (k) => {
      try {
        return [[k.name, await k.read(core, desiredOf(k, desired), opts, progress)] as const];
      } catch (e) {
        if (recorded(k.name, e)) return [];
        throw e;
      }
    }),
  );
  const live = new Map(read.flat());
  // Nothing read at all: the service is not there for this run (no connection, the sign-in refused, the
  // time limit): that failure, as it is, is the run's.
  if (kinds.length && !live.size && failures[0]) throw failures[0];
  return unread.length ? Object.assign(live, { unread: unread.sort((a, b) => byCodePoint(a.address, b.address)) }) : live;
}

/** git's state with nothing in it: what a read of the service alone starts from (export, test --live). */
export const nothingInGit = (kinds: Registry = KINDS): DesiredState => new Map(kinds.map((k) => [k.name, []]));
