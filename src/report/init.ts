import type { Scaffolded } from "../config/scaffold.js";
import type { Lines } from "./lines.js";

/** revsync init's report: what became of each file, the warnings, and what to do next. */
export function initText(s: Scaffolded, out: Pick<Lines, "out" | "warn">): void {
  if (s.configWarning) out.warn(s.configWarning);
  const { written, unchanged, kept } = s.outcome;
  out.out(`${s.existed ? "Added to" : "Initialised"} a revsync policy repo in ${s.where}:`);
  for (const w of written) out.out(`  ${w}`);
  if (!written.length) out.out("  nothing: every file init writes is there");
  if (unchanged.length) out.out(`  unchanged, already as init writes them: ${unchanged.join(", ")}`);
  if (kept.length) out.out(`  kept, as they exist (--force replaces them): ${kept.join(", ")}`);
  for (const w of s.warnings) out.warn(w);
  if (s.next.length) {
    out.out("");
    out.out("Next:");
    for (const line of s.next) out.out(line);
  }
  if (s.ciNote) out.out(s.ciNote);
}
