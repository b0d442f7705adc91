import { canonicalJson } from "../canonical-json.js";
import { inEnvironment, PolicyProblems, reported, UserError } from "../errors.js";
import { carvesGit, carvesLive, modelsFromGitOnly, modelsFromLive } from "../plan/policy-models.js";
import { loadTests } from "../config/test-files.js";
import type { PolicyModel } from "../policy-test/evaluate.js";
import { runCases, runContracts, type CaseResult, type ContractResult, type TestCase } from "../policy-test/run.js";
import { ruleReader, type Contract } from "../policy-test/allocate.js";
import { serviceChoices } from "../api/service-choices.js";
import { pickView } from "../report/view.js";
import { testViews, type TestView } from "../report/views/policy-test.js";
import { relative } from "node:path";
import { envOf, openClient, openEnv, openRepo } from "./context.js";
import { isFleet, runEnvironments, fleetNames, type FleetFlags } from "./fleet.js";
import { fleetExit, testOutcome, type TestReport } from "../fleet/outcome.js";
import { fleetViews } from "../report/views/fleet.js";
import type { ApiCore } from "../api/core.js";
import type { GlobalFlags } from "./flags.js";
import type { Registry } from "../kinds/kind.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";
import { nothingInGit } from "../live/read.js";
import { environmentNames, environmentVars, loadPolicies, selectEnv, varsFor, type Repo, type ResolvedEnv } from "../config/repo.js";
import { loadGuardrailTests, runGuardrailTests, type GuardrailTestResult } from "../guardrails/tests.js";

export interface TestFlags extends FleetFlags {
  live?: boolean;
}

/** What the cases run against: one set of policies, the cases as that environment's vars read them. */
interface Run {
  cases: TestCase[];
  contracts: Contract[];
  policies: PolicyModel[];
  /** carves_allocation, and the tenant's rule texts as service.allocation_rules maps them. */
  carves: boolean;
  rules: Record<string, string>;
  source: string;
  /** The tests folder. */
  dir: string;
  /** The environment(s) the run stands for. */
  label: string;
  /** Test files that could not be read, when the run goes on without them (JUnit). */
  broken?: PolicyProblems;
}

/** revsync test: which SSP policy each case's order line meets, at what SSP, against git's policies
 *  (offline) or, with --live, the service's (read-only). Exit 0 all pass (or no cases, with a note), 1 a
 *  failure or a bad file. */
export async function runTest(flags: TestFlags, out: Output): Promise<number> {
  if (isFleet(flags)) return liveFleet(flags, out);
  return testRun(flags, out, await pickView(testViews, flags.format));
}

async function testRun(flags: TestFlags, out: Output, view: TestView): Promise<number> {
  const repo = openRepo(flags);
  const runs = flags.live ? [await liveRun(repo, flags, out, view)] : offlineRuns(repo, flags, out, view);
  const shownDir = relative(repo.cwd, runs[0]?.dir ?? repo.root) || ".";
  const results: CaseResult[] = runs.flatMap((r) => runCases(r.cases, r.policies));
  const contracts: ContractResult[] = runs.flatMap((r) => runContracts(r.contracts, r.policies, { readRule: ruleReader(r.rules), carves: r.carves }));
  const source = runs.length === 1 ? (runs[0]?.source ?? "") : `git's policies, per environment (their vars differ): ${runs.map((r) => r.label).join("; ")}`;
  // A broken test file does not hide the others' cases from a CI report: they run, the file is an
  // error case of its own, and the command still fails (exit 1) saying why, as without JUnit.
  const { guardrails, guardBroken } = guardrailTests(repo, view, kindsOf(out.io));
  const broken = runs.find((r) => r.broken)?.broken ?? guardBroken;
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

/** The guardrail tests (kind GuardrailTest), judged offline; a file with an error stops the run, or, for
 *  a report of broken files (JUnit), is reported once the rest ran. */
function guardrailTests(repo: Repo, view: TestView, kinds: Registry): { guardrails: GuardrailTestResult[]; guardBroken?: PolicyProblems } {
  const { tests, diagnostics } = loadGuardrailTests(repo);
  const guardrails = runGuardrailTests(tests, repo, kinds);
  if (!diagnostics.some((d) => d.severity === "error")) return { guardrails };
  const problems = new PolicyProblems("the guardrail tests have errors", diagnostics);
  if (!view.reportsBrokenFiles) throw problems;
  return { guardrails, guardBroken: problems };
}

/** Loads the test files with one environment's vars; refuses (exit 1) a file with an error, at once,
 *  or, for a report of broken files (JUnit), once the other files' cases have run (`broken`). */
function casesFor(
  repo: Repo,
  vars: Parameters<typeof varsFor>[0],
  flags: GlobalFlags,
  view: TestView,
): { cases: TestCase[]; contracts: Contract[]; dir: string; broken?: PolicyProblems } {
  const { cases, contracts, diagnostics, dir } = loadTests(repo, varsFor(vars, envOf(flags)));
  if (diagnostics.some((d) => d.severity === "error")) {
    const problems = new PolicyProblems(`the policy tests in ${relative(repo.cwd, dir) || "."} have errors`, diagnostics);
    if (!view.reportsBrokenFiles) throw problems;
    return { cases, contracts, dir, broken: problems };
  }
  return { cases, contracts, dir };
}

/** An environment's service.allocation_rules (none without an environment). */
const rulesOf = (repo: Repo, name: string | undefined): Record<string, string> =>
  (name ? serviceChoices(repo.config.environments[name]?.service, undefined, {}).allocationRules : undefined) ?? {};

/** --live: the service's policies alone (git's are not read), in the environment the command names. */
async function liveRun(repo: Repo, flags: TestFlags, out: Output, view: TestView): Promise<Run> {
  const name = selectEnv(repo, flags.env, envOf(flags));
  let core: ApiCore | undefined;
  try {
    const env = openEnv(repo, flags, name);
    return await liveIn(repo, env, () => (core = openClient(env, flags, out)), flags, out, view);
  } catch (e) {
    throw inEnvironment(e, name);
  } finally {
    await core?.close();
  }
}

/** One environment's cases and contracts against the service's policies, read through the client
 *  `client` gives (asked for only when there is a case: with none, nothing signs in). */
async function liveIn(repo: Repo, env: ResolvedEnv, client: () => ApiCore, flags: GlobalFlags, out: Output, view: TestView): Promise<Run> {
  const { cases, contracts, dir, broken } = casesFor(repo, env, flags, view);
  const base = { cases, contracts, dir, broken, rules: env.service.allocationRules, source: `the service's policies in ${env.name}`, label: env.name };
  if (!cases.length && !contracts.length) return { ...base, policies: [], carves: true };
  const kinds = kindsOf(out.io);
  const live = await readWithProgress(client(), nothingInGit(kinds), flags, out, { approvedValues: true });
  return { ...base, policies: modelsFromLive(live, kinds), carves: carvesLive(live, kinds) };
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
    const r = await liveIn(repo, env, () => core, own, envOut, strict);
    const results = runCases(r.cases, r.policies);
    const contracts = runContracts(r.contracts, r.policies, { readRule: ruleReader(r.rules), carves: r.carves });
    return testOutcome(env.name, testJson(results, r.source, contracts, env.name) as TestReport);
  });
  view.end({ outcomes, whole: () => "this command's JSON output (--format json)" }, out);
  return fleetExit(outcomes, { planChanges: false });
}

/** Offline, git's policies need no service, so no environment has to be chosen: the one --env (or
 *  REVSYNC_ENV) names, else every environment of revsync.yaml, each reading the policy files with its
 *  own vars. Environments whose vars give the same policies and cases run once; when they differ, the
 *  cases run for each, named with it. The URLs are not read (they may use ${VAR}s only CI defines). */
function offlineRuns(repo: Repo, flags: TestFlags, out: Output, view: TestView): Run[] {
  const penv = envOf(flags);
  const named = flags.env ?? penv.REVSYNC_ENV;
  const names = named ? [selectEnv(repo, named, penv)] : environmentNames(repo);
  const groups = new Map<string, Omit<Run, "label"> & { names: string[] }>();
  const skipped = new Set<string>();
  for (const name of names.length ? names : [undefined]) {
    const own = name ? environmentVars(repo, name, penv) : { vars: {}, problems: [] };
    const problems = own.problems;
    if (problems.length) throw new PolicyProblems(`environment ${JSON.stringify(name)} of revsync.yaml uses variables that are not set`, problems);
    const { desired, diagnostics } = loadPolicies(repo, varsFor(own, penv), kindsOf(out.io), name);
    if (diagnostics.some((d) => d.severity === "error")) {
      throw new PolicyProblems(
        `the policy repo has errors${name && names.length > 1 ? ` (with the vars of environment ${name})` : ""}`,
        diagnostics,
        "run revsync validate",
      );
    }
    const { cases, contracts, dir, broken } = casesFor(repo, own, flags, view);
    const git = modelsFromGitOnly(desired, kindsOf(out.io));
    for (const s of git.skipped) skipped.add(s);
    const carves = carvesGit(desired, undefined, kindsOf(out.io));
    const rules = rulesOf(repo, name);
    // Only several environments need telling apart.
    // (Rules and carves_allocation matter only to contracts.)
    const key = names.length > 1 ? canonicalJson([git.models, cases, contracts, contracts.length ? [carves, rules] : []]) : "";
    const group = groups.get(key);
    if (group) group.names.push(name ?? "");
    else groups.set(key, { cases, contracts, dir, broken, policies: git.models, carves, rules, source: "git's policies", names: [name ?? ""] });
  }
  if (skipped.size) {
    out.warn(
      `left out, because git does not give their conditions or hierarchy_no (they keep their live values; revsync test --live uses the service's): ${[...skipped].join(", ")}`,
    );
  }
  const all = [...groups.values()];
  return all.map((g) => {
    const label = g.names.join(", ");
    // The same case under several environments: each result names its own.
    const cases = all.length > 1 ? g.cases.map((c) => ({ ...c, name: `${c.name} [${label}]` })) : g.cases;
    const contracts = all.length > 1 ? g.contracts.map((c) => ({ ...c, name: `${c.name} [${label}]` })) : g.contracts;
    return { ...g, cases, contracts, label };
  });
}
