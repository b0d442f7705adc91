import { exportFolder } from "../export/folder.js";
import { exportAllEnvironments, type ReadEnvironment } from "../export/run-all-envs.js";
import { exportAllText } from "../report/export.js";
import { openClient, openEnv, openRepo } from "./context.js";
import type { ExportFlags } from "./export.js";
import { fleetNames } from "./fleet.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";

/** revsync export --all-envs: every environment of revsync.yaml, each read with its own sign-in, adopted
 *  into one set of policy files (src/export/run-all-envs.ts). */
export async function runExportAllEnvs(flags: ExportFlags, out: Output): Promise<number> {
  const repo = openRepo(flags);
  // Every environment, each checked; --env refused, and the overrides (each names one tenant) too.
  const names = fleetNames(repo, { ...flags, allEnvs: true });
  const asked = { repo, folder: exportFolder(out.io.cwd, flags.dir, repo), dryRun: !!flags.dryRun };
  const read: ReadEnvironment = async (name, desired, options) => {
    const env = openEnv(repo, flags, name);
    const core = openClient(env, flags, out);
    try {
      out.verbose(`export: reading environment ${name}`);
      return { env, live: await readWithProgress(core, desired, flags, out, options) };
    } finally {
      await core.close();
    }
  };
  const exported = await exportAllEnvironments({ ...asked, names, targets: flags.target ?? [], kinds: kindsOf(out.io), read });
  exportAllText(exported, asked, out);
  return exported.stopped || exported.failed ? 1 : 0;
}
