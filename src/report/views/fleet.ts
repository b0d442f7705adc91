import type { EnvOutcome } from "../../fleet/outcome.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** A fleet's run, for its view: every environment's outcome in the order of revsync.yaml (or of the
 *  files given), and where each one's report is whole (markdown says it where it leaves something out). */
export interface FleetRun {
  outcomes: EnvOutcome[];
  whole: (o: EnvOutcome) => string;
}

/** Text shows each environment's report as soon as it and those before it are done, then the summary;
 *  markdown and JSON, the whole fleet once every environment is done. */
export interface FleetView {
  environment(o: EnvOutcome, out: Sink): void;
  end(run: FleetRun, out: Sink): void;
}

const nothing = (): void => undefined;

/** plan, drift and test --live with --all-envs or --envs, and revsync summary. */
export const fleetViews: Views<FleetView> = {
  text: async () => {
    const { environmentText, summaryText } = await import("../fleet.js");
    return {
      environment: (o, out) => out.out(`${environmentText(o, out)}\n\n`),
      end: ({ outcomes }, out) => out.out(summaryText(outcomes, out)),
    };
  },
  json: async () => {
    const { fleetJson } = await import("../fleet.js");
    return { environment: nothing, end: ({ outcomes }, out) => out.json(fleetJson(outcomes)) };
  },
  markdown: async () => {
    const { fleetMarkdown } = await import("../fleet.js");
    return { environment: nothing, end: ({ outcomes, whole }, out) => out.out(fleetMarkdown(outcomes, whole)) };
  },
};
