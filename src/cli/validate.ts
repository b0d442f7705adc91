import { validateRepo } from "../config/validate.js";
import { pickView } from "../report/view.js";
import { validateViews } from "../report/views/validate.js";
import { envOf } from "./context.js";
import { nowOf } from "./guardrails.js";
import { guardrailSetup } from "../guardrails/setup.js";
import type { Repo } from "../config/repo.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";

export async function runValidate(flags: GlobalFlags, out: Output): Promise<number> {
  const view = await pickView(validateViews, flags.format);
  const env = envOf(flags);
  const now = nowOf(flags);
  // Each environment's guardrails (the top level's with its own), found once per problem.
  const more = (repo: Repo, name: string) => guardrailSetup(repo, name, kindsOf(out.io), now).diagnostics;
  const { diagnostics, docs } = validateRepo({ cwd: out.io.cwd, config: flags.config, envName: flags.env, env, kinds: kindsOf(out.io), more });
  view({ diagnostics, files: docs, env }, out);
  return diagnostics.some((d) => d.severity === "error") ? 1 : 0;
}
