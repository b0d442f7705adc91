import type { Diagnostic } from "../config/diagnostics.js";
import type { Sink } from "./painter.js";
import { plural } from "../words.js";
import { terminalLines, terminalText } from "./escape.js";

function escapeData(s: string): string {
  return s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
function escapeProp(s: string): string {
  return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** file:line:col: error: message, as compilers print it; or JSON; plus GitHub annotations in Actions
 *  (GITHUB_ACTIONS=true in the run's environment, `env`). */
export function printDiagnostics(list: Diagnostic[], format: string, out: Sink, files: number, env: NodeJS.ProcessEnv = process.env): void {
  const errors = list.filter((d) => d.severity === "error").length;
  if (format === "json") {
    out.json({ valid: errors === 0, files, errors, warnings: list.length - errors, diagnostics: list });
  } else {
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
  if (env.GITHUB_ACTIONS === "true") {
    for (const d of list) {
      // The runner's log shows terminal codes: the file's text in a message is shown as text.
      out.raw(
        `::${d.severity === "error" ? "error" : "warning"} file=${escapeProp(terminalText(d.file))},line=${d.line},col=${d.column}::${escapeData(terminalLines(d.message))}\n`,
      );
    }
  }
}
