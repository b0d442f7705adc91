import { sortDiagnostics, type Diagnostic } from "../config/diagnostics.js";
import { environmentNames, findConfig, loadPolicies, loadRepo, resolveEnv, varsFor } from "../config/repo.js";
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
      if (!repo.config.environments[name]) throw new UserError(`no environment ${JSON.stringify(name)} in revsync.yaml; it has: ${environmentNames(repo).join(", ")}`);
      // URLs may use ${VAR}s that only CI defines; validation needs just the policy vars.
      const env = { ...resolveEnv(repo, name, { ...process.env, ...placeholders(repo.config.environments[name]) }), name };
      const loaded = loadPolicies(repo, varsFor(env));
      diagnostics.push(...loaded.diagnostics);
      docs = Math.max(docs, loaded.docs.length);
    }
  }
  const list = sortDiagnostics(diagnostics);
  printDiagnostics(list, flags.format ?? "text", out, docs);
  return list.some((d) => d.severity === "error") ? 1 : 0;
}

function placeholders(env: object | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const text = JSON.stringify({ ...(env ?? {}), vars: undefined });
  for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) if (m[1] && process.env[m[1]] === undefined) out[m[1]] = `unset-${m[1]}`;
  return out;
}
