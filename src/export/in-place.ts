import { posix } from "node:path";
import { isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node } from "yaml";
import { addUnknown, type Unknown } from "../shared/unknown.js";
import { BATCH_DATES } from "../plan/compare.js";
import { valuesChecksum } from "../plan/values.js";
import { address, valuesFileFor } from "../shared/address.js";
import { normalizeSspFields } from "../shared/normalize.js";
import { quotedWhereNeeded, renderFile, type ExportedFile } from "./mapping.js";
import { literalText, literalValue, variablesIn } from "../config/interpolate.js";

/** A policy file the export folder holds already. */
export interface GitFile {
  /** Path relative to the export folder, with / separators. */
  file: string;
  text: string;
  /** Each document's value with the environment's ${VAR}s filled (what it means, to compare with the
   *  service), by document index; undefined where it could not be filled or parsed (left as it is). */
  values: (unknown | undefined)[];
}

export interface ExportWrite {
  /** Path relative to the export folder. */
  file: string;
  text: string;
  created: boolean;
  /** What changed, in words, for the report ("ssp/Hardware SSP: batch FY26-H1 status"). */
  what: string;
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
  /** Differences export may not write (git's value comes from a variable other environments read too,
   *  or lies in a file other environments read): left as they are, each with why. Export fails (exit 1). */
  refused: string[];
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
  sharedWith?: readonly string[];
}

const key = (kind: string, name: string): string => `${kind}\u0000${name}`;

/** Git's value of a spec field against the service's, compared as plan compares them (conditions and
 *  identifiers as sets, operator spellings as one). A value from a ${VAR} of the process environment is
 *  text where the field is a number or boolean: the same text is the same value. */
function sameField(kind: string, field: string, git: unknown, live: unknown): boolean {
  if (git === undefined) return false;
  if (typeof git === "string" && (typeof live === "number" || typeof live === "boolean") && String(live) === git) return true;
  const norm = (v: unknown): string => JSON.stringify(kind === "SspPolicy" ? normalizeSspFields({ [field]: v }, [field])[field] : v);
  return norm(git) === norm(live);
}

/** Two values files hold the same values (whatever their column order, quoting or line ends). */
function sameValues(held: string | undefined, text: string): boolean {
  if (held === undefined) return false;
  if (held === text) return true;
  try {
    return valuesChecksum({ csv: held }) === valuesChecksum({ csv: text });
  } catch {
    return false;
  }
}

/** How one file changes: scalars replaced where they stand (spliced into the text, so that every other
 *  byte of the file stays as it was), or a change of structure (the documents are written out again). */
interface FileEdits {
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
function setValue(doc: Document, path: (string | number)[], serviceValue: unknown, edits: FileEdits): void {
  const value = literalValue(serviceValue);
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
}

/** The words of a refusal for a file other environments read: what differs, and what to do. */
function sharedWords(sharedWith: readonly string[]): string {
  const n = sharedWith.length;
  return `environment${n === 1 ? "" : "s"} ${sharedWith.join(", ")} read${n === 1 ? "s" : ""} this file too, so export would change ${n === 1 ? "its" : "their"} plan${n === 1 ? "" : "s"}: not exported (change git in a reviewed commit, or make the value a \${VAR} with each environment's own entry under vars: in revsync.yaml, and export again)`;
}

/** A difference export may not write because other environments read the file: refused, named. */
function refuseShared(ctx: VarContext, what: string): boolean {
  if (!ctx.sharedWith?.length) return false;
  ctx.plan.refused.push(`${ctx.address}: ${what}; ${sharedWords(ctx.sharedWith)}`);
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
  const refuse = (why: string): "refused" => {
    ctx.plan.refused.push(
      `${ctx.address}: ${field} ${why}; the service holds ${JSON.stringify(value)}: not exported (set the variable yourself, or give this environment its own entry under vars: in revsync.yaml and export again)`,
    );
    return "refused";
  };
  if (!whole) return refuse(`is built from ${refs.map((r) => `\${${r}}`).join(", ")} (export cannot split the service's value over them)`);
  const name = whole[1] as string;
  const home = ctx.varHome?.(name) ?? { kind: "shared" as const, environments: [], where: "outside revsync.yaml" };
  if (home.kind === "shared") {
    const n = home.environments.length;
    const envs = n ? `, and environment${n === 1 ? "" : "s"} ${home.environments.join(", ")} read${n === 1 ? "s" : ""} it too` : "";
    return refuse(`comes from \${${name}}, which ${home.where}${envs}: export writes no literal over a variable, and cannot set it there`);
  }
  const held = ctx.plan.vars.find((v) => v.name === name);
  if (held && JSON.stringify(held.value) !== JSON.stringify(value)) {
    return refuse(`comes from \${${name}}, which another field sets to ${JSON.stringify(held.value)} in this export`);
  }
  if (!held) ctx.plan.vars.push({ name, value, what: `${ctx.address}: ${field}` });
  return "var";
}

interface PolicyValue {
  spec?: Record<string, unknown>;
  batches?: { name?: unknown; status?: unknown; values?: unknown; effective_start_date?: unknown; effective_end_date?: unknown }[];
}

/** One document of git brought to what the service holds, in place: only what differs is touched, so
 *  comments, ${VAR}s, order and the file's name stay. Returns what changed, and the values files to write
 *  (relative to the export folder). */
function updateDoc(
  doc: Document,
  current: PolicyValue,
  f: ExportedFile,
  policyDir: string,
  readValues: (file: string) => string | undefined,
  edits: FileEdits,
  ctx: VarContext,
): { changes: string[]; values: { file: string; text: string; what: string }[] } {
  const changes: string[] = [];
  const values: { file: string; text: string; what: string }[] = [];
  const kind = f.value.kind;
  const put = (path: (string | number)[], value: unknown, what: string): void => {
    const how = setField(doc, path, value, edits, ctx);
    if (how === "set") changes.push(what);
  };
  // Only the fields git sets: one it leaves out keeps its live value, and stays out.
  for (const [field, live] of Object.entries(f.value.spec)) {
    if (!current.spec || !(field in current.spec) || sameField(kind, field, current.spec[field], live)) continue;
    put(["spec", field], live, field);
  }
  for (const field of f.leftOutFields) {
    // The service does not show it: git's value stays, unknown, never overwritten (src/shared/unknown.ts).
    if (f.nullFields.includes(field)) {
      if (current.spec && field in current.spec) {
        const inexact = f.notComparable.get(field);
        addUnknown(ctx.plan.unknown, f.address, [inexact === undefined ? { field } : { field, inexact }]);
      }
      continue;
    }
    if (current.spec && field in current.spec) {
      if (refuseShared(ctx, `${field} would be left out (the service holds a value the policy files cannot hold)`)) continue;
      doc.deleteIn(["spec", field]);
      edits.structural = true;
      changes.push(`${field} (left out: it keeps its live value)`);
    }
  }
  if (changes.some((c) => c.endsWith("(left out: it keeps its live value)")) && addComments(doc.get("spec", true) as Node | undefined, f.specComments)) {
    edits.structural = true;
  }
  const gitBatches = Array.isArray(current.batches) ? current.batches : [];
  for (const b of f.value.batches ?? []) {
    const i = gitBatches.findIndex((g) => g?.name === b.name);
    const text = f.batchValues.get(b.name);
    // A values file of its own: two batches whose names read alike in a file name never share one.
    const newValues = (): string => ctx.claimValues(policyDir, valuesFileFor(f.value.metadata.name, b.name));
    if (i < 0) {
      if (refuseShared(ctx, `batch ${b.name} (${b.status}) is in the service, not in git`)) continue;
      const file = text !== undefined ? newValues() : undefined;
      const entry = literalValue({ ...b, ...(file !== undefined ? { values: file } : {}) });
      const seq = doc.get("batches", true);
      if (isSeq(seq)) seq.add(quotedWhereNeeded(doc.createNode(entry)));
      else doc.set("batches", quotedWhereNeeded(doc.createNode([entry])));
      edits.structural = true;
      changes.push(`batch ${b.name} added`);
      if (file !== undefined && text !== undefined)
        values.push({ file: posix.join(policyDir, file), text, what: `values of ${address.batch(f.value.metadata.name, b.name)}` });
      continue;
    }
    const g = gitBatches[i] ?? {};
    if (g.status !== b.status) put(["batches", i, "status"], b.status, `batch ${b.name} status`);
    // The dates git sets take the service's, compared as plan compares them; one the service does not
    // show as a date keeps git's, noted (src/shared/unknown.ts). A date git leaves out stays out.
    for (const k of BATCH_DATES) {
      if (g[k] === undefined) continue;
      const unknown = f.batchDatesUnknown.get(b.name)?.find((u) => u.field === k);
      if (unknown) addUnknown(ctx.plan.unknown, address.batch(f.value.metadata.name, b.name), [unknown]);
      else if (b[k] !== undefined && g[k] !== b[k]) put(["batches", i, k], b[k], `batch ${b.name} ${k}`);
    }
    if (text === undefined) continue;
    if (typeof g.values === "string" && g.values !== "") {
      // git's own file keeps its name; it gets the service's values when they differ.
      const file = posix.normalize(posix.join(policyDir, g.values));
      if (!sameValues(readValues(file), text) && !refuseShared(ctx, `the values of batch ${b.name} differ from ${file}`))
        values.push({ file, text, what: `values of ${address.batch(f.value.metadata.name, b.name)}` });
    } else {
      if (refuseShared(ctx, `batch ${b.name} has values in the service and none in git`)) continue;
      const file = newValues();
      setValue(doc, ["batches", i, "values"], file, edits);
      changes.push(`batch ${b.name} values`);
      values.push({ file: posix.join(policyDir, file), text, what: `values of ${address.batch(f.value.metadata.name, b.name)}` });
    }
  }
  const batchesNode = (doc.get("batches", true) as Node | undefined) ?? (doc as unknown as { comment?: string | null });
  if (addComments(batchesNode, f.batchComments)) {
    edits.structural = true;
    changes.push("comments on batches left out");
  }
  return { changes, values };
}

/** A changed file's text: with scalar changes only, the original text with those scalars replaced
 *  where they stand (comments, spacing, flow style and ${VAR}s elsewhere untouched), checked to mean what
 *  the edited documents mean; else the documents written out again (comments kept, spacing normalised). */
function rewrite(original: string, docs: Document[], edits: FileEdits | undefined): string {
  const whole = docs.map((d) => d.toString({ lineWidth: 0 })).join("");
  if (!edits || edits.structural || !edits.splices.length) return whole;
  let text = original;
  for (const s of [...edits.splices].sort((a, b) => b.start - a.start)) text = text.slice(0, s.start) + s.text + text.slice(s.end);
  const meaning = (t: string): string => JSON.stringify(parseAllDocuments(t).map((d) => (d as Document).toJS()));
  return meaning(text) === meaning(whole) ? text : whole;
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
  const plan: ExportPlan = { writes: [], skipped: [], broken: [], gitOnly: [], unknown: new Map(), vars: [], refused: [] };
  const parsed = new Map<string, Document[]>();
  const where = new Map<string, { file: GitFile; index: number }>();
  // A file with a YAML error cannot be written again without losing what it says: it is left as it is,
  // with its first error's place, and so are the policies it may hold.
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
      // What the document means (its ${VAR}s filled, `$${` read as `${`), to match the service's names.
      const v = (g.values[index] ?? (doc.errors.length ? undefined : doc.toJS())) as { kind?: unknown; metadata?: { name?: unknown } } | null | undefined;
      if (!v || (v.kind !== "SspPolicy" && v.kind !== "TenantConfiguration") || typeof v.metadata?.name !== "string") return;
      const k = key(v.kind, v.metadata.name);
      // The first file that names a policy is its file (validate reports the second as a duplicate).
      if (!where.has(k)) where.set(k, { file: g, index });
    });
  }
  // Values files this export writes, or may write (a new policy file's), and those the folder holds.
  const claimed = new Set(files.flatMap((f) => f.valuesFiles.map((v) => v.file)));
  const claimValues = (policyDir: string, file: string): string => {
    let path = file;
    for (let i = 2; claimed.has(posix.join(policyDir, path)) || readValues(posix.join(policyDir, path)) !== undefined; i++)
      path = file.replace(/\.csv$/, `-${i}.csv`);
    claimed.add(posix.join(policyDir, path));
    return path;
  };
  const matched = new Set<string>();
  const dirty = new Map<string, string[]>();
  const edits = new Map<string, FileEdits>();
  for (const f of files) {
    const k = key(f.value.kind, f.value.metadata.name);
    const hit = where.get(k);
    // A policy a broken file may hold gets no second file.
    const maybeIn = hit ? undefined : [...broken.keys()].find((file) => git.find((g) => g.file === file)?.text.includes(literalText(f.value.metadata.name)));
    if (maybeIn) {
      plan.skipped.push(`${f.address}: not written, ${maybeIn} may hold it and has a YAML error`);
      continue;
    }
    if (hit && broken.has(hit.file.file)) {
      matched.add(k);
      continue;
    }
    if (!hit) {
      if (opts.sharedWith?.length) {
        plan.refused.push(`${f.address}: in the service, no file in git; ${sharedWords(opts.sharedWith)}`);
        continue;
      }
      plan.writes.push({ file: f.file, text: renderFile(f, header(f.file)), created: true, what: f.address });
      for (const v of f.valuesFiles) plan.writes.push({ file: v.file, text: v.text, created: true, what: `values of ${f.address}` });
      continue;
    }
    matched.add(k);
    const current = hit.file.values[hit.index];
    const doc = parsed.get(hit.file.file)?.[hit.index];
    if (current === undefined || !doc || !isMap(doc.contents)) {
      plan.skipped.push(
        `${hit.file.file} holds ${f.address} but could not be read with this environment's variables (revsync validate says why): left as it is`,
      );
      continue;
    }
    const fileEdits = edits.get(hit.file.file) ?? { splices: [], structural: false };
    edits.set(hit.file.file, fileEdits);
    const ctx: VarContext = {
      address: f.address,
      claimValues,
      plan,
      ...(opts.varHome ? { varHome: opts.varHome } : {}),
      ...(opts.sharedWith ? { sharedWith: opts.sharedWith } : {}),
    };
    const { changes, values } = updateDoc(doc, current as PolicyValue, f, posix.dirname(hit.file.file), readValues, fileEdits, ctx);
    if (changes.length) dirty.set(hit.file.file, [...(dirty.get(hit.file.file) ?? []), `${f.address}: ${changes.join(", ")}`]);
    for (const v of values) plan.writes.push({ file: v.file, text: v.text, created: readValues(v.file) === undefined, what: v.what });
  }
  for (const [file, what] of dirty) {
    const docs = parsed.get(file) ?? [];
    const original = git.find((g) => g.file === file)?.text ?? "";
    plan.writes.push({ file, text: rewrite(original, docs, edits.get(file)), created: false, what: what.join("; ") });
  }
  plan.broken.push(...broken.values());
  for (const [k, { file }] of where) {
    if (matched.has(k)) continue;
    const [kind, name] = k.split("\u0000") as [string, string];
    plan.gitOnly.push({ address: kind === "SspPolicy" ? address.ssp(name) : address.tenant(name), file: file.file });
  }
  return plan;
}
