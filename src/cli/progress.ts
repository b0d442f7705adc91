import type { Governor } from "../api/governor.js";
import type { Output } from "./output.js";
import { waitingNote } from "./rate-limit.js";

export interface Progress {
  update(text: string): void;
  /** Writes something else to stderr (`write`) without garbling the line: cleared first, drawn again after. */
  above(write: () => void): void;
  stop(): void;
}

/** A spinner on stderr, only on a terminal and never with --quiet. A pseudo-terminal that reports no
 *  width (script(1) without a size, some CI runners) gets none: ora's line clearing divides by the width
 *  and would write cursor-up codes without end. */
export async function startProgress(out: Output, text: string, quiet?: boolean, governor?: Governor): Promise<Progress> {
  const columns = out.io.stderr.columns ?? 0;
  if (quiet || !out.stderrIsTTY || out.io.env.CI || columns <= 0) return { update: () => undefined, above: (write) => write(), stop: () => undefined };
  const { default: ora } = await import("ora");
  const spinner = ora({ text: out.terminal(text), stream: out.io.stderr as NodeJS.WritableStream, discardStdin: false }).start();
  // The line says when revsync waits on the service's rate limit, as that starts and ends.
  let base = text;
  const render = (): void => {
    spinner.text = out.terminal(base + (governor ? waitingNote(governor) : ""));
  };
  const unwatch = governor?.watch(render);
  return {
    update: (t) => {
      base = t;
      render();
    },
    above: (write) => {
      spinner.clear();
      write();
      spinner.render();
    },
    stop: () => {
      unwatch?.();
      spinner.stop();
    },
  };
}
