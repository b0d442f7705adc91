import { sortDiagnostics, type Diagnostic } from "../config/diagnostics.js";
import { environmentNames, environmentVars, findConfig, loadPolicies, loadRepo, varsFor } from "../config/repo.js";
import { UserError } from "../errors.js";
import { printDiagnostics } from "../report/diagnostics.js";
import type { GlobalFlags } from "./main.js";
import type { Output } from "./output.js";

/** Offline: parse, schema and semantic rules, for the chosen environment or every one. No network. */
export async function runValidate(flags: GlobalFlags, out: Output): Promise<number> {
  const diagnostics: Diagnostic[] = [];
  const repo = loadRepo(findConfig(process.cwd(), flags.config), diagnostics);
  let docs = 0;
  if (repo) {
    const names = flags.env ? [flags.env] : process.env.REVSYNC_ENV ? [process.env.REVSYNC_ENV] : environmentNames(repo);
    for (const name of names) {
      if (!repo.config.environments[name])
        throw new UserError(`no environment ${JSON.stringify(name)} in revsync.yaml; it has: ${environmentNames(repo).join(", ")}`);
      // Only the policy vars: the URLs may use ${VAR}s that only CI defines.
      const loaded = loadPolicies(repo, varsFor(environmentVars(repo, name, process.env)));
      diagnostics.push(...loaded.diagnostics);
      docs = Math.max(docs, loaded.docs.length);
    }
  }
  const list = sortDiagnostics(diagnostics);
  printDiagnostics(list, flags.format ?? "text", out, docs);
  return list.some((d) => d.severity === "error") ? 1 : 0;
}
