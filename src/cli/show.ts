import { resolve } from "node:path";
import { pickView } from "../report/view.js";
import { showViews } from "../report/views/plan.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { readPlanFile } from "./plan-file.js";

/** revsync show PLANFILE: a saved plan, rendered as plan prints one. Offline: no revsync.yaml, no
 *  credentials, no request. The file is checked as apply checks it (schema, format, checksum), so what
 *  it shows is what apply would act on. */
export async function runShow(flags: GlobalFlags, out: Output, args: string[]): Promise<number> {
  const view = await pickView(showViews, flags.format);
  const file = args[0] ?? "";
  view({ plan: readPlanFile(resolve(out.io.cwd, file), kindsOf(out.io), false), file }, out);
  return 0;
}
