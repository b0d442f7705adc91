/** revsync export --all-envs's use case: every environment of revsync.yaml read with its own
 *  credentials, and adopted into one set of policy files (all-envs.ts: what is merged and how; in files
 *  git holds, all-envs-in-place.ts, then each environment's own placement, in-place.ts). Nothing is
 *  written until every environment has been read and placed, in memory, one after another. It prints
 *  nothing: src/report/export.ts words what it did. */
import { join, relative } from "node:path";
import { parseAllDocuments, type Document } from "yaml";
import { varsFor, type Repo, type ResolvedEnv } from "../config/repo.js";
import { listYamlFiles } from "../config/walk.js";
import { kindOfFile } from "../kinds/registry.js";
import type { DesiredState, Registry } from "../kinds/kind.js";
import { nothingInGit, type LiveState, type ReadOptions } from "../live/read.js";
import { checkTargets } from "../plan/targets.js";
import { POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import type { Unknown } from "../shared/unknown.js";
import { targeted } from "../shared/address.js";
import { editUserFile, fileError, READ_CAPS, readUserFile } from "../user-files.js";
import { mergeExports, renderMerged, VarNamer, type Holding, type MergedDoc } from "./all-envs.js";
import { prepareAddress, type GitDocRef, type Prepared } from "./all-envs-in-place.js";
import { setEnvironmentVars } from "./config-vars.js";
import { checkWrites, filesUnder, gitFileAs, posixOf, varHome, writeAll, type ExportFolder } from "./folder.js";
import { placeExport, rewrite, type ExportPlan, type ExportWrite, type FileEdits } from "./in-place.js";
import { exportFiles, type ExportedFile } from "./mapping.js";

/** Opens one environment, reads the service's state for git's (here: nothing in git) as the command
 *  reads it, each with its own sign-in, and closes it. */
export type ReadEnvironment = (
  name: string,
  desired: DesiredState,
  options: Omit<ReadOptions, "concurrency" | "targets">,
) => Promise<{ env: ResolvedEnv; live: LiveState }>;

/** An export of every environment, as the command asks for it. */
export interface ExportAllRequest {
  repo: Repo;
  /** The environments, in the order of revsync.yaml, each checked. */
  names: string[];
  folder: ExportFolder;
  targets: string[];
  dryRun: boolean;
  kinds: Registry;
  read: ReadEnvironment;
}

/** One environment as export read it. */
interface EnvRead {
  env: ResolvedEnv;
  files: ExportedFile[];
  unnamed: string[];
  /** Names the service holds more than once: refused, each named (never exported). */
  heldTwice: string[];
}

/** What an export of every environment left as it was, and why. */
export interface AllEnvsProblems {
  skipped: string[];
  broken: string[];
  refused: ExportPlan["refused"];
  gitOnly: string[];
  unknown: Unknown;
  leftOut: string[];
  unnamed: string[];
  /** Failures besides: names the service holds twice, policy files that cannot be read. */
  failed: string[];
}

/** The export folder in memory while every environment is placed into it: each file as it stands now,
 *  what wrote it, and the vars each environment takes. */
interface State {
  ctx: ExportFolder;
  repo: Repo;
  /** The resource kinds of the run (the registry, unless a test gives others). */
  kinds: Registry;
  /** --target: what export reads and writes. */
  targets: string[];
  reads: EnvRead[];
  overlay: Map<string, string>;
  whats: Map<string, string[]>;
  groups: Map<string, string>;
  namer: VarNamer;
  envVars: Map<string, { name: string; value: unknown; what: string }[]>;
  problems: AllEnvsProblems;
}

const onDisk = (s: State, file: string): string | undefined => {
  try {
    return readUserFile(join(s.ctx.dir, file), file.endsWith(".csv") ? READ_CAPS.values : READ_CAPS.text, s.ctx.inside);
  } catch {
    return undefined;
  }
};
const textOf = (s: State, file: string): string | undefined => s.overlay.get(file) ?? onDisk(s, file);

function put(s: State, file: string, text: string, what: string, group?: string): void {
  s.overlay.set(file, text);
  s.whats.set(file, [...(s.whats.get(file) ?? []), what]);
  if (group !== undefined && !s.groups.has(file)) s.groups.set(file, group);
}

/** Every environment read, one after another, each with its own sign-in; a target must name something
 *  in at least one of them. */
async function readAll(req: ExportAllRequest, taken: ReadonlySet<string>): Promise<EnvRead[]> {
  const { kinds, targets } = req;
  const reads: EnvRead[] = [];
  let unknownTarget: unknown;
  let matched = false;
  for (const name of req.names) {
    const { env, live } = await req.read(name, nothingInGit(kinds), { allDetails: true, allValues: true });
    try {
      checkTargets(targets, nothingInGit(kinds), live, kinds);
      matched = true;
    } catch (e) {
      unknownTarget ??= e;
    }
    const unnamed: string[] = [];
    const heldTwice: string[] = [];
    reads.push({ env, files: exportFiles(live, targets, taken, unnamed, kinds, heldTwice), unnamed, heldTwice });
  }
  if (!matched && unknownTarget) throw unknownTarget;
  return reads;
}

/** git's documents of the export folder, by the address they name (as written: a name is text). */
function gitDocs(s: State, files: string[]): { byAddress: Map<string, GitDocRef[]>; broken: Map<string, string> } {
  const byAddress = new Map<string, GitDocRef[]>();
  const broken = new Map<string, string>();
  for (const file of files) {
    const text = textOf(s, file) ?? "";
    const docs = parseAllDocuments(text);
    if (!Array.isArray(docs)) continue;
    if (docs.some((d) => d.errors.length)) {
      broken.set(file, text);
      continue;
    }
    const edits: FileEdits = { splices: [], structural: false };
    const all = docs as Document[];
    docs.forEach((doc) => {
      const v = doc.toJS() as { kind?: unknown; metadata?: { name?: unknown } } | null;
      const kind = typeof v?.kind === "string" ? kindOfFile(s.kinds, v.kind) : undefined;
      if (!kind || typeof v?.metadata?.name !== "string") return;
      const address = kind.address(v.metadata.name.replaceAll("$${", "${"));
      byAddress.set(address, [...(byAddress.get(address) ?? []), { file, doc: doc as Document, docs: all, edits }]);
    });
  }
  return { byAddress, broken };
}

/** The addresses git lacks, written as new files of the merged documents. */
function placeNew(s: State, merged: MergedDoc[], broken: Map<string, string>, header: (file: string) => string[]): void {
  const byFile = new Map<string, MergedDoc[]>();
  for (const d of merged) byFile.set(d.base.file, [...(byFile.get(d.base.file) ?? []), d]);
  for (const [file, docs] of byFile) {
    const first = docs[0] as MergedDoc;
    const maybeIn = [...broken].find(([, text]) => text.includes(first.value.metadata.name));
    if (maybeIn) {
      s.problems.skipped.push(`${first.address}: not written, ${maybeIn[0]} may hold it and has a YAML error`);
      continue;
    }
    const scopes = docs.map((d) => d.scope?.join(", ") ?? "every environment");
    const what = docs.length > 1 ? `: one document each for ${scopes.join("; ")}` : first.scope ? ` (for ${scopes[0]})` : "";
    put(s, file, renderMerged(docs, header(file)), `${first.address}${what}`, file);
    for (const d of docs) {
      for (const v of d.valuesFiles) put(s, posixOf(join(file, "..", v.file)), v.text, `values of ${d.address}`, file);
      s.problems.leftOut.push(...d.leftOut);
    }
  }
}

/** Each address git holds, brought to what all environments together say (all-envs-in-place.ts). */
function prepareHeld(s: State, byAddress: Map<string, GitDocRef[]>, taken: Set<string>): Prepared {
  const p: Prepared = { values: [], refused: [], changes: new Map(), sharedWith: new Map(), excluded: new Set() };
  const unique = (file: string): string => {
    let path = file;
    for (let i = 2; taken.has(path) || textOf(s, path) !== undefined; i++) path = file.replace(/\.csv$/, `-${i}.csv`);
    taken.add(path);
    return path;
  };
  const order = s.reads.map((r) => r.env.name);
  for (const [address, docs] of byAddress) {
    const holdings: Holding[] = s.reads.flatMap((r) => r.files.filter((f) => f.address === address).map((file) => ({ env: r.env.name, file })));
    if (!holdings.length) continue;
    const kind = kindOfFile(s.kinds, (holdings[0] as Holding).file.value.kind);
    prepareAddress(address, holdings, docs, { order, kind, namer: s.namer, unique, readValues: (f) => textOf(s, f) }, p);
  }
  const files = new Map<string, { docs: Document[]; edits: FileEdits }>();
  for (const refs of byAddress.values()) for (const r of refs) files.set(r.file, { docs: r.docs, edits: r.edits });
  for (const [file, { docs, edits }] of files) {
    if (!edits.structural && !edits.splices.length) continue;
    put(s, file, rewrite(textOf(s, file) ?? "", docs, edits), (p.changes.get(file) ?? []).join("; "), file);
  }
  for (const v of p.values) put(s, v.file, v.text, v.what);
  s.problems.refused.push(...p.refused);
  return p;
}

/** One environment's export placed into the folder as it stands in memory (in-place.ts). */
function placeEnv(s: State, r: EnvRead, held: Set<string>, p: Prepared, yamlFiles: () => string[], taken: Set<string>): void {
  const name = r.env.name;
  const added = s.namer.sets.filter((v) => v.env === name);
  const vars = { ...r.env.vars, ...Object.fromEntries(added.map((v) => [v.name, v.value])) };
  const source = varsFor({ vars, ...(r.env.envTexts ? { envTexts: r.env.envTexts } : {}), ...(r.env.origins ? { origins: r.env.origins } : {}) });
  const git = yamlFiles().flatMap((f) => {
    const text = textOf(s, f);
    return text === undefined ? [] : [gitFileAs(f, text, source, s.repo, name, s.kinds)];
  });
  const files = r.files.filter((f) => held.has(f.address) && !p.excluded.has(f.address));
  const plan = placeExport(
    files,
    git,
    () => [],
    (f) => textOf(s, f),
    {
      varHome: varHome(s.repo, name, new Set(added.map((v) => v.name))),
      sharedWith: (address) => p.sharedWith.get(`${name}\u0000${address}`) ?? [],
      taken: new Set([...taken, ...s.overlay.keys()]),
    },
  );
  for (const w of plan.writes) put(s, w.file, w.text, `${w.what} (${name})`, w.group);
  s.envVars.set(name, [...(s.envVars.get(name) ?? []), ...plan.vars]);
  const own = (l: string): string => `${l} (environment ${name})`;
  s.problems.skipped.push(...plan.skipped.map(own));
  s.problems.broken.push(...plan.broken.map((b) => `${s.ctx.shown(b.file)}:${b.message}`));
  s.problems.refused.push(...plan.refused.map((x) => ({ ...x, message: own(x.message) })));
  // What this environment holds was placed (or is written by this run): only the rest is git's alone.
  const gitOnly = plan.gitOnly.filter((g) => !r.files.some((f) => f.address === g.address) && targeted(g.address, s.targets));
  s.problems.gitOnly.push(...gitOnly.map((g) => `${g.address} (${s.ctx.shown(g.file)}; environment ${name} does not hold it)`));
  for (const [k, v] of plan.unknown) s.problems.unknown.set(k, [...(s.problems.unknown.get(k) ?? []), ...v]);
}

/** Everything placed, in memory: the new files, the files git holds, every environment's own part. */
function placeAll(s: State, taken: Set<string>): void {
  const order = s.reads.map((r) => r.env.name);
  const yamlFiles = (): string[] => [...new Set([...listYamlFilesIn(s.ctx.dir), ...[...s.overlay.keys()].filter((f) => /\.ya?ml$/i.test(f))])];
  const { byAddress, broken } = gitDocs(s, yamlFiles());
  // A policy file that cannot be read may hold any policy: nothing new is written beside it.
  const unreadable = listYamlFilesIn(s.ctx.dir).filter((f) => onDisk(s, f) === undefined);
  for (const f of unreadable)
    s.problems.failed.push(`${s.ctx.shown(f)}: cannot be read, so export neither updates it nor writes a policy file beside it that it may already hold`);
  for (const r of s.reads) s.problems.failed.push(...r.heldTwice.map((h) => `${h} (environment ${r.env.name})`));
  const fresh = s.reads.map((r) => ({ env: r.env.name, files: unreadable.length ? [] : r.files.filter((f) => !byAddress.has(f.address)) }));
  const schemaFile = join(s.repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
  const header = (file: string): string[] => [
    `yaml-language-server: $schema=${posixOf(relative(join(s.ctx.dir, file, ".."), schemaFile))}`,
    `Exported by revsync from environments ${order.join(", ")}.`,
  ];
  placeNew(s, mergeExports(fresh, order, s.namer, taken, s.kinds), broken, header);
  const p = prepareHeld(s, byAddress, taken);
  const held = new Set(byAddress.keys());
  for (const r of s.reads) placeEnv(s, r, held, p, yamlFiles, taken);
  for (const r of s.reads) s.problems.unnamed.push(...r.unnamed.map((u) => `${u} (environment ${r.env.name})`));
}

function listYamlFilesIn(dir: string): string[] {
  try {
    return listYamlFiles(dir).map((abs) => posixOf(relative(dir, abs)));
  } catch {
    return [];
  }
}

/** The writes the overlay makes (files whose text changes), and revsync.yaml with every environment's vars. */
function collectWrites(s: State): {
  writes: ExportWrite[];
  configText: string | undefined;
  sets: { env: string; name: string; value: unknown; what: string }[];
} {
  const writes: ExportWrite[] = [];
  for (const [file, text] of s.overlay) {
    const before = onDisk(s, file);
    if (before === text) continue;
    writes.push({
      file,
      text,
      created: before === undefined,
      what: [...new Set(s.whats.get(file) ?? [])].join("; "),
      ...(s.groups.has(file) ? { group: s.groups.get(file) } : {}),
    });
  }
  const sets = [...s.namer.sets, ...[...s.envVars].flatMap(([env, vs]) => vs.map((v) => ({ env, ...v })))];
  const before = readUserFile(s.repo.configFile, READ_CAPS.text);
  let after = before;
  for (const env of s.reads.map((r) => r.env.name)) {
    const mine = sets.filter((v) => v.env === env);
    if (mine.length) after = setEnvironmentVars(after, env, mine);
  }
  return { writes, configText: after !== before ? after : undefined, sets };
}

/** What an export of every environment did: the environments, the writes (those refused before any
 *  was made, each said in `errors`), the schemas, what was left and why, and where a write failed (a full
 *  disk), what was written before it. */
export interface ExportedAll {
  envs: string[];
  w: Writes;
  /** The writes refused (outside the folder, unwritable, held back with them). */
  refused: ExportWrite[];
  errors: string[];
  schemas: string[];
  problems: AllEnvsProblems;
  stopped?: { written: ExportWrite[]; error: Error };
  /** How many things export left as they were for a problem: any makes the export fail. */
  failed: number;
}

type Writes = ReturnType<typeof collectWrites>;

/** revsync export --all-envs: every environment read, placed in memory, then every write checked and
 *  written (unless a dry run), values files first, then the policy files, the schemas and revsync.yaml. */
export async function exportAllEnvironments(req: ExportAllRequest): Promise<ExportedAll> {
  const { repo, folder } = req;
  let taken: Set<string>;
  try {
    taken = filesUnder(folder.dir);
  } catch (e) {
    throw fileError("read", folder.shown("."), e);
  }
  const reads = await readAll(req, taken);
  const existing = new Map(reads.map((r) => [r.env.name, r.env.vars as Record<string, unknown>]));
  const s: State = {
    ctx: folder,
    repo,
    kinds: req.kinds,
    targets: req.targets,
    reads,
    overlay: new Map(),
    whats: new Map(),
    groups: new Map(),
    namer: new VarNamer(existing),
    envVars: new Map(),
    problems: { skipped: [], broken: [], refused: [], gitOnly: [], unknown: new Map(), leftOut: [], unnamed: [], failed: [] },
  };
  placeAll(s, taken);
  return writeOut(s, req.dryRun, collectWrites(s));
}

/** Checks every write, writes (unless a dry run) values files first, then the policy files, the schemas
 *  and revsync.yaml. */
function writeOut(s: State, dryRun: boolean, w: Writes): ExportedAll {
  const errors: string[] = [];
  const { outside, unwritable, heldBack } = checkWrites(s.ctx, { writes: w.writes }, errors);
  const failedFiles = [...outside, ...unwritable, ...heldBack];
  const ok = { writes: w.writes.filter((x) => !failedFiles.includes(x)), base: s.ctx.inside.folder, words: s.ctx.inside.words };
  const schemaFile = join(s.repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
  const needsSchemas = ok.writes.some((x) => {
    const m = /^#\s*yaml-language-server:\s*\$schema=(\S+)/.exec(x.text);
    return !!m && join(s.ctx.dir, x.file, "..", m[1] as string) === schemaFile;
  });
  const schemas = needsSchemas ? writeRepoSchemas(s.repo.root, false, true).written : [];
  const pr = s.problems;
  const failed = pr.refused.length + pr.skipped.length + pr.broken.length + pr.failed.length + failedFiles.length;
  const done = { envs: s.reads.map((r) => r.env.name), w, refused: failedFiles, errors, schemas, problems: pr, failed };
  if (dryRun) return done;
  const stopped = writeAll(s.ctx, ok);
  if (stopped) return { ...done, stopped };
  if (needsSchemas) writeRepoSchemas(s.repo.root, false);
  if (w.configText !== undefined) editUserFile(s.repo.configFile, w.configText, s.repo.root, { ...ok.words, folderName: "the policy repo" });
  return done;
}
