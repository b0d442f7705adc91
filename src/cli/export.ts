import { existsSync, readdirSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ApiCore } from "../api/core.js";
import { environmentNames, varsFor, type Repo, type ResolvedEnv } from "../config/repo.js";
import { listYamlFiles } from "../config/walk.js";
import { readYamlText, type VarSource } from "../config/yaml-source.js";
import { keepInScope } from "../config/scope.js";
import type { Registry } from "../kinds/kind.js";
import { setEnvironmentVars } from "../export/config-vars.js";
import { placeExport, valuesNamedIn, type ExportPlan, type ExportWrite, type GitFile, type VarHome } from "../export/in-place.js";
import { exportFiles, type ExportedFile } from "../export/mapping.js";
import { nothingInGit } from "../live/read.js";
import { checkTargets } from "../plan/targets.js";
import { unknownNotes } from "../shared/unknown.js";
import { POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import { targeted } from "../shared/address.js";
import { editUserFile, fileError, PathOutside, READ_CAPS, readUserFile, realPathInside, type PathWords } from "../user-files.js";
import { plural } from "../words.js";
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

export const posixOf = (p: string): string => p.split(sep).join("/");

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
function gitFiles(
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

/** One export, as the command wires it. */
export interface Ctx {
  flags: ExportFlags;
  out: Output;
  repo: Repo;
  env: ResolvedEnv;
  /** The folder written to, absolute. */
  dir: string;
  /** A path of the folder as the user is shown it. */
  shown: (file: string) => string;
  /** The folder files are read and written inside: the policy repo, or the --dir folder outside it. */
  inside: { folder: string; words: PathWords };
  readValues: (file: string) => string | undefined;
  /** Policy files of the folder export could not read, each with why (a link out of it, say). */
  unreadable: string[];
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

/** The service's state as files placed into the folder's (export/in-place.ts), with the entries git
 *  cannot hold the names of. The policies folder is read by every environment of revsync.yaml: what
 *  export writes there must not change another environment's plan; a folder --dir names apart from it
 *  is this export's alone. */
async function exportPlan(ctx: Ctx, core: ApiCore): Promise<{ plan: ExportPlan; files: ExportedFile[]; unnamed: string[]; heldTwice: string[] }> {
  const { flags, out, repo, env, dir } = ctx;
  // Every batch's values too: export keeps them in git beside the policy file.
  const kinds = kindsOf(out.io);
  const live = await readWithProgress(core, nothingInGit(kinds), flags, out, { allDetails: true, allValues: true });
  checkTargets(flags.target ?? [], nothingInGit(kinds), live, kinds);
  let taken: Set<string>;
  let git: GitFile[];
  try {
    git = gitFiles(dir, varsFor(env, envOf(flags)), ctx.inside, ctx.unreadable, { repo, environment: env.name, kinds });
    // A values file a policy file names is taken even before it is there.
    taken = new Set([...filesUnder(dir), ...valuesNamedIn(git)]);
  } catch (e) {
    throw fileError("read", ctx.shown("."), e);
  }
  const unnamed: string[] = [];
  const heldTwice: string[] = [];
  const files = exportFiles(live, flags.target ?? [], taken, unnamed, kinds, heldTwice);
  const schemaFile = join(repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
  const header = (file: string): string[] => [
    `yaml-language-server: $schema=${posixOf(relative(dirname(join(dir, file)), schemaFile))}`,
    `Exported by revsync from environment ${env.name}.`,
  ];
  const inPolicies = !relative(repo.policiesDir, dir).startsWith("..") && !isAbsolute(relative(repo.policiesDir, dir));
  const sharedWith = inPolicies ? environmentNames(repo).filter((n) => n !== env.name) : [];
  return { plan: placeExport(files, git, header, ctx.readValues, { varHome: varHome(repo, env.name), sharedWith, taken, kinds }), files, unnamed, heldTwice };
}

/** Every write checked before any is made: where it lies (realPathInside, links followed: none outside
 *  the policy repo or the folder --dir names when that lies outside it) and whether its name and path
 *  fit the file system. One that fails is named and not written, and holds back the writes of its group
 *  (a policy file and the new values files it names), so that no file names a file that is not there. */
export function checkWrites(
  ctx: Pick<Ctx, "out" | "dir" | "inside" | "shown">,
  plan: ExportPlan,
): { outside: ExportPlan["writes"]; unwritable: ExportPlan["writes"]; heldBack: ExportPlan["writes"] } {
  const { out, dir } = ctx;
  const { folder: base, words } = ctx.inside;
  const outside: ExportPlan["writes"] = [];
  const unwritable: ExportPlan["writes"] = [];
  for (const w of plan.writes) {
    try {
      realPathInside(base, join(dir, w.file), words);
    } catch (e) {
      const message = (e as Error).message;
      out.error(`${message} (${w.what})`);
      (e instanceof PathOutside ? outside : unwritable).push(w);
    }
  }
  const failed = [...outside, ...unwritable];
  const heldBack: ExportPlan["writes"] = [];
  for (const w of plan.writes) {
    const cause = w.group === undefined || failed.includes(w) ? undefined : failed.find((f) => f.group === w.group);
    if (!cause) continue;
    out.error(`${ctx.shown(w.file)} not written (${w.what}): it goes with ${ctx.shown(cause.file)}, which cannot be written`);
    heldBack.push(w);
  }
  return { outside, unwritable, heldBack };
}

/** What export writes: the files that change (a write of what a file holds already is no write) that
 *  pass checkWrites, the schemas a written file's first line refers to, and revsync.yaml where a
 *  variable takes a new value. */
function whatToWrite(ctx: Ctx, plan: ExportPlan) {
  const { repo, env, dir } = ctx;
  const { folder: base, words } = ctx.inside;
  const { outside, unwritable, heldBack } = checkWrites(ctx, plan);
  // A policy file export could not read may hold any policy: a new file beside it could be its second.
  if (ctx.unreadable.length)
    for (const w of plan.writes.filter((x) => x.created && x.group !== undefined && !heldBack.includes(x))) {
      if (w.file === w.group)
        ctx.out.error(`${ctx.shown(w.file)} not written (${w.what}): a policy file of the folder could not be read (above), and it may hold this policy`);
      heldBack.push(w);
    }
  const left = new Set([...outside, ...unwritable, ...heldBack]);
  const writes = plan.writes.filter((w) => !left.has(w) && ctx.readValues(w.file) !== w.text);
  // The schemas are written only when a file export writes names them in its first line (a new file
  // does; a file git holds keeps its own reference, say to a schemas folder of its own).
  const schemaFile = join(repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
  const needsSchemas = writes.some((w) => {
    const m = /^#\s*yaml-language-server:\s*\$schema=(\S+)/.exec(w.text);
    return !!m && resolve(dirname(join(dir, w.file)), m[1] as string) === schemaFile;
  });
  let configText: string | undefined;
  if (plan.vars.length) {
    const before = readUserFile(repo.configFile, READ_CAPS.text);
    const after = setEnvironmentVars(before, env.name, plan.vars);
    if (after !== before) configText = after;
  }
  return { writes, outside, unwritable, heldBack, needsSchemas, configText, base, words };
}

/** The lines of what was (or, with --dry-run, would be) written. */
function reportWrites(ctx: Ctx, plan: ExportPlan, w: ReturnType<typeof whatToWrite>, schemas: string[]): void {
  const { flags, out, repo, env } = ctx;
  const dry = !!flags.dryRun;
  for (const x of w.writes)
    out.out(
      `${dry ? (x.created ? "would write" : "would update") : x.created ? "wrote" : "updated"} ${ctx.shown(x.file)}${x.created && !x.what.startsWith("values") ? "" : ` (${x.what})`}`,
    );
  const envVars = repo.config.environments[env.name]?.vars ?? {};
  const configShown = relative(repo.cwd, repo.configFile) || "revsync.yaml";
  for (const v of plan.vars) {
    out.out(
      `${dry ? "would set" : "set"} environments.${env.name}.vars.${v.name} in ${configShown}: ${JSON.stringify(envVars[v.name])} -> ${JSON.stringify(v.value)} (${v.what} reads \${${v.name}}, which stays)`,
    );
  }
  for (const f of schemas)
    out.out(`${dry ? "would write" : "wrote"} ${relative(repo.cwd, join(repo.root, f)) || f} (the schemas the files' first line refers to)`);
}

/** What export left as it was, and why: files it could not update, differences another environment
 *  would see, what git cannot hold, what the service does not show, what git holds alone. */
function reportLeft(ctx: Ctx, x: Awaited<ReturnType<typeof exportPlan>>, created: Set<string>): void {
  const { out, flags } = ctx;
  const { plan, files, unnamed } = x;
  for (const s of plan.skipped) out.error(s);
  for (const b of plan.broken) out.error(`${ctx.shown(b.file)}:${b.message}`);
  for (const r of plan.refused) out.error(r.message);
  for (const r of x.heldTwice) out.error(r);
  for (const u of ctx.unreadable) out.error(`${u}: export neither updates it nor writes a policy file beside it that it may already hold`);
  // Left out of new files only: in a file git holds, a field the service does not show (or shows as a
  // number that is not comparable) keeps git's value.
  const keptInGit = (l: string): boolean => l.endsWith("(the service shows null)") || l.endsWith(", not comparable)");
  const leftOut = files.flatMap((f) => (created.has(f.address) ? f.leftOut : f.leftOut.filter((l) => !keptInGit(l))));
  if (unnamed.length)
    out.warn(`not exported, git cannot hold their names (plan shows each as not in git; rename it in the service to manage it):\n  ${unnamed.join("\n  ")}`);
  if (leftOut.length)
    out.warn(`left out of the files (each is named in a comment in its file; a field left out keeps its live value):\n  ${leftOut.join("\n  ")}`);
  for (const n of unknownNotes(plan.unknown)) out.out(`Note: ${n}`);
  const gitOnly = plan.gitOnly.filter((g) => targeted(g.address, flags.target ?? []));
  if (gitOnly.length) {
    out.warn(
      `git has files for what the service does not hold, left as they are (plan shows each):\n  ${gitOnly.map((g) => `${g.address} (${ctx.shown(g.file)})`).join("\n  ")}`,
    );
  }
}

/** Why export left differences as they were, counted by reason: the words of its closing line. */
export function refusalWords(refused: ExportPlan["refused"]): string[] {
  const n = (because: string): number => refused.filter((r) => r.because === because).length;
  const words = [
    ["shared", "difference another environment would see", "differences other environments would see"],
    ["process", "value that comes from a process variable", "values that come from process variables"],
    ["variable", "value that comes from variables export cannot set", "values that come from variables export cannot set"],
  ] as const;
  return words.filter(([b]) => n(b) > 0).map(([b, one, many]) => plural(n(b), one, many));
}

/** The closing lines, and the exit code: 1 when anything was left as it was for a problem. */
function closing(ctx: Ctx, plan: ExportPlan, w: ReturnType<typeof whatToWrite>, schemas: string[], heldTwice: readonly string[]): number {
  const { out, flags, repo } = ctx;
  // A policy export could not compare (a file it cannot read with this environment's variables) is not
  // "already held": it is a failure, said, and never "Nothing to export".
  const failed =
    plan.broken.length +
    plan.refused.length +
    plan.skipped.length +
    w.outside.length +
    w.unwritable.length +
    w.heldBack.length +
    heldTwice.length +
    ctx.unreadable.length;
  const newFiles = w.writes.filter((x) => x.created).length;
  const total = w.writes.length + schemas.length + (w.configText !== undefined ? 1 : 0);
  if (!total && !failed) {
    const unknown = [...plan.unknown.values()].flat().length;
    const caveat = unknown
      ? `, in every field the service shows (${plural(unknown, "field")} it does not show kept as git has ${unknown === 1 ? "it" : "them"})`
      : "";
    out.out(`Nothing to export: git's files already hold what the service holds${caveat}.`);
  } else if (!total) out.out("Nothing was exported: see the errors above.");
  if (flags.dryRun && total) {
    const configShown = relative(repo.cwd, repo.configFile) || "revsync.yaml";
    const parts = `${newFiles} new, ${w.writes.length - newFiles} updated${schemas.length ? `, ${schemas.length} schemas` : ""}${w.configText !== undefined ? `, ${configShown}` : ""}`;
    out.out(`\nDry run: ${plural(total, "file")} would be written (${parts}); nothing was written.`);
  }
  if (!failed) return 0;
  const failures = [
    plan.broken.length ? plural(plan.broken.length, "file with a YAML error", "files with YAML errors") : "",
    plan.skipped.length ? plural(plan.skipped.length, "policy it could not compare", "policies it could not compare") : "",
    ...refusalWords(plan.refused),
    w.outside.length ? plural(w.outside.length, "file outside the folder", "files outside the folder") : "",
    w.unwritable.length ? plural(w.unwritable.length, "file that cannot be written", "files that cannot be written") : "",
    w.heldBack.length ? plural(w.heldBack.length, "file held back with them", "files held back with them") : "",
    heldTwice.length ? plural(heldTwice.length, "copy of a name the service holds twice", "copies of names the service holds twice") : "",
    ctx.unreadable.length ? plural(ctx.unreadable.length, "policy file it could not read", "policy files it could not read") : "",
  ].filter(Boolean);
  out.error(
    `export left ${failures.join(", ")} as ${failed === 1 ? "it was" : "they were"} (listed above)${total && !flags.dryRun ? "; the rest was written" : ""}`,
  );
  return 1;
}

/** Writes the files, values files first (so that a policy file never names one not yet written); a
 *  failure (a full disk) stops, saying what was written before it. */
export function writeAll(
  ctx: Pick<Ctx, "dir">,
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

/** The folder export writes into (--dir, else the policies folder), the folder it reads and writes
 *  inside (the policy repo, or --dir's folder outside it), how a path of it is shown, and how a values
 *  file of it is read (undefined when it cannot be). */
export function exportFolder(flags: ExportFlags, out: Output, repo: Repo): Pick<Ctx, "dir" | "shown" | "inside" | "readValues"> {
  const dir = resolve(out.io.cwd, flags.dir ?? repo.policiesDir);
  const dirInRepo = !relative(repo.root, dir).startsWith("..") && !isAbsolute(relative(repo.root, dir));
  const inside = {
    folder: dirInRepo ? repo.root : dir,
    words: {
      show: (p: string): string => relative(out.io.cwd, p) || ".",
      folderName: dirInRepo ? "the policy repo" : `the folder ${relative(out.io.cwd, dir) || "."}`,
    },
  };
  const readValues = (file: string): string | undefined => {
    try {
      return readUserFile(join(dir, file), READ_CAPS.values, inside);
    } catch {
      return undefined;
    }
  };
  return { dir, inside, readValues, shown: (file) => relative(out.io.cwd, join(dir, file)) || file };
}

/** revsync export: the service's policies as policy files. Into a folder that holds policy files
 *  already, each policy's file (found by metadata.name, whatever its name) is updated in place, keeping
 *  its comments; a file is created only for a policy git lacks. --dry-run says what it would write. */
export async function runExport(flags: ExportFlags, out: Output): Promise<number> {
  const repo = openRepo(flags);
  const env = openEnv(repo, flags);
  const core = openClient(env, flags, out);
  const ctx: Ctx = { flags, out, repo, env, ...exportFolder(flags, out, repo), unreadable: [] };
  try {
    const x = await exportPlan(ctx, core);
    const w = whatToWrite(ctx, x.plan);
    const schemas = w.needsSchemas ? writeRepoSchemas(repo.root, false, true).written : [];
    if (!flags.dryRun) {
      const stopped = writeAll(ctx, w);
      if (stopped) {
        // Every file written before the failure is reported, and plan shows what is left.
        reportWrites(ctx, { ...x.plan, vars: [] }, { ...w, writes: stopped.written }, []);
        out.error(
          `export stopped: ${stopped.error.message}; ${plural(stopped.written.length, "file was", "files were")} written (listed above): run export again, or plan to see what is left`,
        );
        return 1;
      }
      if (w.needsSchemas) writeRepoSchemas(repo.root, false);
      if (w.configText !== undefined) editUserFile(repo.configFile, w.configText, repo.root, { ...w.words, folderName: "the policy repo" });
    }
    reportWrites(ctx, x.plan, w, schemas);
    reportLeft(ctx, x, new Set(w.writes.filter((f) => f.created).map((f) => f.what)));
    return closing(ctx, x.plan, w, schemas, x.heldTwice);
  } finally {
    await core.close();
  }
}
