import type { Diagnostic } from "../config/diagnostics.js";
import type { Sink } from "./painter.js";
import { plural } from "../words.js";
import { terminalLines, terminalText } from "./escape.js";

/** What validate found: the diagnostics, the policy documents read, and the run's environment (GitHub
 *  Actions, GITHUB_ACTIONS=true, also gets annotations). */
export interface Checked {
  diagnostics: Diagnostic[];
  files: number;
  env: NodeJS.ProcessEnv;
}

const errorsOf = (list: Diagnostic[]): number => list.filter((d) => d.severity === "error").length;

/** file:line:col: error: message, as compilers print it, and a closing line. */
export function diagnosticsText({ diagnostics: list, files }: Checked, out: Sink): void {
  const errors = errorsOf(list);
  for (const d of list) {
    const sev = d.severity === "error" ? out.paint("red", "error") : out.paint("yellow", "warning");
    out.out(`${out.paint("bold", `${d.file}:${d.line}:${d.column}`)}: ${sev}: ${d.message}`);
  }
  const warnings = list.length - errors;
  const warned = warnings ? plural(warnings, "warning") : "";
  if (errors) {
    // Only the files that have an error: a file with just a warning is not why validate fails.
    const failed = new Set(list.filter((d) => d.severity === "error").map((d) => d.file)).size;
    out.out(`\n${plural(errors, "error")} in ${plural(failed, "file")}${warned ? `, and ${warned}` : ""}.`);
  } else out.out(`${list.length ? "\n" : ""}${out.paint("green", "Valid:")} ${plural(files, "policy document")}, ${warned || "no problems"}.`);
}

export function diagnosticsJson({ diagnostics: list, files }: Checked, out: Sink): void {
  const errors = errorsOf(list);
  out.json({ valid: errors === 0, files, errors, warnings: list.length - errors, diagnostics: list });
}

function escapeData(s: string): string {
  return s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
function escapeProp(s: string): string {
  return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** GitHub annotations, in Actions (whatever the format): one workflow command per diagnostic. */
export function githubAnnotations({ diagnostics: list, env }: Checked, out: Sink): void {
  if (env.GITHUB_ACTIONS !== "true") return;
  for (const d of list) {
    // The runner's log shows terminal codes: the file's text in a message is shown as text.
    out.raw(
      `::${d.severity === "error" ? "error" : "warning"} file=${escapeProp(terminalText(d.file))},line=${d.line},col=${d.column}::${escapeData(terminalLines(d.message))}\n`,
    );
  }
}
