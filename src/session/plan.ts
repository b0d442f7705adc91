import { statSync } from "node:fs";
import { resolve } from "node:path";
import { UserError } from "../errors.js";
import { needsAction, type Plan } from "../plan/model.js";
import { hasApplied, hasChanges } from "../report/plan.js";
import { unreadError } from "../report/unread.js";
import type { RunOutput } from "../run-output.js";
import { shellQuote } from "../shell-quote.js";
import { writeUserFile } from "../user-files.js";

/** A plan saved for apply (plan --out): its JSON, and the command that applies exactly it. */
export function savePlan(plan: Plan, file: string, cwd: string, out: RunOutput): void {
  writeUserFile(resolve(cwd, file), JSON.stringify(plan, null, 2) + "\n");
  out.info(`Saved the plan to ${file}. Apply exactly this plan with: revsync apply ${shellQuote(file)}`);
}

/** 2 when apply would do something, or a write is blocked until someone acts (a batch to upload again, a
 *  source environment to apply first: someone must); entries that are information alone (not in git,
 *  unsupported) keep a PR check green, with a warning naming them; the plan itself never says "No
 *  changes" then. */
export function planExit(plan: Plan, detailedExitcode: boolean, out: RunOutput): number {
  const actionable = hasApplied(plan);
  if (!actionable && hasChanges(plan)) {
    const s = plan.summary;
    const parts = [
      s.blocked ? `${s.blocked} blocked` : "",
      s.not_in_git ? `${s.not_in_git} not in git` : "",
      s.unsupported ? `${s.unsupported} unsupported` : "",
    ].filter(Boolean);
    const act = s.blocked ? `; a blocked write waits for someone to act, as its reason says${detailedExitcode ? " (exit 2)" : ""}` : "";
    out.warn(`only entries that revsync does not apply remain (${parts.join(", ")}, listed with their reasons): apply would do nothing${act}`);
  }
  // A read that failed after its retries failed only what it fed: the plan says which; the run fails.
  if (plan.unread?.length) {
    out.error(unreadError(plan.unread));
    return 1;
  }
  return detailedExitcode && plan.changes.some(needsAction) ? 2 : 0;
}

/** A saved plan is one environment's (apply applies one plan to the tenant it was made for): with several
 *  environments, --out names a folder, and each environment's plan is saved in it as <name>.plan.json.
 *  Checked before anything is read: a name that cannot be a file's, a folder that is a file. */
export function planFolder(out: string | undefined, names: string[], cwd: string): string | undefined {
  if (out === undefined) return undefined;
  const dir = resolve(cwd, out);
  const bad = names.find((n) => !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(n));
  if (bad !== undefined)
    throw new UserError(
      `environment ${JSON.stringify(bad)} cannot name a plan file in ${out} (letters, digits, ".", "_" and "-" only), so nothing was read`,
      `save its plan on its own: revsync plan --env ${shellQuote(bad)} --out FILE`,
    );
  let isFile = false;
  try {
    isFile = !statSync(dir).isDirectory();
  } catch {
    // Not there yet: made with the first plan.
  }
  if (isFile) throw new UserError(`--out ${out} is a file: with several environments --out names a folder, which gets one plan file per environment`);
  return dir;
}
