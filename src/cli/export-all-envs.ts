/** revsync export --all-envs: every environment of revsync.yaml read with its own credentials, and
 *  adopted into one set of policy files (src/export/all-envs.ts: what is merged and how; in files git
 *  holds, all-envs-in-place.ts, then each environment's own placement, in-place.ts). Nothing is written
 *  until every environment has been read and placed, in memory, one after another. */
import { join, relative } from "node:path";
import { parseAllDocuments, type Document } from "yaml";
import { varsFor, type Repo, type ResolvedEnv } from "../config/repo.js";
import { listYamlFiles } from "../config/walk.js";
import { mergeExports, renderMerged, VarNamer, type Holding, type MergedDoc } from "../export/all-envs.js";
import { prepareAddress, type GitDocRef, type Prepared } from "../export/all-envs-in-place.js";
import { setEnvironmentVars } from "../export/config-vars.js";
import { placeExport, rewrite, type ExportPlan, type ExportWrite, type FileEdits } from "../export/in-place.js";
import { exportFiles, type ExportedFile } from "../export/mapping.js";
import { kindOfFile } from "../kinds/registry.js";
import type { Registry } from "../kinds/kind.js";
import { nothingInGit } from "../live/read.js";
import { checkTargets } from "../plan/targets.js";
import { POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import { unknownNotes, type Unknown } from "../shared/unknown.js";
import { targeted } from "../shared/address.js";
import { editUserFile, fileError, READ_CAPS, readUserFile } from "../user-files.js";
import { plural } from "../words.js";
import { openClient, openEnv, openRepo } from "./context.js";
import { kindsOf } from "./io.js";
import { fleetNames } from "./fleet.js";
import { checkWrites, exportFolder, filesUnder, gitFileAs, posixOf, refusalWords, varHome, writeAll, type Ctx, type ExportFlags } from "./export.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";

/** One environment as export read it. */
interface EnvRead {
  env: ResolvedEnv;
  files: ExportedFile[];
  unnamed: string[];
  /** Names the service holds more than once: refused, each named (never exported). */
  heldTwice: string[];
}

/** The export folder in memory while every environment is placed into it: each file as it stands now,
 *  what wrote it, and the vars each environment takes. */
interface State {
  ctx: Pick<Ctx, "out" | "dir" | "shown" | "inside" | "readValues">;
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
  problems: {
    skipped: string[];
    broken: string[];
    refused: ExportPlan["refused"];
    gitOnly: string[];
    unknown: Unknown;
    leftOut: string[];
    unnamed: string[];
    /** Failures besides: names the service holds twice, policy files that cannot be read. */
    failed: string[];
  };
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
async function readAll(repo: Repo, names: string[], flags: ExportFlags, out: Output, taken: ReadonlySet<string>): Promise<EnvRead[]> {
  const reads: EnvRead[] = [];
  let unknownTarget: unknown;
  let matched = false;
  for (const name of names) {
    const env = openEnv(repo, flags, name);
    const core = openClient(env, flags, out);
    try {
      out.verbose(`export: reading environment ${name}`);
      const kinds = kindsOf(out.io);
      const live = await readWithProgress(core, nothingInGit(kinds), flags, out, { allDetails: true, allValues: true });
      try {
        checkTargets(flags.target ?? [], nothingInGit(kinds), live, kinds);
        matched = true;
      } catch (e) {
        unknownTarget ??= e;
      }
      const unnamed: string[] = [];
      const heldTwice: string[] = [];
      reads.push({ env, files: exportFiles(live, flags.target ?? [], taken, unnamed, kindsOf(out.io), heldTwice), unnamed, heldTwice });
    } finally {
      await core.close();
    }
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

/** The lines of what was (or would be) written, then what was left as it was, and the closing line. */
function report(s: State, flags: ExportFlags, w: ReturnType<typeof collectWrites>, failed: { files: ExportWrite[]; count: number }, schemas: string[]): number {
  const { out } = s.ctx;
  const dry = !!flags.dryRun;
  const written = w.writes.filter((x) => !failed.files.includes(x));
  for (const x of written)
    out.out(`${dry ? (x.created ? "would write" : "would update") : x.created ? "wrote" : "updated"} ${s.ctx.shown(x.file)} (${x.what})`);
  const configShown = relative(s.repo.cwd, s.repo.configFile) || "revsync.yaml";
  for (const v of w.sets)
    out.out(`${dry ? "would set" : "set"} environments.${v.env}.vars.${v.name} in ${configShown}: ${JSON.stringify(v.value)} (${v.what})`);
  for (const f of schemas)
    out.out(`${dry ? "would write" : "wrote"} ${relative(s.repo.cwd, join(s.repo.root, f)) || f} (the schemas the files' first line refers to)`);
  const pr = s.problems;
  for (const x of pr.skipped) out.error(x);
  for (const b of pr.broken) out.error(b);
  for (const r of pr.refused) out.error(r.message);
  for (const f of pr.failed) out.error(f);
  if (pr.unnamed.length) out.warn(`not exported, git cannot hold their names (plan shows each as not in git):\n  ${pr.unnamed.join("\n  ")}`);
  if (pr.leftOut.length)
    out.warn(`left out of the files (each is named in a comment in its file; a field left out keeps its live value):\n  ${pr.leftOut.join("\n  ")}`);
  for (const n of unknownNotes(pr.unknown)) out.out(`Note: ${n}`);
  if (pr.gitOnly.length) out.warn(`git has files for what the service does not hold, left as they are (plan shows each):\n  ${pr.gitOnly.join("\n  ")}`);
  const count = pr.refused.length + pr.skipped.length + pr.broken.length + pr.failed.length + failed.count;
  const total = written.length + schemas.length + (w.configText !== undefined ? 1 : 0);
  const envs = s.reads.map((r) => r.env.name).join(", ");
  if (!total && !count) out.out(`Nothing to export: git's files already hold what the service of every environment (${envs}) holds.`);
  if (dry && total) out.out(`\nDry run: ${plural(total, "file")} would be written; nothing was written.`);
  if (!count) return 0;
  const why = [
    ...refusalWords(pr.refused),
    pr.skipped.length ? plural(pr.skipped.length, "policy it could not compare", "policies it could not compare") : "",
    pr.failed.length ? plural(pr.failed.length, "name held twice or file it could not read", "names held twice or files it could not read") : "",
  ];
  out.error(
    `export left ${[...why, failed.count ? plural(failed.count, "file that cannot be written", "files that cannot be written") : ""].filter(Boolean).join(", ") || "what is listed above"} as it was (listed above)${total && !dry ? "; the rest was written" : ""}`,
  );
  return 1;
}

/** revsync export --all-envs. */
export async function runExportAllEnvs(flags: ExportFlags, out: Output): Promise<number> {
  const repo = openRepo(flags);
  // Every environment, each checked; --env refused, and the overrides (each names one tenant) too.
  const names = fleetNames(repo, { ...flags, allEnvs: true });
  const folder = exportFolder(flags, out, repo);
  let taken: Set<string>;
  try {
    taken = filesUnder(folder.dir);
  } catch (e) {
    throw fileError("read", folder.shown("."), e);
  }
  const reads = await readAll(repo, names, flags, out, taken);
  const existing = new Map(reads.map((r) => [r.env.name, r.env.vars as Record<string, unknown>]));
  const s: State = {
    ctx: { out, ...folder },
    repo,
    kinds: kindsOf(out.io),
    targets: flags.target ?? [],
    reads,
    overlay: new Map(),
    whats: new Map(),
    groups: new Map(),
    namer: new VarNamer(existing),
    envVars: new Map(),
    problems: { skipped: [], broken: [], refused: [], gitOnly: [], unknown: new Map(), leftOut: [], unnamed: [], failed: [] },
  };
  placeAll(s, taken);
  const w = collectWrites(s);
  return writeOut(s, flags, w);
}

/** Checks every write, writes (unless --dry-run) values files first, then the policy files, the schemas
 *  and revsync.yaml; then reports. */
function writeOut(s: State, flags: ExportFlags, w: ReturnType<typeof collectWrites>): number {
  const plan = { writes: w.writes } as ExportPlan;
  const { outside, unwritable, heldBack } = checkWrites(s.ctx, plan);
  const failedFiles = [...outside, ...unwritable, ...heldBack];
  const ok = { writes: w.writes.filter((x) => !failedFiles.includes(x)), base: s.ctx.inside.folder, words: s.ctx.inside.words };
  const schemaFile = join(s.repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
  const needsSchemas = ok.writes.some((x) => {
    const m = /^#\s*yaml-language-server:\s*\$schema=(\S+)/.exec(x.text);
    return !!m && join(s.ctx.dir, x.file, "..", m[1] as string) === schemaFile;
  });
  const schemas = needsSchemas ? writeRepoSchemas(s.repo.root, false, true).written : [];
  if (!flags.dryRun) {
    const stopped = writeAll(s.ctx, ok);
    if (stopped) {
      for (const x of stopped.written) s.ctx.out.out(`${x.created ? "wrote" : "updated"} ${s.ctx.shown(x.file)}`);
      s.ctx.out.error(
        `export stopped: ${stopped.error.message}; ${plural(stopped.written.length, "file was", "files were")} written (listed above): run export again`,
      );
      return 1;
    }
    if (needsSchemas) writeRepoSchemas(s.repo.root, false);
    if (w.configText !== undefined) editUserFile(s.repo.configFile, w.configText, s.repo.root, { ...ok.words, folderName: "the policy repo" });
  }
  return report(s, flags, w, { files: failedFiles, count: failedFiles.length }, schemas);
}
