/** The source environment of a promotion as a run holds it: its name and tenant, a client signed in
 *  with its own credentials, git's state as it reads the policy files (its own ${VAR}s and scope), the
 *  policy tests as `revsync test --live --env SOURCE` loads them, and the commit they all come from. The
 *  session opens it (src/session/promotion.ts; the command wires the client); the reads are here. */
import type { ApiCore } from "../api/core.js";
import type { DesiredState, LiveState, Registry } from "../kinds/kind.js";
import { readLive } from "../live/read.js";
import type { Contract } from "../policy-test/allocate.js";
import type { TestCase } from "../policy-test/run.js";

export interface PromotionSource {
  /** The environment of revsync.yaml the changes come from. */
  name: string;
  baseUrl: string;
  realm: string;
  core: ApiCore;
  /** git's state as the source reads the same files. */
  desired: DesiredState;
  /** git's state as the environment promoted to reads them: each write's entry must come from the same
   *  document as the source's (a twin scoped to one environment was never tried in the other). */
  here: DesiredState;
  /** The policy tests of the repo, with the source's vars (none: the repo has none); `broken`: the test
   *  files with an error, each as validate names it (then nothing is promoted). */
  tests?: { cases: TestCase[]; contracts: Contract[]; rules: Record<string, string>; broken: string[] };
  /** The commit of the policy repo (null: git cannot tell) and the policy files that differ from it. */
  commit: string | null;
  uncommitted: string[];
  concurrency: number;
}

/** Whether the source's policy tests are run: the repo has cases or contracts, or a broken test file. */
export const hasTests = (src: Pick<PromotionSource, "tests">): boolean =>
  !!src.tests && (src.tests.cases.length > 0 || src.tests.contracts.length > 0 || src.tests.broken.length > 0);

/** One read of the source: what the changes at `addresses` set (values included), and with policy tests
 *  every approved batch's values, which they price with. Nothing is read for no address. */
export async function readSource(src: PromotionSource, addresses: readonly string[], kinds: Registry, withTests = hasTests(src)): Promise<LiveState> {
  return readLive(
    src.core,
    src.desired,
    { concurrency: src.concurrency, targets: [...new Set(addresses)], values: true, managedDetails: true, ...(withTests ? { approvedValues: true } : {}) },
    kinds,
  );
}
