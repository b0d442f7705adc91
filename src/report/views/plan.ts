import type { Plan } from "../../plan/model.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** A plan as a command shows it: `file` names where the whole plan is (the file plan --out wrote, or
 *  the saved plan show prints), for markdown that leaves something out. */
export interface ShownPlan {
  plan: Plan;
  file?: string;
}

export type PlanView = (shown: ShownPlan, out: Sink) => void;

/** The plan in text, then its impact on the policy tests. */
async function planText(): Promise<PlanView> {
  const [{ planText }, { planImpactText }, { impactOf }] = await Promise.all([
    import("../plan.js"),
    import("../policy-test.js"),
    import("../../plan/model.js"),
  ]);
  return ({ plan }, out) => {
    out.out(planText(plan, out));
    const impact = planImpactText(impactOf(plan));
    if (impact) out.out(`\n${impact}`);
  };
}

/** revsync plan (and demo). */
export const planViews: Views<PlanView> = {
  text: planText,
  json:
    async () =>
    ({ plan }, out) =>
      out.out(JSON.stringify(plan, null, 2)),
  markdown: async () => {
    const { planMarkdown } = await import("../plan.js");
    return ({ plan, file }, out) => out.out(planMarkdown(plan, file));
  },
};

/** revsync show PLANFILE: a saved plan as plan prints one; in text, first which file and when. */
export const showViews: Views<PlanView> = {
  ...planViews,
  text: async () => {
    const text = await planText();
    return (shown, out) => {
      const { plan, file } = shown;
      out.out(`Saved plan ${file ?? ""}, made ${plan.created_at.replace(/\.\d{3}Z$/, "Z")}${plan.user ? ` as ${plan.user}` : ""}.`);
      text(shown, out);
    };
  },
};
