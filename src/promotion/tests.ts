/** The policy tests of a promotion: the cases and contracts `revsync test --live --env SOURCE` runs, run
 *  by the gate against what was read of the source, from the same commit. A promotion whose tests fail
 *  there, or whose test files have errors, promotes nothing. Pure. */
import { liveOf, type LiveState, type Registry } from "../kinds/kind.js";
import { ruleReader } from "../policy-test/allocate.js";
import type { PolicyModel } from "../policy-test/evaluate.js";
import { runCases, runContracts } from "../policy-test/run.js";
import type { PromotionTests } from "../shared/promotion.js";
import type { PromotionSource } from "./source.js";

/** The source's policies and whether it reallocates, as the tests see them (as test --live reads them). */
function modelsOf(live: LiveState, kinds: Registry): { policies: PolicyModel[]; carves: boolean } {
  const parts = kinds.flatMap((k) => (k.tests ? [k.tests.live(liveOf(k, live))] : []));
  return { policies: parts.flatMap((p) => p.policies ?? []), carves: parts.every((p) => p.carves ?? true) };
}

/** What the source's tests came to: each failing case or contract named, with its place and why. */
export function testsInSource(tests: NonNullable<PromotionSource["tests"]>, live: LiveState, kinds: Registry): PromotionTests {
  if (tests.broken.length) return { cases: tests.cases.length, contracts: tests.contracts.length, failed: tests.broken };
  const { policies, carves } = modelsOf(live, kinds);
  const cases = runCases(tests.cases, policies);
  const contracts = runContracts(tests.contracts, policies, { readRule: ruleReader(tests.rules), carves });
  const failed = [
    ...cases.filter((r) => !r.pass).map((r) => `case ${JSON.stringify(r.case.name)} (${r.case.file}:${r.case.line}): ${r.why.join("; ")}`),
    ...contracts.filter((r) => !r.pass).map((r) => `contract ${JSON.stringify(r.contract.name)} (${r.contract.file}:${r.contract.line}): ${r.why.join("; ")}`),
  ];
  return { cases: cases.length, contracts: contracts.length, failed };
}

/** Why a promotion whose tests fail promotes nothing, in words (the first few named, the count of all). */
export function testsWords(from: string, t: PromotionTests): string {
  const shown = t.failed.slice(0, 3).join("; ");
  const more = t.failed.length > 3 ? `; and ${t.failed.length - 3} more` : "";
  return `the policy tests fail live in ${from} (as revsync test --live --env ${from} runs them): ${shown}${more}`;
}
