import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { listYamlFiles } from "../config/walk.js";
import { exportFiles, renderFile } from "../export/mapping.js";
import { checkTargets } from "../plan/targets.js";
import { POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import { writeUserFile } from "../user-files.js";
import { openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";

export async function runExport(flags: GlobalFlags & { dir?: string }, out: Output): Promise<number> {
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  const core = openClient(env, flags, out);
  const dir = resolve(flags.dir ?? repo.policiesDir);
  try {
    // Every batch's values too: export keeps them in git beside the policy file.
    const live = await readWithProgress(core, { tenantConfigs: [], ssp: [] }, flags, out, { allDetails: true, allValues: true });
    checkTargets(flags.target ?? [], { tenantConfigs: [], ssp: [] }, live);
    const files = exportFiles(live, flags.target ?? []);
    const schemas = writeRepoSchemas(repo.root, false);
    const schemaFile = join(repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
    const written: string[] = [];
    for (const f of files) {
      const path = join(dir, f.file);
      const schemaRef = relative(dirname(path), schemaFile).split("\\").join("/");
      writeUserFile(path, renderFile(f, [`yaml-language-server: $schema=${schemaRef}`, `Exported by revsync from environment ${env.name}.`]));
      written.push(relative(process.cwd(), path));
      for (const v of f.valuesFiles) {
        writeUserFile(join(dir, v.file), v.text);
        written.push(relative(process.cwd(), join(dir, v.file)));
      }
    }
    const others = existsSync(dir) ? listYamlFiles(dir).filter((p) => !files.some((f) => join(dir, f.file) === p)) : [];
    for (const f of written) out.out(`wrote ${f}`);
    for (const s of schemas.written) out.info(`wrote ${s} (the schemas the files' first line refers to)`);
    const leftOut = files.flatMap((f) => f.leftOut);
    if (leftOut.length) {
      out.warn(`left out of the files (each is named in a comment in its file; a field left out keeps its live value):\n  ${leftOut.join("\n  ")}`);
    }
    if (others.length) {
      const shown = others.map((p) => relative(process.cwd(), p));
      out.warn(
        `other policy files in ${relative(process.cwd(), dir) || "."} were left as they are and may now define the same policies twice: ${shown.join(", ")}`,
      );
    }
    return 0;
  } finally {
    await core.close();
  }
}
