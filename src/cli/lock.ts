import { UserError } from "../errors.js";
import { pickView } from "../report/view.js";
import { lockStatusViews } from "../report/views/lock.js";
import { lockBackend, lockStatus, unlockEnvironment } from "../session/env-lock.js";
import { envOf, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { askYes } from "./prompt.js";

export interface LockCommandFlags extends GlobalFlags {
  /** unlock --force: release without asking, even the lock of a process that runs on this host. */
  force?: boolean;
}

/** revsync lock status: exit 0 whether or not it is held; 1 when it cannot be read. */
export async function runLockStatus(flags: LockCommandFlags, out: Output): Promise<number> {
  const view = await pickView(lockStatusViews, flags.format);
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  view(await lockStatus(lockBackend(repo, env, envOf(flags)), env.name, out.interactive), out);
  return 0;
}

/** revsync unlock --env NAME LOCK_ID (src/session/env-lock.ts says when it releases). */
export async function runUnlock(flags: LockCommandFlags, out: Output, args: string[]): Promise<number> {
  if (!flags.env) throw new UserError("unlock needs --env NAME: the environment whose lock to release is named, never guessed");
  const id = (args[0] ?? "").trim();
  if (!id) throw new UserError("unlock needs the lock's id (revsync lock status --env NAME shows it)");
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  const ask = (q: string): Promise<boolean> => askYes(out, q);
  return unlockEnvironment(lockBackend(repo, env, envOf(flags)), env.name, { id, force: !!flags.force, penv: envOf(flags), out, ask });
}
