import type { DriftReport } from "../../plan/model.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** One environment's drift report (drift across environments is the fleet's view, views/fleet.ts). */
export type DriftView = (report: DriftReport, out: Sink) => void;

/** revsync drift. */
export const driftViews: Views<DriftView> = {
  text: async () => {
    const { driftText } = await import("../plan.js");
    return (report, out) => out.out(driftText(report, out));
  },
  json: async () => (report, out) => out.out(JSON.stringify(report, null, 2)),
  markdown: async () => {
    const { driftMarkdown } = await import("../plan.js");
    return (report, out) => out.out(driftMarkdown(report));
  },
};
