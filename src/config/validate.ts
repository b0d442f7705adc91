import { UserError } from "../errors.js";
import { sortDiagnostics, type Diagnostic } from "./diagnostics.js";
import { ignoreRuleWarnings, todayUtc } from "./drift-ignore.js";
import { loadTests } from "./test-files.js";
import type { FileKind } from "./rules.js";
import { endpointWarnings, environmentNames, environmentVars, findConfig, loadPolicies, loadRepo, varsFor, type Repo } from "./repo.js";

export interface ValidateInput {
  /** Where revsync.yaml is looked for, and paths are shown from. */
  cwd: string;
  config?: string;
  /** Only this environment (else REVSYNC_ENV, else every environment of revsync.yaml). */
  envName?: string;
  env: NodeJS.ProcessEnv;
  /** YYYY-MM-DD that drift.ignore rules' until dates are compared with (default: today, UTC). */
  today?: string;
  /** The resource kinds whose policy files the repo holds (the registry of src/kinds/). */
  kinds: readonly FileKind[];
  /** Checks of an environment that layers above config make (its guardrails), run with the rest. */
  more?: (repo: Repo, env: string) => Diagnostic[];
}

export interface ValidateResult {
  diagnostics: Diagnostic[];
  /** Policy documents read (the most of any environment). */
  docs: number;
}

/** Offline: parse, schema and semantic rules, for the chosen environment or every one. No network, no
 *  credentials; no process state is read but what `input` passes. */
export function validateRepo(input: ValidateInput): ValidateResult {
  const diagnostics: Diagnostic[] = [];
  const repo = loadRepo(findConfig(input.cwd, input.config), diagnostics, input.cwd);
  let docs = 0;
  if (repo) {
    const chosen = input.envName ?? input.env.REVSYNC_ENV;
    const names = chosen ? [chosen] : environmentNames(repo);
    for (const name of names) {
      if (!repo.config.environments[name]) {
        throw new UserError(`no environment ${JSON.stringify(name)} in revsync.yaml; it has: ${environmentNames(repo).join(", ")}`);
      }
      // The URLs may use ${VAR}s that only CI defines: one not set here is a warning (see endpointWarnings).
      diagnostics.push(...endpointWarnings(repo, name, input.env));
      const own = environmentVars(repo, name, input.env);
      const problems = own.problems;
      const loaded = loadPolicies(repo, varsFor(own, input.env), input.kinds, name);
      // A problem that one environment's variables cause (or of a value they filled) names that environment.
      const named = [...problems, ...loaded.diagnostics].map((d) =>
        (d.rule === "variables" || d.variables) && names.length > 1 ? { ...d, message: `${d.message} (environment ${name})` } : d,
      );
      diagnostics.push(...named);
      docs = Math.max(docs, loaded.docs.length);
      const tests = loadTests(repo, varsFor(own, input.env));
      diagnostics.push(...tests.diagnostics);
      diagnostics.push(...(input.more?.(repo, name) ?? []));
      if (name === names[0]) {
        const known = input.kinds.flatMap((k) => k.addressesIn(loaded.desired.get(k.name) ?? []));
        diagnostics.push(...ignoreRuleWarnings(repo, known, input.today ?? todayUtc()));
      }
    }
  }
  return { diagnostics: sortDiagnostics(diagnostics), docs };
}
