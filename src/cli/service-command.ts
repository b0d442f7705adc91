import { displayWidth, padDisplay } from "../display-width.js";
import { terminalText } from "../report/escape.js";
import { openClient, openServiceEnv } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

/** What the service commands (approvals, errors, ssp) share: a table, times, and a client for the run. */
export function table(cells: string[][]): string {
  // Each cell is the service's text: one line, shown as text (no control character acts or breaks a row).
  const rows = cells.map((r) => r.map(terminalText));
  // Widths in terminal columns: names in CJK or with emoji take two a character.
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => displayWidth(r[i] ?? "")))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => padDisplay(c, widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

export const time = (epoch: number | undefined): string => (epoch ? new Date(epoch * 1000).toISOString().replace(".000Z", "Z") : "");

export async function withClient<T>(
  flags: GlobalFlags,
  out: Output,
  fn: (core: ReturnType<typeof openClient>, env: ReturnType<typeof openServiceEnv>) => Promise<T>,
): Promise<T> {
  const env = openServiceEnv(flags);
  const core = openClient(env, flags, out);
  try {
    return await fn(core, env);
  } finally {
    await core.close();
  }
}
