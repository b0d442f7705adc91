import type { ApplyReport } from "../../apply/run.js";
import type { EvidenceLock } from "../../evidence/record.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** What became of an apply's writes, and the environment's lock it held (or that it took none). */
export interface Applied {
  report: ApplyReport;
  lock: EvidenceLock | undefined;
}

export type ApplyView = (applied: Applied, out: Sink) => void;

/** revsync apply's closing report (the plan it shows first, and each step as it ends, go to stderr). */
export const applyViews: Views<ApplyView> = {
  text: async () => {
    const { applyText } = await import("../plan.js");
    return ({ report }, out) => out.out(applyText(report, out));
  },
  json:
    async () =>
    ({ report, lock }, out) =>
      out.json({ ...report, lock }),
};
