import { validateRepo } from "../config/validate.js";
import { pickView } from "../report/view.js";
import { validateViews } from "../report/views/validate.js";
import { envOf } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";

export async function runValidate(flags: GlobalFlags, out: Output): Promise<number> {
  const view = await pickView(validateViews, flags.format);
  const env = envOf(flags);
  const { diagnostics, docs } = validateRepo({ cwd: out.io.cwd, config: flags.config, envName: flags.env, env, kinds: kindsOf(out.io) });
  view({ diagnostics, files: docs, env }, out);
  return diagnostics.some((d) => d.severity === "error") ? 1 : 0;
}
