import { inEnvironment, PolicyProblems, reported, UserError } from "../errors.js";
import { runCases, runContracts, type CaseResult, type ContractResult } from "../policy-test/run.js";
import { ruleReader } from "../policy-test/allocate.js";
import { guardrailTests, liveIn, offlineRuns, type Asked, type ReadLive, type Run } from "../plan/policy-tests.js";
import { pickView } from "../report/view.js";
import { testViews, type TestView } from "../report/views/policy-test.js";
import { relative } from "node:path";
import { envOf, openClient, openEnv, openRepo } from "./context.js";
import { isFleet, runEnvironments, fleetNames, type FleetFlags } from "./fleet.js";
import { fleetExit, testOutcome, type TestReport } from "../fleet/outcome.js";
import { fleetViews } from "../report/views/fleet.js";
import type { ApiCore } from "../api/core.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";
import { selectEnv, type Repo } from "../config/repo.js";

export interface TestFlags extends FleetFlags {
  live?: boolean;
}

/** revsync test: which SSP policy each case's order line meets, at what SSP, against git's policies
 *  (offline) or, with --live, the service's (read-only). Exit 0 all pass (or no cases, with a note), 1 a
 *  failure or a bad file. */
export async function runTest(flags: TestFlags, out: Output): Promise<number> {
  if (isFleet(flags)) return liveFleet(flags, out);
  return testRun(flags, out, await pickView(testViews, flags.format));
}

/** How the command's tests are loaded (src/plan/policy-tests.ts). */
const askedOf = (flags: GlobalFlags, out: Output, view: TestView): Asked => ({
  processEnv: envOf(flags),
  kinds: kindsOf(out.io),
  brokenAsCase: !!view.reportsBrokenFiles,
});

async function testRun(flags: TestFlags, out: Output, view: TestView): Promise<number> {
  const repo = openRepo(flags);
  const runs = flags.live ? [await liveRun(repo, flags, out, view)] : offline(repo, flags, out, view);
  const shownDir = relative(repo.cwd, runs[0]?.dir ?? repo.root) || ".";
  const results: CaseResult[] = runs.flatMap((r) => runCases(r.cases, r.policies));
  const contracts: ContractResult[] = runs.flatMap((r) => runContracts(r.contracts, r.policies, { readRule: ruleReader(r.rules), carves: r.carves }));
  const source = runs.length === 1 ? (runs[0]?.source ?? "") : `git's policies, per environment (their vars differ): ${runs.map((r) => r.label).join("; ")}`;
  // A broken test file does not hide the others' cases from a CI report: they run, the file is an
  // error case of its own, and the command still fails (exit 1) saying why, as without JUnit.
  const { guardrails, guardBroken } = guardrailTests(repo, !!view.reportsBrokenFiles, kindsOf(out.io));
  const broken: PolicyProblems | undefined = runs.find((r) => r.broken)?.broken ?? guardBroken;
  if (broken) {
    view.results({ results, contracts, guardrails, source, broken: broken.diagnostics.filter((d) => d.severity === "error") }, out);
    // The report holds the broken files: the failure's view (JUnit) does not write them again.
    throw reported(broken);
  }
  const live = flags.live ? { environment: runs[0]?.label } : {};
  if (!results.length && !contracts.length && !guardrails.length) {
    const note = `no policy test cases in ${shownDir}: write files of kind SspPolicyTest (or GuardrailTest) there, or name their folder with tests: in revsync.yaml`;
    view.results({ results, contracts, source, note, ...live }, out);
    return 0;
  }
  view.results({ results, contracts, guardrails, source, ...live }, out);
  return results.every((r) => r.pass) && contracts.every((r) => r.pass) && guardrails.every((r) => r.pass) ? 0 : 1;
}

/** Offline: git's policies, with the vars of the environment --env names, else of each environment. */
function offline(repo: Repo, flags: TestFlags, out: Output, view: TestView): Run[] {
  const { runs, warning } = offlineRuns(repo, flags.env, askedOf(flags, out, view));
  if (warning) out.warn(warning);
  return runs;
}

/** --live: the service's policies alone (git's are not read), in the environment the command names. */
async function liveRun(repo: Repo, flags: TestFlags, out: Output, view: TestView): Promise<Run> {
  const name = selectEnv(repo, flags.env, envOf(flags));
  let core: ApiCore | undefined;
  try {
    const env = openEnv(repo, flags, name);
    // The client is opened only when there is a case to read for: with none, nothing signs in.
    const read: ReadLive = (desired, options) => readWithProgress((core ??= openClient(env, flags, out)), desired, flags, out, options);
    return await liveIn(repo, env, read, askedOf(flags, out, view));
  } catch (e) {
    throw inEnvironment(e, name);
  } finally {
    await core?.close();
  }
}

/** test --live --all-envs / --envs: each environment's cases against its service's policies, several at
 *  once, one summary; exit 1 if any environment failed (an error, or a case or contract), else 0. */
async function liveFleet(flags: TestFlags, out: Output): Promise<number> {
  if (!flags.live)
    throw new UserError(
      `${flags.allEnvs ? "--all-envs" : "--envs"} without --live: offline, revsync test already runs git's policies with each environment's vars`,
      "add --live to run each environment's cases against its service's policies",
    );
  if (flags.format === "junit")
    throw new UserError(
      "--format junit names one environment's cases: across environments, use text, json or markdown",
      "or run revsync test --live --env NAME --format junit for each",
    );
  const view = await pickView(fleetViews, flags.format);
  const [{ testJson }] = await Promise.all([import("../report/policy-test.js")]);
  const repo = openRepo(flags);
  const names = fleetNames(repo, flags);
  const strict: TestView = { results: () => undefined };
  const outcomes = await runEnvironments(repo, names, flags, out, "test", view, async ({ env, core, flags: own, out: envOut }) => {
    const r = await liveIn(repo, env, (desired, options) => readWithProgress(core, desired, own, envOut, options), askedOf(own, envOut, strict));
    const results = runCases(r.cases, r.policies);
    const contracts = runContracts(r.contracts, r.policies, { readRule: ruleReader(r.rules), carves: r.carves });
    return testOutcome(env.name, testJson(results, r.source, contracts, env.name) as TestReport);
  });
  view.end({ outcomes, whole: () => "this command's JSON output (--format json)" }, out);
  return fleetExit(outcomes, { planChanges: false });
}
