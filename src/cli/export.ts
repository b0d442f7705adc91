import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { environmentNames, varsFor } from "../config/repo.js";
import { listYamlFiles } from "../config/walk.js";
import { readYamlFile } from "../config/yaml-source.js";
import { setEnvironmentVars } from "../export/config-vars.js";
import { placeExport, type GitFile, type VarHome } from "../export/in-place.js";
import { exportFiles } from "../export/mapping.js";
import { nothingInGit } from "../live/read.js";
import { checkTargets } from "../plan/targets.js";
import { unknownNotes } from "../shared/unknown.js";
import { POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import { targeted } from "../shared/address.js";
import { editUserFile, fileError, realPathInside } from "../user-files.js";
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
    const live = await readWithProgress(core, nothingInGit(), flags, out, { allDetails: true, allValues: true });
    checkTargets(flags.target ?? [], nothingInGit(), live);
    let taken: Set<string>;
    let git: GitFile[];
    try {
      taken = filesUnder(dir);
      git = gitFiles(dir, varsFor(env, envOf(flags)));
    } catch (e) {
      throw fileError("read", shown("."), e);
    }
    const unnamed: string[] = [];
    const files = exportFiles(live, flags.target ?? [], taken, unnamed);
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
    const envVars = repo.config.environments[env.name]?.vars ?? {};
    const varHome = (name: string): VarHome => {
      if (Object.prototype.hasOwnProperty.call(envVars, name)) {
        const raw = envVars[name];
        if (typeof raw === "string" && /\$\{/.test(raw)) {
          return { kind: "shared", environments: [], where: `environments.${env.name}.vars of revsync.yaml takes from ${raw} of the process environment` };
        }
        return { kind: "own" };
      }
      const others = environmentNames(repo).filter(
        (n) => n !== env.name && !Object.prototype.hasOwnProperty.call(repo.config.environments[n]?.vars ?? {}, name),
      );
      return {
        kind: "shared",
        environments: others,
        where: `the process environment sets (environments.${env.name}.vars of revsync.yaml has no entry for it)`,
      };
    };
    // The policies folder is read by every environment of revsync.yaml: what export writes there must not
    // change another environment's plan. A folder --dir names apart from it is this export's alone.
    const inPolicies = !relative(repo.policiesDir, dir).startsWith("..") && !isAbsolute(relative(repo.policiesDir, dir));
    const sharedWith = inPolicies ? environmentNames(repo).filter((n) => n !== env.name) : [];
    const plan = placeExport(files, git, header, readValues, { varHome, sharedWith });
    // Writes stay inside the policy repo, or inside the folder --dir names when that lies outside it
    // (realPathInside, symbolic links followed): a values path of git's own, or a link, that leads out of
    // either is refused, named, and nothing is written through it.
    const dirInRepo = !relative(repo.root, dir).startsWith("..") && !isAbsolute(relative(repo.root, dir));
    const base = dirInRepo ? repo.root : dir;
    const words = { show: (p: string): string => relative(out.io.cwd, p) || ".", folderName: dirInRepo ? "the policy repo" : `the folder ${shown(".")}` };
    const outside = plan.writes.filter((w) => {
      try {
        realPathInside(base, join(dir, w.file), words);
        return false;
      } catch (e) {
        out.error(`${(e as Error).message} (${w.what})`);
        return true;
      }
    });
    // "updated" only when the bytes change: a write of what the file holds already is no write.
    const writes = plan.writes.filter((w) => !outside.includes(w) && readValues(w.file) !== w.text);
    const verb = (w: (typeof writes)[number]): string => (flags.dryRun ? (w.created ? "would write" : "would update") : w.created ? "wrote" : "updated");
    // The schemas are written only when a file export writes names them in its first line (a new file
    // does; a file git holds keeps its own reference, say to a schemas folder of its own).
    const refersToSchemas = (w: (typeof writes)[number]): boolean => {
      const m = /^#\s*yaml-language-server:\s*\$schema=(\S+)/.exec(w.text);
      return !!m && resolve(dirname(join(dir, w.file)), m[1] as string) === schemaFile;
    };
    const needsSchemas = writes.some(refersToSchemas);
    const schemas = needsSchemas ? writeRepoSchemas(repo.root, false, true).written : [];
    const configShown = relative(repo.cwd, repo.configFile) || "revsync.yaml";
    let configText: string | undefined;
    if (plan.vars.length) {
      const before = readFileSync(repo.configFile, "utf8");
      const after = setEnvironmentVars(before, env.name, plan.vars);
      if (after !== before) configText = after;
    }
    if (!flags.dryRun) {
      for (const w of writes) editUserFile(join(dir, w.file), w.text, base, words);
      if (needsSchemas) writeRepoSchemas(repo.root, false);
      if (configText !== undefined) editUserFile(repo.configFile, configText, repo.root, { ...words, folderName: "the policy repo" });
    }
    for (const w of writes) out.out(`${verb(w)} ${shown(w.file)}${w.created && !w.what.startsWith("values") ? "" : ` (${w.what})`}`);
    for (const v of plan.vars) {
      const old = envVars[v.name];
      out.out(
        `${flags.dryRun ? "would set" : "set"} environments.${env.name}.vars.${v.name} in ${configShown}: ${JSON.stringify(old)} -> ${JSON.stringify(v.value)} (${v.what} reads \${${v.name}}, which stays)`,
      );
    }
    for (const f of schemas)
      out.out(`${flags.dryRun ? "would write" : "wrote"} ${relative(repo.cwd, join(repo.root, f)) || f} (the schemas the files' first line refers to)`);
    for (const s of plan.skipped) out.warn(s);
    for (const b of plan.broken) out.error(`${shown(b.file)}:${b.message}`);
    for (const r of plan.refused) out.error(r);
    // Left out of new files only: in a file git holds, a field the service does not show (or shows as a
    // number that is not comparable) keeps git's value.
    const created = new Set(writes.filter((w) => w.created).map((w) => w.what));
    const keptInGit = (l: string): boolean => l.endsWith("(the service shows null)") || l.endsWith(", not comparable)");
    const leftOut = files.flatMap((f) => (created.has(f.address) ? f.leftOut : f.leftOut.filter((l) => !keptInGit(l))));
    if (unnamed.length) {
      out.warn(`not exported, git cannot hold their names (plan shows each as not in git; rename it in the service to manage it):\n  ${unnamed.join("\n  ")}`);
    }
    if (leftOut.length) {
      out.warn(`left out of the files (each is named in a comment in its file; a field left out keeps its live value):\n  ${leftOut.join("\n  ")}`);
    }
    for (const n of unknownNotes(plan.unknown)) out.out(`Note: ${n}`);
    const gitOnly = plan.gitOnly.filter((g) => targeted(g.address, flags.target ?? []));
    if (gitOnly.length) {
      out.warn(
        `git has files for what the service does not hold, left as they are (plan shows each):\n  ${gitOnly.map((g) => `${g.address} (${shown(g.file)})`).join("\n  ")}`,
      );
    }
    const failed = plan.broken.length + plan.refused.length + outside.length;
    const failures = [
      plan.broken.length ? plural(plan.broken.length, "file with a YAML error", "files with YAML errors") : "",
      plan.refused.length ? plural(plan.refused.length, "difference another environment would see", "differences other environments would see") : "",
      outside.length ? plural(outside.length, "file outside the folder", "files outside the folder") : "",
    ].filter(Boolean);
    const newFiles = writes.filter((w) => w.created).length;
    const updated = writes.length - newFiles;
    const total = writes.length + schemas.length + (configText !== undefined ? 1 : 0);
    if (!total && !failed) {
      const caveat = plan.unknown.size
        ? `, in every field the service shows (${plural([...plan.unknown.values()].flat().length, "field")} it does not show kept as git has ${[...plan.unknown.values()].flat().length === 1 ? "it" : "them"})`
        : "";
      out.out(`Nothing to export: git's files already hold what the service holds${caveat}.`);
    } else if (!total) out.out("Nothing was exported: see the errors above.");
    if (flags.dryRun && total) {
      out.out(
        `\nDry run: ${plural(total, "file")} would be written (${newFiles} new, ${updated} updated${schemas.length ? `, ${schemas.length} schemas` : ""}${configText !== undefined ? `, ${configShown}` : ""}); nothing was written.`,
      );
    }
    if (failed) {
      out.error(
        `export left ${failures.join(", ")} as ${failed === 1 ? "it was" : "they were"} (listed above)${total && !flags.dryRun ? "; the rest was written" : ""}`,
      );
      return 1;
    }
    return 0;
  } finally {
    await core.close();
  }
}
