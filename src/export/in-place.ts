import { posix } from "node:path";
import { isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node } from "yaml";
import { sameJson } from "../canonical-json.js";
import { literalText, literalValue, variablesIn } from "../config/interpolate.js";
import type { DocInGit, ExportedFile } from "../kinds/export-file.js";
import type { Kind, Registry } from "../kinds/kind.js";
import { KINDS, kindOfFile } from "../kinds/registry.js";
import { addUnknown, type Unknown } from "../shared/unknown.js";
import { quotedWhereNeeded, renderFile } from "./mapping.js";

/** A policy file the export folder holds already. */
export interface GitFile {
  /** Path relative to the export folder, with / separators. */
  file: string;
  text: string;
  /** Each document's value with the environment's ${VAR}s filled (what it means, to compare with the
   *  service), by document index; undefined where it could not be filled or parsed (left as it is). */
  values: (unknown | undefined)[];
  /** The documents that are of other environments (metadata.environments), by index: not this
   *  environment's, so never matched with its service's policies. */
  outOfScope?: ReadonlySet<number>;
}

export interface ExportWrite {
  /** Path relative to the export folder. */
  file: string;
  text: string;
  created: boolean;
  /** What changed, in words, for the report ("ssp/Hardware SSP: batch FY26-H1 status"). */
  what: string;
  /** Writes that stand or fall together: a policy file and the new values files it names (the policy
   *  file's path). One that cannot be written holds back the others, so no file names a file that is
   *  not there. */
  group?: string;
}

export interface ExportPlan {
  writes: ExportWrite[];
  /** Problems that left a file as it was. */
  skipped: string[];
  /** Files export could not update, each with file:line:col and the reason (a YAML error): export
   *  fails (exit 1) after writing the rest. */
  broken: { file: string; message: string }[];
  /** Documents git holds that the service does not: address and file. */
  gitOnly: { address: string; file: string }[];
  /** Fields git holds that the service does not show: kept as git has them, never compared. */
  unknown: Unknown;
  /** Variables of this environment's `vars:` (revsync.yaml) that take the service's value, in place
   *  of the `${VAR}` in a policy file that reads them (which stays). */
  vars: { name: string; value: unknown; what: string }[];
  /** Differences export may not write, left as they are, each with why (`message`) and the reason's
   *  kind (`because`): the value lies in a file other environments read (`shared`), comes from a process
   *  variable (`process`), or from variables export cannot set (`variable`). Export fails (exit 1). */
  refused: Refusal[];
}

export interface Refusal {
  message: string;
  because: "shared" | "process" | "variable";
}

/** Where a `${NAME}` of a policy file takes its value in the environment export reads: this
 *  environment's own `vars:` entry (export may write it there), or somewhere other environments read
 *  too (the process environment, or a variable of a variable), named for the message. */
export type VarHome = { kind: "own" } | { kind: "shared"; environments: string[]; where: string };

export interface PlaceOptions {
  varHome?: (name: string) => VarHome;
  /** The other environments of revsync.yaml that read the files of this folder. A literal value there
   *  is git's for every one of them: export never changes it from one environment's service (their
   *  plans would change), nor adds a file, a batch or values to them; each such difference is refused,
   *  named, and left for a reviewed change (docs/decisions.md, "Export never changes what another
   *  environment would do"). */
  sharedWith?: readonly string[] | ((address: string) => readonly string[]);
  /** The kinds whose files export places (the registry of src/kinds/). */
  kinds?: Registry;
  /** Paths (relative to the export folder) that hold something already, readable or not: a new values
   *  file never takes one. */
  taken?: ReadonlySet<string>;
}

const key = (kind: string, name: string): string => `${kind}\u0000${name}`;

/** Git's value of a spec field against the service's, compared as plan compares them (its kind's
 *  `compared`: conditions and identifiers as sets, operator spellings as one). A value from a ${VAR} of
 *  the process environment is text where the field is a number or boolean: the same text is the same value. */
function sameField(kind: Kind | undefined, field: string, git: unknown, live: unknown): boolean {
  if (git === undefined) return false;
  if (typeof git === "string" && (typeof live === "number" || typeof live === "boolean") && String(live) === git) return true;
  const norm = (v: unknown): unknown => (kind?.compared ? kind.compared(field, v) : v);
  return sameJson(norm(git), norm(live));
}

/** How one file changes: scalars replaced where they stand (spliced into the text, so that every other
 *  byte of the file stays as it was), or a change of structure (the documents are written out again). */
export interface FileEdits {
  splices: { start: number; end: number; text: string }[];
  structural: boolean;
}

/** A scalar's text in any YAML context: plain when that is unambiguous, else double-quoted. */
export function scalarText(value: unknown): string {
  if (typeof value !== "string") return value === null ? "null" : String(value);
  const plain = /^[A-Za-z_][A-Za-z0-9 _./-]*$/.test(value) && !/ $/.test(value) && !/^(true|false|null|yes|no|on|off|y|n|~)$/i.test(value);
  return plain ? value : JSON.stringify(value);
}

/** Sets a value of the service keeping what the file says around it: a scalar changes in place (its
 *  comment stays), a collection is replaced by a new node that takes over the old one's comments. The
 *  value is written as literal text (literalValue: a `${` of the service never reads as a variable). */
function setValue(doc: Document, path: (string | number)[], serviceValue: unknown, edits: FileEdits, raw = false): void {
  const value = raw ? serviceValue : literalValue(serviceValue);
  const old = doc.getIn(path, true) as Node | undefined;
  if (old && isScalar(old) && (value === null || typeof value !== "object")) {
    old.value = value;
    quotedWhereNeeded(old);
    if (old.range) edits.splices.push({ start: old.range[0], end: old.range[1], text: scalarText(value) });
    else edits.structural = true;
    return;
  }
  edits.structural = true;
  const node = quotedWhereNeeded(doc.createNode(value) as Node);
  if (old) {
    node.comment = old.comment;
    node.commentBefore = old.commentBefore;
  }
  doc.setIn(path, node);
}

/** Sets a value that revsync wrote itself (a `${VAR}` export --all-envs puts in place of a value that
 *  differs between environments), as it is: not read as the service's text. */
export const setOwnValue = (doc: Document, path: (string | number)[], value: unknown, edits: FileEdits): void => setValue(doc, path, value, edits, true);

/** Sets a value of the service, as literal text (setValue). */
export const setLiveValue = (doc: Document, path: (string | number)[], value: unknown, edits: FileEdits): void => setValue(doc, path, value, edits);

/** Adds comment lines a node does not hold yet (so that exporting twice adds nothing). */
function addComments(node: { comment?: string | null } | undefined, lines: string[]): boolean {
  if (!node || !lines.length) return false;
  const held = (node.comment ?? "").split("\n").map((l) => l.trim());
  const missing = lines.filter((l) => !held.includes(l.trim()));
  if (!missing.length) return false;
  node.comment = [node.comment, ...missing].filter((l) => l !== undefined && l !== null && l !== "").join("\n");
  return true;
}

const WHOLE_VAR = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** What export does with a value git reads from variables, when the service holds another one. */
interface VarContext {
  address: string;
  /** A values file name (relative to the policy file's folder) that no file and no other write holds. */
  claimValues: (policyDir: string, file: string) => string;
  varHome?: (name: string) => VarHome;
  sharedWith?: readonly string[];
  plan: ExportPlan;
  /** The kind of the file's document. */
  kind?: Kind;
  /** The folder of the policy file (relative to the export folder), and the values files it holds. */
  policyDir: string;
  readValues: (file: string) => string | undefined;
}

/** The words of a refusal for a file other environments read: what differs, and what to do. */
function sharedWords(sharedWith: readonly string[]): string {
  const n = sharedWith.length;
  return `environment${n === 1 ? "" : "s"} ${sharedWith.join(", ")} read${n === 1 ? "s" : ""} this file too, so export would change ${n === 1 ? "its" : "their"} plan${n === 1 ? "" : "s"}: not exported (change git in a reviewed commit, or make the value a \${VAR} with each environment's own entry under vars: in revsync.yaml and export again, or export every environment at once: revsync export --all-envs)`;
}

/** A difference export may not write because other environments read the file: refused, named. */
function refuseShared(ctx: VarContext, what: string): boolean {
  if (!ctx.sharedWith?.length) return false;
  ctx.plan.refused.push({ message: `${ctx.address}: ${what}; ${sharedWords(ctx.sharedWith)}`, because: "shared" });
  return true;
}

/** Sets a field to the service's value, unless git's value comes from a variable: then the variable
 *  keeps its place in the file, and either this environment's `vars:` entry takes the new value, or the
 *  field is refused (other environments read the variable too). Returns whether the file changed. */
function setField(doc: Document, path: (string | number)[], value: unknown, edits: FileEdits, ctx: VarContext): "set" | "var" | "refused" {
  const raw = JSON.stringify(doc.getIn(path) ?? null);
  const refs = variablesIn(raw);
  const field = path.filter((p) => p !== "spec").join(".");
  if (!refs.length) {
    if (refuseShared(ctx, `${field} is ${raw} in git, the service holds ${JSON.stringify(value)}`)) return "refused";
    setValue(doc, path, value, edits);
    return "set";
  }
  const rawValue = doc.getIn(path);
  const whole = typeof rawValue === "string" ? WHOLE_VAR.exec(rawValue) : null;
  const refuse = (why: string, because: Refusal["because"] = "variable"): "refused" => {
    ctx.plan.refused.push({
      message: `${ctx.address}: ${field} ${why}; the service holds ${JSON.stringify(value)}: not exported (set the variable yourself, or give this environment its own entry under vars: in revsync.yaml and export again)`,
      because,
    });
    return "refused";
  };
  if (!whole) return refuse(`is built from ${refs.map((r) => `\${${r}}`).join(", ")} (export cannot split the service's value over them)`);
  const name = whole[1] as string;
  const home = ctx.varHome?.(name) ?? { kind: "shared" as const, environments: [], where: "outside revsync.yaml" };
  if (home.kind === "shared") {
    const n = home.environments.length;
    const envs = n ? `, and environment${n === 1 ? "" : "s"} ${home.environments.join(", ")} read${n === 1 ? "s" : ""} it too` : "";
    return refuse(`comes from \${${name}}, which ${home.where}${envs}: export writes no literal over a variable, and cannot set it there`, "process");
  }
  const held = ctx.plan.vars.find((v) => v.name === name);
  if (held && !sameJson(held.value, value)) {
    return refuse(`comes from \${${name}}, which another field sets to ${JSON.stringify(held.value)} in this export`);
  }
  if (!held) ctx.plan.vars.push({ name, value, what: `${ctx.address}: ${field}` });
  return "var";
}

interface PolicyValue {
  spec?: Record<string, unknown>;
}

/** A values file to write; `named`: one the policy file names only now (a batch added, or given values). */
type ValuesWrite = { file: string; text: string; what: string; named?: boolean };

/** The spec fields git sets brought to the service's: one it leaves out keeps its live value and stays
 *  out; one the service does not show keeps git's value, unknown, never overwritten (src/shared/unknown.ts);
 *  one the service holds a value of that no policy file may hold is left out, with a comment. */
function updateSpec(doc: Document, current: PolicyValue, f: ExportedFile, edits: FileEdits, ctx: VarContext, changes: string[]): void {
  // --target of a batch alone: the policy's own fields are not exported.
  if (f.batchesOnly) return;
  for (const [field, live] of Object.entries(f.value.spec)) {
    if (!current.spec || !(field in current.spec) || sameField(ctx.kind, field, current.spec[field], live)) continue;
    if (setField(doc, ["spec", field], live, edits, ctx) === "set") changes.push(field);
  }
  let leftOut = false;
  for (const field of f.leftOutFields) {
    if (!current.spec || !(field in current.spec)) continue;
    if (f.nullFields.includes(field)) {
      const inexact = f.notComparable.get(field);
      addUnknown(ctx.plan.unknown, f.address, [inexact === undefined ? { field } : { field, inexact }]);
      continue;
    }
    if (refuseShared(ctx, `${field} would be left out (the service holds a value the policy files cannot hold)`)) continue;
    doc.deleteIn(["spec", field]);
    edits.structural = true;
    changes.push(`${field} (left out: it keeps its live value)`);
    leftOut = true;
  }
  if (leftOut && addComments(doc.get("spec", true) as Node | undefined, f.specComments)) edits.structural = true;
}

/** What export offers the kind of a document to bring what it exports beyond the spec into git's
 *  document in place (Kind.placeInGit: the SSP kind's batches). */
function docInGit(doc: Document, current: PolicyValue, edits: FileEdits, ctx: VarContext, out: { changes: string[]; values: ValuesWrite[] }): DocInGit {
  return {
    current: current as Record<string, unknown>,
    dir: ctx.policyDir,
    set: (path, value) => setField(doc, path, value, edits, ctx),
    put: (path, value) => setValue(doc, path, value, edits),
    append(key, entry) {
      const node = quotedWhereNeeded(doc.createNode(literalValue(entry)));
      const seq = doc.get(key, true);
      if (isSeq(seq)) seq.add(node);
      else doc.set(key, quotedWhereNeeded(doc.createNode([literalValue(entry)])));
      edits.structural = true;
    },
    comment(key, lines) {
      const node = (doc.get(key, true) as Node | undefined) ?? (doc as unknown as { comment?: string | null });
      const added = addComments(node, lines);
      if (added) edits.structural = true;
      return added;
    },
    refuseShared: (what) => refuseShared(ctx, what),
    claimValues: (file) => ctx.claimValues(ctx.policyDir, file),
    readValues: ctx.readValues,
    writeValues: (file, text, what, named) => void out.values.push({ file, text, what, ...(named ? { named } : {}) }),
    changed: (what) => void out.changes.push(what),
    unknown: (address, fields) => addUnknown(ctx.plan.unknown, address, fields),
  };
}

/** One document of git brought to what the service holds, in place: only what differs is touched, so
 *  comments, ${VAR}s, order and the file's name stay; what the kind exports beyond the spec, by the kind.
 *  Returns what changed, and the values files to write (relative to the export folder). */
function updateDoc(doc: Document, current: PolicyValue, f: ExportedFile, edits: FileEdits, ctx: VarContext): { changes: string[]; values: ValuesWrite[] } {
  const out = { changes: [] as string[], values: [] as ValuesWrite[] };
  updateSpec(doc, current, f, edits, ctx, out.changes);
  ctx.kind?.placeInGit?.(f, docInGit(doc, current, edits, ctx, out));
  return out;
}

/** A changed file's text: with scalar changes only, the original text with those scalars replaced
 *  where they stand (comments, spacing, flow style and ${VAR}s elsewhere untouched), checked to mean what
 *  the edited documents mean; else the documents written out again (comments kept, spacing normalised). */
export function rewrite(original: string, docs: Document[], edits: FileEdits | undefined): string {
  const whole = docs.map((d) => d.toString({ lineWidth: 0 })).join("");
  if (!edits || edits.structural || !edits.splices.length) return whole;
  let text = original;
  for (const s of [...edits.splices].sort((a, b) => b.start - a.start)) text = text.slice(0, s.start) + s.text + text.slice(s.end);
  const meaning = (t: string): unknown => parseAllDocuments(t).map((d) => (d as Document).toJS());
  return sameJson(meaning(text), meaning(whole)) ? text : whole;
}

/** The policy files of the export folder as parsed: each document's place by kind and name (the first
 *  file that names one is its file: validate reports the second as a duplicate), and the files with a
 *  YAML error, each with its first error's place (they cannot be written again without losing what they
 *  say: they are left as they are, and so are the policies they may hold). */
function readGit(
  git: GitFile[],
  kinds: Registry,
): { parsed: Map<string, Document[]>; where: Map<string, { file: GitFile; index: number }>; broken: Map<string, { file: string; message: string }> } {
  const parsed = new Map<string, Document[]>();
  const where = new Map<string, { file: GitFile; index: number }>();
  const broken = new Map<string, { file: string; message: string }>();
  for (const g of git) {
    const docs = parseAllDocuments(g.text);
    if (!Array.isArray(docs)) continue;
    parsed.set(g.file, docs);
    const err = docs.flatMap((d) => d.errors)[0];
    if (err) {
      const pos = err.linePos?.[0] ?? { line: 1, col: 1 };
      const reason = (err.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
      broken.set(g.file, { file: g.file, message: `${pos.line}:${pos.col}: ${reason}: not updated (fix the YAML, then export again)` });
    }
    docs.forEach((doc, index) => {
      if (g.outOfScope?.has(index)) return;
      // What the document means (its ${VAR}s filled, `$${` read as `${`), to match the service's names.
      const v = (g.values[index] ?? (doc.errors.length ? undefined : doc.toJS())) as { kind?: unknown; metadata?: { name?: unknown } } | null | undefined;
      if (!v || typeof v.kind !== "string" || !kindOfFile(kinds, v.kind) || typeof v.metadata?.name !== "string") return;
      const k = key(v.kind, v.metadata.name);
      if (!where.has(k)) where.set(k, { file: g, index });
    });
  }
  return { parsed, where, broken };
}

/** The values files the policy files of the export folder name (each document's, as its kind says:
 *  relative to the export folder), whether the folder holds them or not: export gives no other file these
 *  names, in a new policy file or one it updates. */
export function valuesNamedIn(git: GitFile[], kinds: Registry = KINDS): Set<string> {
  const named = new Set<string>();
  for (const g of git) {
    const docs = g.values.length ? g.values : parseAllDocuments(g.text).map((d) => (d as Document).toJS() as unknown);
    for (const v of docs) {
      const kind = (v as { kind?: unknown } | null | undefined)?.kind;
      const files = typeof kind === "string" ? (kindOfFile(kinds, kind)?.valuesNamed?.(v) ?? []) : [];
      for (const file of files) named.add(posix.normalize(posix.join(posix.dirname(g.file), file)));
    }
  }
  return named;
}

/** What one run of placeExport keeps while it goes through the exported files. */
interface Placing {
  plan: ExportPlan;
  git: GitFile[];
  read: ReturnType<typeof readGit>;
  header: (file: string) => string[];
  readValues: (file: string) => string | undefined;
  claimValues: (policyDir: string, file: string) => string;
  opts: PlaceOptions;
  matched: Set<string>;
  dirty: Map<string, string[]>;
  edits: Map<string, FileEdits>;
}

/** The other environments that read git's file of an address. */
const sharedOf = (opts: PlaceOptions, address: string): readonly string[] =>
  typeof opts.sharedWith === "function" ? opts.sharedWith(address) : (opts.sharedWith ?? []);

/** One exported file: a new file for a policy git lacks, or git's file brought up to date in place. */
function placeFile(f: ExportedFile, x: Placing): void {
  const { plan, read, opts } = x;
  const k = key(f.value.kind, f.value.metadata.name);
  const hit = read.where.get(k);
  // A policy a broken file may hold gets no second file.
  const maybeIn = hit
    ? undefined
    : [...read.broken.keys()].find((file) => x.git.find((g) => g.file === file)?.text.includes(literalText(f.value.metadata.name)));
  if (maybeIn) return void plan.skipped.push(`${f.address}: not written, ${maybeIn} may hold it and has a YAML error`);
  if (hit) x.matched.add(k);
  if (hit && read.broken.has(hit.file.file)) return;
  if (!hit) {
    const shared = sharedOf(opts, f.address);
    if (shared.length) return void plan.refused.push({ message: `${f.address}: in the service, no file in git; ${sharedWords(shared)}`, because: "shared" });
    plan.writes.push({ file: f.file, text: renderFile(f, x.header(f.file)), created: true, what: f.address, group: f.file });
    for (const v of f.valuesFiles) plan.writes.push({ file: v.file, text: v.text, created: true, what: `values of ${f.address}`, group: f.file });
    return;
  }
  const current = hit.file.values[hit.index];
  const doc = read.parsed.get(hit.file.file)?.[hit.index];
  if (current === undefined || !doc || !isMap(doc.contents)) {
    plan.skipped.push(`${hit.file.file} holds ${f.address} but could not be read with this environment's variables (revsync validate says why): left as it is`);
    return;
  }
  const fileEdits = x.edits.get(hit.file.file) ?? { splices: [], structural: false };
  x.edits.set(hit.file.file, fileEdits);
  const kind = kindOfFile(opts.kinds ?? KINDS, f.value.kind);
  const ctx: VarContext = {
    address: f.address,
    claimValues: x.claimValues,
    plan,
    policyDir: posix.dirname(hit.file.file),
    readValues: x.readValues,
    ...(kind ? { kind } : {}),
    ...(opts.varHome ? { varHome: opts.varHome } : {}),
    sharedWith: sharedOf(opts, f.address),
  };
  const { changes, values } = updateDoc(doc, current as PolicyValue, f, fileEdits, ctx);
  if (changes.length) x.dirty.set(hit.file.file, [...(x.dirty.get(hit.file.file) ?? []), `${f.address}: ${changes.join(", ")}`]);
  for (const v of values)
    plan.writes.push({ file: v.file, text: v.text, created: x.readValues(v.file) === undefined, what: v.what, ...(v.named ? { group: hit.file.file } : {}) });
}

/** Where export writes into a folder that holds policy files already: each policy's file is found by
 *  kind and metadata.name, whatever its file name, and brought up to date in place; a file is created
 *  only for a policy git lacks. Pure: the caller reads and writes the files. */
export function placeExport(
  files: ExportedFile[],
  git: GitFile[],
  header: (file: string) => string[],
  readValues: (file: string) => string | undefined,
  opts: PlaceOptions = {},
): ExportPlan {
  const kinds = opts.kinds ?? KINDS;
  const plan: ExportPlan = { writes: [], skipped: [], broken: [], gitOnly: [], unknown: new Map(), vars: [], refused: [] };
  const read = readGit(git, kinds);
  // Values files this export may write for a policy git lacks (a new policy file's), those git's files
  // name (held or not yet), and those the folder holds: a batch git gains a values file for takes the
  // first name none of them has, so no two batches share a file and the same state gives the same names.
  const claimed = new Set([...valuesNamedIn(git, kinds), ...(opts.taken ?? [])]);
  for (const f of files) if (!read.where.has(key(f.value.kind, f.value.metadata.name))) for (const v of f.valuesFiles) claimed.add(v.file);
  const claimValues = (policyDir: string, file: string): string => {
    let path = file;
    for (let i = 2; claimed.has(posix.join(policyDir, path)) || readValues(posix.join(policyDir, path)) !== undefined; i++)
      path = file.replace(/\.csv$/, `-${i}.csv`);
    claimed.add(posix.join(policyDir, path));
    return path;
  };
  const x: Placing = { plan, git, read, header, readValues, claimValues, opts, matched: new Set(), dirty: new Map(), edits: new Map() };
  for (const f of files) placeFile(f, x);
  for (const [file, what] of x.dirty) {
    const original = git.find((g) => g.file === file)?.text ?? "";
    plan.writes.push({ file, text: rewrite(original, read.parsed.get(file) ?? [], x.edits.get(file)), created: false, what: what.join("; "), group: file });
  }
  plan.broken.push(...read.broken.values());
  for (const [k, { file }] of read.where) {
    if (x.matched.has(k)) continue;
    const [fileKind, name] = k.split("\u0000") as [string, string];
    plan.gitOnly.push({ address: kindOfFile(kinds, fileKind)?.address(name) ?? `${fileKind}/${name}`, file: file.file });
  }
  return plan;
}
