import { exportFolder } from "../export/folder.js";
import { exportEnvironment } from "../export/run.js";
import { exportText } from "../report/export.js";
import { envOf, openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";

export interface ExportFlags extends GlobalFlags {
  dir?: string;
  dryRun?: boolean;
  /** Every environment of revsync.yaml into one set of files (export-all-envs.ts). */
  allEnvs?: boolean;
}

/** revsync export: the service's policies as policy files (src/export/run.ts); --dry-run says what it
 *  would write. Exit 1 when anything was left as it was for a problem. */
export async function runExport(flags: ExportFlags, out: Output): Promise<number> {
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  const core = openClient(env, flags, out);
  const asked = { repo, env, folder: exportFolder(out.io.cwd, flags.dir, repo), targets: flags.target ?? [], dryRun: !!flags.dryRun };
  try {
    const exported = await exportEnvironment({
      ...asked,
      processEnv: envOf(flags),
      kinds: kindsOf(out.io),
      read: (desired, options) => readWithProgress(core, desired, flags, out, options),
    });
    exportText(exported, asked, out);
    return exported.stopped || exported.failed ? 1 : 0;
  } finally {
    await core.close();
  }
}
