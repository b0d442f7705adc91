import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { varsFor } from "../config/repo.js";
import { listYamlFiles } from "../config/walk.js";
import { readYamlFile } from "../config/yaml-source.js";
import { placeExport, type GitFile } from "../export/in-place.js";
import { exportFiles } from "../export/mapping.js";
import { checkTargets } from "../plan/targets.js";
import { POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import { targeted } from "../shared/address.js";
import { fileError, writeUserFile } from "../user-files.js";
import { plural } from "../words.js";
import { envOf, openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";

export interface ExportFlags extends GlobalFlags {
  dir?: string;
  dryRun?: boolean;
}

const posixOf = (p: string): string => p.split(sep).join("/");

/** Every file below dir (relative, / separators), dot-folders aside: names a new file must not take. */
function filesUnder(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.add(posixOf(relative(dir, p)));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

/** The policy files the folder holds, each document's value read with the environment's variables. */
function gitFiles(dir: string, vars: Parameters<typeof readYamlFile>[3]): GitFile[] {
  if (!existsSync(dir)) return [];
  return listYamlFiles(dir).flatMap((abs): GitFile[] => {
    let text: string;
    try {
      text = readFileSync(abs, "utf8");
    } catch {
      return []; // validate says why; export does not write over what it cannot read
    }
    const values: unknown[] = [];
    for (const src of readYamlFile(abs, abs, [], vars)) if (!src.unresolved?.size) values[src.index] = src.value;
    return [{ file: posixOf(relative(dir, abs)), text, values }];
  });
}

/** revsync export: the service's policies as policy files. Into a folder that holds policy files
 *  already, each policy's file (found by metadata.name, whatever its name) is updated in place, keeping
 *  its comments; a file is created only for a policy git lacks. --dry-run says what it would write. */
export async function runExport(flags: ExportFlags, out: Output): Promise<number> {
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  const core = openClient(env, flags, out);
  const dir = resolve(out.io.cwd, flags.dir ?? repo.policiesDir);
  const shown = (file: string): string => relative(out.io.cwd, join(dir, file)) || file;
  try {
    // Every batch's values too: export keeps them in git beside the policy file.
    const live = await readWithProgress(core, { tenantConfigs: [], ssp: [] }, flags, out, { allDetails: true, allValues: true });
    checkTargets(flags.target ?? [], { tenantConfigs: [], ssp: [] }, live);
    let taken: Set<string>;
    let git: GitFile[];
    try {
      taken = filesUnder(dir);
      git = gitFiles(dir, varsFor(env.vars, envOf(flags)));
    } catch (e) {
      throw fileError("read", shown("."), e);
    }
    const files = exportFiles(live, flags.target ?? [], taken);
    const schemaFile = join(repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
    const header = (file: string): string[] => [
      `yaml-language-server: $schema=${posixOf(relative(dirname(join(dir, file)), schemaFile))}`,
      `Exported by revsync from environment ${env.name}.`,
    ];
    const readValues = (file: string): string | undefined => {
      try {
        return readFileSync(join(dir, file), "utf8");
      } catch {
        return undefined;
      }
    };
    const plan = placeExport(files, git, header, readValues);
    // A values path of git's own that leads out of the repo is validate's to report, never export's to follow.
    const outside = plan.writes.filter((w) => {
      const rel = relative(repo.root, join(dir, w.file));
      return rel.startsWith("..") || isAbsolute(rel);
    });
    for (const w of outside) out.warn(`${shown(w.file)} lies outside the policy repo: not written (${w.what})`);
    const writes = plan.writes.filter((w) => !outside.includes(w));
    const verb = (w: (typeof writes)[number]): string => (flags.dryRun ? (w.created ? "would write" : "would update") : w.created ? "wrote" : "updated");
    if (!flags.dryRun) {
      for (const w of writes) writeUserFile(join(dir, w.file), w.text);
      for (const s of writeRepoSchemas(repo.root, false).written) out.info(`wrote ${s} (the schemas the files' first line refers to)`);
    }
    for (const w of writes) out.out(`${verb(w)} ${shown(w.file)}${w.created && !w.what.startsWith("values") ? "" : ` (${w.what})`}`);
    for (const s of plan.skipped) out.warn(s);
    const leftOut = files.flatMap((f) => f.leftOut);
    if (leftOut.length) {
      out.warn(`left out of the files (each is named in a comment in its file; a field left out keeps its live value):\n  ${leftOut.join("\n  ")}`);
    }
    const gitOnly = plan.gitOnly.filter((g) => targeted(g.address, flags.target ?? []));
    if (gitOnly.length) {
      out.warn(
        `git has files for what the service does not hold, left as they are (plan shows each):\n  ${gitOnly.map((g) => `${g.address} (${shown(g.file)})`).join("\n  ")}`,
      );
    }
    const created = writes.filter((w) => w.created).length;
    const updated = writes.length - created;
    if (!writes.length) out.out("Nothing to export: git's files already hold what the service holds.");
    else if (flags.dryRun) out.out(`\nDry run: ${plural(writes.length, "file")} would be written (${created} new, ${updated} updated); nothing was written.`);
    return 0;
  } finally {
    await core.close();
  }
}
