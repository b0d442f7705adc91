import { PERSONAL, type RecordAsked, type Recorded } from "../export/test-cases.js";
import { plural } from "../words.js";
import type { Sink } from "./painter.js";

/** What was recorded: cases by the policy each pins, what was left out, and personal fields kept. */
export function recordedText(
  read: number,
  { mask, omit, shown }: Pick<RecordAsked, "mask" | "omit"> & { shown: string },
  { cases, same, withoutDocument }: Recorded,
  out: Sink,
): void {
  const routes = new Map<string, number>();
  for (const c of cases) routes.set(c.expect.policy ?? "no policy", (routes.get(c.expect.policy ?? "no policy") ?? 0) + 1);
  const skippedNote = [same ? `${plural(same, "line")} the same as another` : "", withoutDocument ? `${withoutDocument} without an order document` : ""]
    .filter(Boolean)
    .join(", ");
  out.out(
    `Recorded ${plural(cases.length, "case")} from ${plural(read, "error transaction")}${skippedNote ? ` (left out: ${skippedNote})` : ""} in ${shown}: ${[
      ...routes,
    ]
      .map(([p, n]) => `${n} ${p}`)
      .join(", ")}.`,
  );
  const personal = PERSONAL.filter((f) => !mask.has(f) && !omit.has(f) && cases.some((c) => f in c.line));
  if (personal.length) {
    out.info(`Note: the cases hold ${personal.join(", ")} as the service gave them; --mask ${personal.join(",")} masks them, --omit leaves them out.`);
  }
}
