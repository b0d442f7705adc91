import type { DriftReport } from "../../plan/model.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** One environment of a drift run: its report, or (with --all-envs) the error that stopped it. */
export type DriftEntry = DriftReport | { environment: string; error: Record<string, unknown> };

/** Drift is rendered as each environment is read (text and markdown), or once at the end (JSON). */
export interface DriftView {
  environment(report: DriftReport, out: Sink): void;
  end(run: { entries: DriftEntry[]; allEnvs: boolean }, out: Sink): void;
}

const nothing = (): void => undefined;

/** revsync drift. */
export const driftViews: Views<DriftView> = {
  text: async () => {
    const { driftText } = await import("../plan.js");
    return { environment: (report, out) => out.out(driftText(report, out)), end: nothing };
  },
  json: async () => ({
    environment: nothing,
    // One report has its own format_version; several are one object with a list, so the output has one too.
    end: ({ entries, allEnvs }, out) => (allEnvs ? out.json({ environments: entries }) : out.out(JSON.stringify(entries[0], null, 2))),
  }),
  markdown: async () => {
    const { driftMarkdown } = await import("../plan.js");
    return { environment: (report, out) => out.out(driftMarkdown(report)), end: nothing };
  },
};
