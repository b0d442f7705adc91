import { displayWidth, padDisplay } from "../display-width.js";
import { terminalText } from "./escape.js";

/** A table of the service's text for a terminal: columns padded to their widest cell, two spaces apart. */
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

/** A time the service gives in epoch seconds, as ISO 8601 in UTC to the second ("" for none). */
export const time = (epoch: number | undefined): string => (epoch ? new Date(epoch * 1000).toISOString().replace(".000Z", "Z") : "");
