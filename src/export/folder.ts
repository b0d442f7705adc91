/** The folder an export reads and writes: where it lies and inside which folder its files must stay, its
 *  policy files as an environment reads them, the names a new file must not take, where a `${NAME}` takes
 *  its value, and the writes, each checked before any is made, values files first. What `revsync export`
 *  (run.ts) and `export --all-envs` (run-all-envs.ts) share. */
import { existsSync, readdirSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { environmentNames, type Repo } from "../config/repo.js";
import { listYamlFiles } from "../config/walk.js";
import { readYamlText, type VarSource } from "../config/yaml-source.js";
import { keepInScope } from "../config/scope.js";
import type { Registry } from "../kinds/kind.js";
import { editUserFile, PathOutside, READ_CAPS, readUserFile, realPathInside, type PathWords } from "../user-files.js";
import type { ExportPlan, ExportWrite, GitFile, VarHome } from "./in-place.js";

export const posixOf = (p: string): string => p.split(sep).join("/");

/** The folder export writes into, as the command wires it. */
export interface ExportFolder {
  /** The folder written to, absolute. */
  dir: string;
  /** A path of the folder as the user is shown it. */
  shown: (file: string) => string;
  /** The folder files are read and written inside: the policy repo, or the --dir folder outside it. */
  inside: { folder: string; words: PathWords };
  readValues: (file: string) => string | undefined;
}

/** The folder export writes into (`dirFlag`, else the policies folder), the folder it reads and writes
 *  inside (the policy repo, or that folder outside it), how a path of it is shown (from `cwd`), and how a
 *  values file of it is read (undefined when it cannot be). */
export function exportFolder(cwd: string, dirFlag: string | undefined, repo: Repo): ExportFolder {
  const dir = resolve(cwd, dirFlag ?? repo.policiesDir);
  const dirInRepo = !relative(repo.root, dir).startsWith("..") && !isAbsolute(relative(repo.root, dir));
  const inside = {
    folder: dirInRepo ? repo.root : dir,
    words: {
      show: (p: string): string => relative(cwd, p) || ".",
      folderName: dirInRepo ? "the policy repo" : `the folder ${relative(cwd, dir) || "."}`,
    },
  };
  const readValues = (file: string): string | undefined => {
    try {
      return readUserFile(join(dir, file), READ_CAPS.values, inside);
    } catch {
      return undefined;
    }
  };
  return { dir, inside, readValues, shown: (file) => relative(cwd, join(dir, file)) || file };
}

/** Every file below dir (relative, / separators), dot-folders aside: names a new file must not take. */
export function filesUnder(dir: string): Set<string> {
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

/** One policy file of the export folder as an environment reads it: each document's value with its
 *  variables (undefined where one cannot be filled), its documents and batches of other environments
 *  not its own (config/scope.ts: a batch of others is null in its place). */
export function gitFileAs(file: string, text: string, vars: VarSource, repo: Repo, environment: string, kinds: Registry): GitFile {
  const values: unknown[] = [];
  const dropped = new Set<number>();
  const scopedLists = (fileKind: string): readonly string[] => kinds.find((k) => k.fileKind === fileKind)?.scopedLists ?? [];
  const keep = keepInScope({ environment, known: environmentNames(repo), scopedLists, file, diagnostics: [], keepPlaces: true, dropped });
  for (const src of readYamlText(text, file, [], vars, keep)) if (!src.unresolved?.size) values[src.index] = src.value;
  return { file, text, values, outOfScope: dropped };
}

/** The policy files the folder holds, as the environment reads them (gitFileAs); only files that really
 *  lie inside `inside` (links followed), regular files within the cap. A file that cannot be read (a
 *  link out of the folder, a FIFO, one over the cap) goes to `unreadable`, with why: export does not
 *  write over what it cannot read, nor beside it (it may hold any policy). */
export function gitFiles(
  dir: string,
  vars: VarSource,
  inside: { folder: string; words?: PathWords },
  unreadable: string[],
  at: { repo: Repo; environment: string; kinds: Registry },
): GitFile[] {
  if (!existsSync(dir)) return [];
  return listYamlFiles(dir).flatMap((abs): GitFile[] => {
    let text: string;
    try {
      text = readUserFile(abs, READ_CAPS.text, inside);
    } catch (e) {
      unreadable.push(e instanceof Error ? e.message : String(e));
      return [];
    }
    return [gitFileAs(posixOf(relative(dir, abs)), text, vars, at.repo, at.environment, at.kinds)];
  });
}

/** Where a `${NAME}` of a policy file takes its value in an environment: its own `vars:` entry (export
 *  may write it; `added`: entries this export adds), or somewhere other environments read too. */
export function varHome(repo: Repo, envName: string, added: ReadonlySet<string> = new Set()): (name: string) => VarHome {
  const env = { name: envName };
  const envVars = repo.config.environments[env.name]?.vars ?? {};
  return (name) => {
    if (added.has(name)) return { kind: "own" };
    if (Object.prototype.hasOwnProperty.call(envVars, name)) {
      const raw = envVars[name];
      if (typeof raw === "string" && /\$\{/.test(raw)) {
        return { kind: "shared", environments: [], where: `environments.${env.name}.vars of revsync.yaml takes from ${raw} of the process environment` };
      }
      return { kind: "own" };
    }
    const others = environmentNames(repo).filter((n) => n !== env.name && !Object.prototype.hasOwnProperty.call(repo.config.environments[n]?.vars ?? {}, name));
    return { kind: "shared", environments: others, where: `the process environment sets (environments.${env.name}.vars of revsync.yaml has no entry for it)` };
  };
}

/** Every write checked before any is made: where it lies (realPathInside, links followed: none outside
 *  the policy repo or the folder --dir names when that lies outside it) and whether its name and path
 *  fit the file system. One that fails is named (in `errors`) and not written, and holds back the writes of its group
 *  (a policy file and the new values files it names), so that no file names a file that is not there. */
export function checkWrites(
  ctx: Pick<ExportFolder, "dir" | "inside" | "shown">,
  plan: Pick<ExportPlan, "writes">,
  errors: string[],
): { outside: ExportPlan["writes"]; unwritable: ExportPlan["writes"]; heldBack: ExportPlan["writes"] } {
  const { dir } = ctx;
  const { folder: base, words } = ctx.inside;
  const outside: ExportPlan["writes"] = [];
  const unwritable: ExportPlan["writes"] = [];
  for (const w of plan.writes) {
    try {
      realPathInside(base, join(dir, w.file), words);
    } catch (e) {
      const message = (e as Error).message;
      errors.push(`${message} (${w.what})`);
      (e instanceof PathOutside ? outside : unwritable).push(w);
    }
  }
  const failed = [...outside, ...unwritable];
  const heldBack: ExportPlan["writes"] = [];
  for (const w of plan.writes) {
    const cause = w.group === undefined || failed.includes(w) ? undefined : failed.find((f) => f.group === w.group);
    if (!cause) continue;
    errors.push(`${ctx.shown(w.file)} not written (${w.what}): it goes with ${ctx.shown(cause.file)}, which cannot be written`);
    heldBack.push(w);
  }
  return { outside, unwritable, heldBack };
}

/** Writes the files, values files first (so that a policy file never names one not yet written); a
 *  failure (a full disk) stops, saying what was written before it. */
export function writeAll(
  ctx: Pick<ExportFolder, "dir">,
  w: { writes: ExportWrite[]; base: string; words: PathWords },
): { written: ExportWrite[]; error: Error } | undefined {
  const written: ExportWrite[] = [];
  const order = [...w.writes.filter((f) => f.file.endsWith(".csv")), ...w.writes.filter((f) => !f.file.endsWith(".csv"))];
  try {
    for (const f of order) {
      editUserFile(join(ctx.dir, f.file), f.text, w.base, w.words);
      written.push(f);
    }
  } catch (e) {
    return { written, error: e as Error };
  }
  return undefined;
}
