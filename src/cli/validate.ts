import { validateRepo } from "../config/validate.js";
import { KINDS } from "../kinds/registry.js";
import { printDiagnostics } from "../report/diagnostics.js";
import { envOf } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

export async function runValidate(flags: GlobalFlags, out: Output): Promise<number> {
  const env = envOf(flags);
  const { diagnostics, docs } = validateRepo({ cwd: out.io.cwd, config: flags.config, envName: flags.env, env, kinds: KINDS });
  printDiagnostics(diagnostics, flags.format ?? "text", out, docs, env);
  return diagnostics.some((d) => d.severity === "error") ? 1 : 0;
}
