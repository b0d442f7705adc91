import { resolve } from "node:path";
import { planImpactText } from "../report/policy-test.js";
import { planMarkdown, planText } from "../report/plan.js";
import { impactOf } from "../plan/model.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { readPlanFile } from "./plan-file.js";

/** revsync show PLANFILE: a saved plan, rendered as plan prints one. Offline: no revsync.yaml, no
 *  credentials, no request. The file is checked as apply checks it (schema, format, checksum), so what
 *  it shows is what apply would act on. */
export async function runShow(flags: GlobalFlags, out: Output, args: string[]): Promise<number> {
  const file = args[0] ?? "";
  const plan = readPlanFile(resolve(out.io.cwd, file), false);
  const format = flags.format ?? "text";
  if (format === "json") out.out(JSON.stringify(plan, null, 2));
  else if (format === "markdown") out.out(planMarkdown(plan, file));
  else {
    out.out(`Saved plan ${file}, made ${plan.created_at.replace(/\.\d{3}Z$/, "Z")}${plan.user ? ` as ${plan.user}` : ""}.`);
    out.out(planText(plan, out));
    const impact = planImpactText(impactOf(plan));
    if (impact) out.out(`\n${impact}`);
  }
  return 0;
}
