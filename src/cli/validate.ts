import { validateRepo } from "../config/validate.js";
import { printDiagnostics } from "../report/diagnostics.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

export async function runValidate(flags: GlobalFlags, out: Output): Promise<number> {
  const { diagnostics, docs } = validateRepo({ cwd: process.cwd(), config: flags.config, envName: flags.env, env: process.env });
  printDiagnostics(diagnostics, flags.format ?? "text", out, docs);
  return diagnostics.some((d) => d.severity === "error") ? 1 : 0;
}
