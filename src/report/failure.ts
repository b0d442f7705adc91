import { ApiError, Cancelled, InternalError, PolicyProblems, UserError, adviceFor } from "../errors.js";
import type { Sink } from "./painter.js";

/** What a failure's views write to: a report's sink, and the lines of an error on stderr. */
export interface FailureSink extends Sink {
  error(text: string): void;
  /** A line of an error report on stderr (a diagnostic). */
  errorLine(text: string): void;
  /** revsync's own advice, said even with --quiet. */
  hint(text: string): void;
}

/** A command's failure, in words on stderr: the message, a policy repo's problems each at its file, line
 *  and column, and what to do about it; an error revsync did not expect, with its stack and a request to
 *  report it. */
export function failureWords(e: unknown, out: FailureSink): void {
  if (e instanceof Cancelled) return out.error(e.message);
  if (e instanceof PolicyProblems) {
    for (const d of e.diagnostics) out.errorLine(`${d.file}:${d.line}:${d.column}: ${d.severity}: ${d.message}`);
  }
  if (e instanceof UserError) {
    out.error(e.message);
    if (e.hint) out.hint(`Hint: ${e.hint}`);
    return;
  }
  if (e instanceof ApiError) {
    out.error(e.message);
    const advice = e.hint ?? adviceFor(e.status);
    if (advice) out.hint(`Hint: ${advice}`);
    return;
  }
  const err = e instanceof Error ? e : new InternalError(String(e));
  out.error(`revsync hit an internal error; please report it with this output.\n${err.stack ?? err.message}`);
}
