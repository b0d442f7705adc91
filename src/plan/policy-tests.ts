/** What revsync test runs, below the command: the policy test cases and contracts of the repo's tests
 *  folder, each environment's (as its vars read them), against git's policies (offline: environments whose
 *  vars give the same policies and cases run once) or the service's (--live), and the guardrail tests.
 *  It prints nothing: the command shows the results through its view. */
import { relative } from "node:path";
import { canonicalJson } from "../canonical-json.js";
import { PolicyProblems } from "../errors.js";
import { serviceChoices } from "../api/service-choices.js";
import { loadTests } from "../config/test-files.js";
import { environmentNames, environmentVars, loadPolicies, selectEnv, varsFor, type Repo, type ResolvedEnv } from "../config/repo.js";
import { loadGuardrailTests, runGuardrailTests, type GuardrailTestResult } from "../guardrails/tests.js";
import type { DesiredState, Registry } from "../kinds/kind.js";
import { nothingInGit, type LiveState, type ReadOptions } from "../live/read.js";
import type { PolicyModel } from "../policy-test/evaluate.js";
import type { Contract } from "../policy-test/allocate.js";
import type { TestCase } from "../policy-test/run.js";
import { carvesGit, carvesLive, modelsFromGitOnly, modelsFromLive } from "./policy-models.js";

/** How the tests are loaded: the process environment revsync.yaml's variables read, the run's kinds, and
 *  whether a test file with an error becomes a case of the report (JUnit) rather than stopping the run. */
export interface Asked {
  processEnv: NodeJS.ProcessEnv;
  kinds: Registry;
  brokenAsCase: boolean;
}

/** Reads the service's state for git's (here: nothing in git), as the command reads it. */
export type ReadLive = (desired: DesiredState, options: Omit<ReadOptions, "concurrency" | "targets">) => Promise<LiveState>;

/** What the cases run against: one set of policies, the cases as that environment's vars read them. */
export interface Run {
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

/** The guardrail tests (kind GuardrailTest), judged offline; a file with an error stops the run, or, for
 *  a report of broken files (JUnit), is reported once the rest ran. */
export function guardrailTests(repo: Repo, brokenAsCase: boolean, kinds: Registry): { guardrails: GuardrailTestResult[]; guardBroken?: PolicyProblems } {
  const { tests, diagnostics } = loadGuardrailTests(repo);
  const guardrails = runGuardrailTests(tests, repo, kinds);
  if (!diagnostics.some((d) => d.severity === "error")) return { guardrails };
  const problems = new PolicyProblems("the guardrail tests have errors", diagnostics);
  if (!brokenAsCase) throw problems;
  return { guardrails, guardBroken: problems };
}

/** Loads the test files with one environment's vars; refuses (exit 1) a file with an error, at once,
 *  or, for a report of broken files (JUnit), once the other files' cases have run (`broken`). */
function casesFor(
  repo: Repo,
  vars: Parameters<typeof varsFor>[0],
  how: Asked,
): { cases: TestCase[]; contracts: Contract[]; dir: string; broken?: PolicyProblems } {
  const { cases, contracts, diagnostics, dir } = loadTests(repo, varsFor(vars, how.processEnv));
  if (diagnostics.some((d) => d.severity === "error")) {
    const problems = new PolicyProblems(`the policy tests in ${relative(repo.cwd, dir) || "."} have errors`, diagnostics);
    if (!how.brokenAsCase) throw problems;
    return { cases, contracts, dir, broken: problems };
  }
  return { cases, contracts, dir };
}

/** An environment's service.allocation_rules (none without an environment). */
const rulesOf = (repo: Repo, name: string | undefined): Record<string, string> =>
  (name ? serviceChoices(repo.config.environments[name]?.service, undefined, {}).allocationRules : undefined) ?? {};

/** One environment's cases and contracts against the service's policies, read through `read`
 *  (called only when there is a case: with none, nothing signs in). */
export async function liveIn(repo: Repo, env: ResolvedEnv, read: ReadLive, how: Asked): Promise<Run> {
  const { cases, contracts, dir, broken } = casesFor(repo, env, how);
  const base = { cases, contracts, dir, broken, rules: env.service.allocationRules, source: `the service's policies in ${env.name}`, label: env.name };
  if (!cases.length && !contracts.length) return { ...base, policies: [], carves: true };
  const { kinds } = how;
  const live = await read(nothingInGit(kinds), { approvedValues: true });
  return { ...base, policies: modelsFromLive(live, kinds), carves: carvesLive(live, kinds) };
}

/** Offline, git's policies need no service, so no environment has to be chosen: the one --env (or
 *  REVSYNC_ENV) names, else every environment of revsync.yaml, each reading the policy files with its
 *  own vars. Environments whose vars give the same policies and cases run once; when they differ, the
 *  cases run for each, named with it. The URLs are not read (they may use ${VAR}s only CI defines). */
export function offlineRuns(repo: Repo, env: string | undefined, how: Asked): { runs: Run[]; warning?: string } {
  const { processEnv: penv, kinds } = how;
  const named = env ?? penv.REVSYNC_ENV;
  const names = named ? [selectEnv(repo, named, penv)] : environmentNames(repo);
  const groups = new Map<string, Omit<Run, "label"> & { names: string[] }>();
  const skipped = new Set<string>();
  for (const name of names.length ? names : [undefined]) {
    const own = name ? environmentVars(repo, name, penv) : { vars: {}, problems: [] };
    const problems = own.problems;
    if (problems.length) throw new PolicyProblems(`environment ${JSON.stringify(name)} of revsync.yaml uses variables that are not set`, problems);
    const { desired, diagnostics } = loadPolicies(repo, varsFor(own, penv), kinds, name);
    if (diagnostics.some((d) => d.severity === "error")) {
      throw new PolicyProblems(
        `the policy repo has errors${name && names.length > 1 ? ` (with the vars of environment ${name})` : ""}`,
        diagnostics,
        "run revsync validate",
      );
    }
    const { cases, contracts, dir, broken } = casesFor(repo, own, how);
    const git = modelsFromGitOnly(desired, kinds);
    for (const s of git.skipped) skipped.add(s);
    const carves = carvesGit(desired, undefined, kinds);
    const rules = rulesOf(repo, name);
    // Only several environments need telling apart.
    // (Rules and carves_allocation matter only to contracts.)
    const key = names.length > 1 ? canonicalJson([git.models, cases, contracts, contracts.length ? [carves, rules] : []]) : "";
    const group = groups.get(key);
    if (group) group.names.push(name ?? "");
    else groups.set(key, { cases, contracts, dir, broken, policies: git.models, carves, rules, source: "git's policies", names: [name ?? ""] });
  }
  const warning = skipped.size
    ? `left out, because git does not give their conditions or hierarchy_no (they keep their live values; revsync test --live uses the service's): ${[...skipped].join(", ")}`
    : undefined;
  const all = [...groups.values()];
  const runs = all.map((g) => {
    const label = g.names.join(", ");
    // The same case under several environments: each result names its own.
    const cases = all.length > 1 ? g.cases.map((c) => ({ ...c, name: `${c.name} [${label}]` })) : g.cases;
    const contracts = all.length > 1 ? g.contracts.map((c) => ({ ...c, name: `${c.name} [${label}]` })) : g.contracts;
    return { ...g, cases, contracts, label };
  });
  return { runs, ...(warning ? { warning } : {}) };
}
