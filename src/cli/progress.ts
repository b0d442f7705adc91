import type { Output } from "./output.js";

export interface Progress {
  update(text: string): void;
  stop(): void;
}

/** A spinner on stderr, only on a terminal and never with --quiet. */
export async function startProgress(out: Output, text: string, quiet?: boolean): Promise<Progress> {
  if (quiet || !out.stderrIsTTY || process.env.CI) return { update: () => undefined, stop: () => undefined };
  const { default: ora } = await import("ora");
  const spinner = ora({ text, stream: process.stderr, discardStdin: false }).start();
  return {
    update: (t) => {
      spinner.text = out.redactor.redact(t);
    },
    stop: () => spinner.stop(),
  };
}
