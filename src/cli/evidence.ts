import { isAbsolute, resolve } from "node:path";
import { pickView } from "../report/view.js";
import { evidenceShowViews, evidenceVerifyViews } from "../report/views/evidence.js";
import { liveFindings, recordsEnvironment, recordsToShow, shownVerdict, verifyExitCode, verifyFolder } from "../session/evidence.js";
import { cwdOf, envOf, openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";

export interface EvidenceFlags extends GlobalFlags {
  live?: boolean;
}

/** revsync evidence verify DIR [--live]: --live reads the environment of revsync.yaml (--env, or the
 *  records' own when they name one). */
export async function runEvidenceVerify(flags: EvidenceFlags, out: Output, args: string[]): Promise<number> {
  const view = await pickView(evidenceVerifyViews, flags.format);
  const dir = resolve(cwdOf(flags), args[0] ?? "");
  const { stored, report } = await verifyFolder(dir, { openRepo: () => openRepo(flags), penv: envOf(flags) });
  let live;
  if (flags.live) {
    const env = openEnv(openRepo(flags), flags, flags.env ?? recordsEnvironment(stored));
    live = await liveFindings(stored, env, { out, kinds: kindsOf(out.io), openClient: () => openClient(env, flags, out) });
  }
  view({ folder: dir, report, live }, out);
  return verifyExitCode(report, live);
}

/** revsync evidence show FILE|DIR */
export async function runEvidenceShow(flags: EvidenceFlags & { from?: string; last?: string }, out: Output, args: string[]): Promise<number> {
  const view = await pickView(evidenceShowViews, flags.format);
  const target = args[0] ?? "";
  const path = isAbsolute(target) ? target : resolve(cwdOf(flags), target);
  const records = await recordsToShow(path, flags, { openRepo: () => openRepo(flags), penv: envOf(flags) });
  view(records, out);
  return shownVerdict(records, out);
}
