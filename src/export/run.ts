/** revsync export's use case, one environment: the service's state read, placed into the files the
 *  folder holds (in-place.ts), each write checked, then written (unless a dry run), values files first.
 *  It prints nothing: what it wrote, left and could not do is its answer (src/report/export.ts words it). */
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { environmentNames, varsFor, type Repo, type ResolvedEnv } from "../config/repo.js";
import type { DesiredState, Registry } from "../kinds/kind.js";
import { nothingInGit, type LiveState, type ReadOptions } from "../live/read.js";
import { checkTargets } from "../plan/targets.js";
import { POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import { editUserFile, fileError, READ_CAPS, readUserFile } from "../user-files.js";
import { setEnvironmentVars } from "./config-vars.js";
import { checkWrites, filesUnder, gitFiles, posixOf, varHome, writeAll, type ExportFolder } from "./folder.js";
import { placeExport, valuesNamedIn, type ExportPlan, type ExportWrite, type GitFile } from "./in-place.js";
import { exportFiles, type ExportedFile } from "./mapping.js";

/** Reads the service's state for git's (here: nothing in git), as the command reads it (its progress
 *  line, its concurrency and targets). */
export type ReadLive = (desired: DesiredState, options: Omit<ReadOptions, "concurrency" | "targets">) => Promise<LiveState>;

/** One export, as the command asks for it. */
export interface ExportRequest {
  repo: Repo;
  env: ResolvedEnv;
  folder: ExportFolder;
  /** --target: what export reads and writes. */
  targets: string[];
  dryRun: boolean;
  /** The process environment a policy file's variables may read (through revsync.yaml). */
  processEnv: NodeJS.ProcessEnv;
  kinds: Registry;
  read: ReadLive;
}

/** The one export's working state: the request, and the policy files of the folder it could not read
 *  (a link out of it, say), each with why. */
interface Ctx extends ExportRequest {
  unreadable: string[];
  /** The writes refused before any is made, each said. */
  errors: string[];
}

/** The service's state as files placed into the folder's (export/in-place.ts), with the entries git
 *  cannot hold the names of. The policies folder is read by every environment of revsync.yaml: what
 *  export writes there must not change another environment's plan; a folder --dir names apart from it
 *  is this export's alone. */
async function exportPlan(ctx: Ctx): Promise<{ plan: ExportPlan; files: ExportedFile[]; unnamed: string[]; heldTwice: string[] }> {
  const { repo, env, kinds, targets } = ctx;
  const { dir } = ctx.folder;
  // Every batch's values too: export keeps them in git beside the policy file.
  const live = await ctx.read(nothingInGit(kinds), { allDetails: true, allValues: true });
  checkTargets(targets, nothingInGit(kinds), live, kinds);
  let taken: Set<string>;
  let git: GitFile[];
  try {
    git = gitFiles(dir, varsFor(env, ctx.processEnv), ctx.folder.inside, ctx.unreadable, { repo, environment: env.name, kinds });
    // A values file a policy file names is taken even before it is there.
    taken = new Set([...filesUnder(dir), ...valuesNamedIn(git)]);
  } catch (e) {
    throw fileError("read", ctx.folder.shown("."), e);
  }
  const unnamed: string[] = [];
  const heldTwice: string[] = [];
  const files = exportFiles(live, targets, taken, unnamed, kinds, heldTwice);
  const schemaFile = join(repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
  const header = (file: string): string[] => [
    `yaml-language-server: $schema=${posixOf(relative(dirname(join(dir, file)), schemaFile))}`,
    `Exported by revsync from environment ${env.name}.`,
  ];
  const inPolicies = !relative(repo.policiesDir, dir).startsWith("..") && !isAbsolute(relative(repo.policiesDir, dir));
  const sharedWith = inPolicies ? environmentNames(repo).filter((n) => n !== env.name) : [];
  return {
    plan: placeExport(files, git, header, ctx.folder.readValues, { varHome: varHome(repo, env.name), sharedWith, taken, kinds }),
    files,
    unnamed,
    heldTwice,
  };
}

/** What export writes: the files that change (a write of what a file holds already is no write) that
 *  pass checkWrites, the schemas a written file's first line refers to, and revsync.yaml where a
 *  variable takes a new value. */
function whatToWrite(ctx: Ctx, plan: ExportPlan) {
  const { repo, env } = ctx;
  const { dir, shown, readValues } = ctx.folder;
  const { folder: base, words } = ctx.folder.inside;
  const { outside, unwritable, heldBack } = checkWrites(ctx.folder, plan, ctx.errors);
  // A policy file export could not read may hold any policy: a new file beside it could be its second.
  if (ctx.unreadable.length)
    for (const w of plan.writes.filter((x) => x.created && x.group !== undefined && !heldBack.includes(x))) {
      if (w.file === w.group)
        ctx.errors.push(`${shown(w.file)} not written (${w.what}): a policy file of the folder could not be read (above), and it may hold this policy`);
      heldBack.push(w);
    }
  const left = new Set([...outside, ...unwritable, ...heldBack]);
  const writes = plan.writes.filter((w) => !left.has(w) && readValues(w.file) !== w.text);
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

/** What an export did: its plan (what it placed, refused, left), the writes, the schemas, what it could
 *  not do, and where a write failed (a full disk), what was written before it. */
export interface Exported {
  plan: ExportPlan;
  files: ExportedFile[];
  unnamed: string[];
  heldTwice: string[];
  unreadable: string[];
  /** The writes refused before any was made, each said. */
  errors: string[];
  w: WhatToWrite;
  /** The schemas written (or, dry, that would be), by their path in the repo. */
  schemas: string[];
  stopped?: { written: ExportWrite[]; error: Error };
  /** How many things export left as they were for a problem: any makes the export fail. */
  failed: number;
}

export type WhatToWrite = ReturnType<typeof whatToWrite>;

/** revsync export: the service's policies as policy files. Into a folder that holds policy files
 *  already, each policy's file (found by metadata.name, whatever its name) is updated in place, keeping
 *  its comments; a file is created only for a policy git lacks. A dry run writes nothing. */
export async function exportEnvironment(request: ExportRequest): Promise<Exported> {
  const ctx: Ctx = { ...request, unreadable: [], errors: [] };
  const { repo } = ctx;
  const x = await exportPlan(ctx);
  const w = whatToWrite(ctx, x.plan);
  const schemas = w.needsSchemas ? writeRepoSchemas(repo.root, false, true).written : [];
  const failed =
    x.plan.broken.length +
    x.plan.refused.length +
    x.plan.skipped.length +
    w.outside.length +
    w.unwritable.length +
    w.heldBack.length +
    x.heldTwice.length +
    ctx.unreadable.length;
  const done = { ...x, unreadable: ctx.unreadable, errors: ctx.errors, w, schemas, failed };
  if (request.dryRun) return done;
  const stopped = writeAll(ctx.folder, w);
  if (stopped) return { ...done, stopped };
  if (w.needsSchemas) writeRepoSchemas(repo.root, false);
  if (w.configText !== undefined) editUserFile(repo.configFile, w.configText, repo.root, { ...w.words, folderName: "the policy repo" });
  return done;
}
