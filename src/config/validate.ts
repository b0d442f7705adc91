import { UserError } from "../errors.js";
import { sortDiagnostics, type Diagnostic } from "./diagnostics.js";
import { relative } from "node:path";
import { address } from "../plan/model.js";
import { globMatch, inForce, todayUtc } from "../plan/ignore.js";
import { loadTests } from "./test-files.js";
import { environmentNames, environmentVars, findConfig, loadPolicies, loadRepo, varsFor, type DesiredState, type Repo } from "./repo.js";
import { at } from "./schema-diagnostics.js";

export interface ValidateInput {
  /** Where revsync.yaml is looked for, and paths are shown from. */
  cwd: string;
  config?: string;
  /** Only this environment (else REVSYNC_ENV, else every environment of revsync.yaml). */
  envName?: string;
  env: NodeJS.ProcessEnv;
  /** YYYY-MM-DD that drift.ignore rules' until dates are compared with (default: today, UTC). */
  today?: string;
}

/** drift.ignore rules that will not do what they say: one that matches no address in git, one past its
 *  until day (it applies no more). Warnings: the repo stays valid. */
function ignoreRuleWarnings(repo: Repo, desired: DesiredState, today: string): Diagnostic[] {
  const known = [
    ...desired.tenantConfigs.map((d) => address.tenant(d.name)),
    ...desired.ssp.flatMap((d) => [address.ssp(d.name), ...d.batches.map((b) => address.batch(d.name, b.name))]),
  ];
  const file = relative(repo.cwd, repo.configFile) || "revsync.yaml";
  const out: Diagnostic[] = [];
  (repo.config.drift?.ignore ?? []).forEach((rule, i) => {
    if (!inForce(rule, today)) {
      out.push({
        file,
        ...at(repo.configDoc, `/drift/ignore/${i}/until`),
        severity: "warning",
        rule: "drift-ignore",
        message: `drift.ignore[${i}] (${rule.address}) expired on ${rule.until}: it applies no more, and drift reports what it covered`,
      });
    }
    // A rule for unmanaged drift names, by definition, what git does not hold.
    const aboutUnmanaged = !!rule.classes && rule.classes.every((c) => c === "unmanaged" || c === "unmanaged_batch");
    if (!aboutUnmanaged && !known.some((a) => globMatch(rule.address, a))) {
      out.push({
        file,
        ...at(repo.configDoc, `/drift/ignore/${i}/address`),
        severity: "warning",
        rule: "drift-ignore",
        message: `drift.ignore[${i}]: ${JSON.stringify(rule.address)} matches no address in git`,
      });
    }
  });
  return out;
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
      // Only the policy vars: the URLs may use ${VAR}s that only CI defines.
      const { vars, problems } = environmentVars(repo, name, input.env);
      const loaded = loadPolicies(repo, varsFor(vars, input.env));
      // A problem that one environment's variables cause names that environment.
      const named = [...problems, ...loaded.diagnostics].map((d) =>
        d.rule === "variables" && names.length > 1 ? { ...d, message: `${d.message} (environment ${name})` } : d,
      );
      diagnostics.push(...named);
      docs = Math.max(docs, loaded.docs.length);
      const tests = loadTests(repo, varsFor(vars, input.env));
      diagnostics.push(...tests.diagnostics);
      if (name === names[0]) diagnostics.push(...ignoreRuleWarnings(repo, loaded.desired, input.today ?? todayUtc()));
    }
  }
  return { diagnostics: sortDiagnostics(diagnostics), docs };
}
