/** export --all-envs into files git holds already: before each environment's export is placed into
 *  them (in-place.ts, one environment after another), what only all environments together can say is
 *  written first, in place: a literal field whose value differs between the environments that hold the
 *  policy becomes a `${VAR}` (each environment's value in its vars:, git's own value for an environment
 *  the file is for that does not hold the policy yet); a batch only some hold is scoped to them; a
 *  document gains an environment that holds its policy. Then each environment's own placement finds
 *  nothing left that another environment would see differently. Pure: documents in, edits out. */
import { isMap, isNode, isScalar, isSeq, type Document } from "yaml";
import { sameJson } from "../canonical-json.js";
import { variablesIn } from "../config/interpolate.js";
import { scopeOf, SCOPE_KEY } from "../config/scope.js";
import type { Kind } from "../kinds/kind.js";
import type { EnvsDocInGit } from "../kinds/export-file.js";
import { envsMerge, VarRef, type Holding, type VarNamer } from "./all-envs.js";
import { setLiveValue, setOwnValue, type FileEdits, type Refusal } from "./in-place.js";
import { canonicalJson } from "../canonical-json.js";
import { quotedWhereNeeded } from "./mapping.js";

/** A document of git's export folder that names an address. */
export interface GitDocRef {
  file: string;
  doc: Document;
  /** The documents of its file, in order (a document split in two adds one after it). */
  docs: Document[];
  edits: FileEdits;
}

/** What the preparation of one address needs. */
export interface PrepareCtx {
  order: readonly string[];
  kind: Kind | undefined;
  namer: VarNamer;
  /** A new values file's path (relative to the export folder) that nothing holds. */
  unique: (path: string) => string;
  readValues: (file: string) => string | undefined;
}

export interface Prepared {
  /** Values files to write, relative to the export folder. */
  values: { file: string; text: string; what: string }[];
  refused: Refusal[];
  /** What changed, per file, in words. */
  changes: Map<string, string[]>;
  /** For each environment (env\0address), the environments that read its document without holding
   *  the policy: a literal export changes there is refused (their plans would change). */
  sharedWith: Map<string, string[]>;
  /** Addresses left out of every environment's placement (refused here). */
  excluded: Set<string>;
}

const scopeNode = (d: GitDocRef): unknown => d.doc.getIn(["metadata", SCOPE_KEY], true);
const effective = (scope: string[] | undefined, order: readonly string[]): string[] => scope ?? [...order];
const inOrder = (envs: Iterable<string>, order: readonly string[]): string[] => order.filter((e) => new Set(envs).has(e));
const isScalarValue = (v: unknown): v is string | number | boolean => typeof v === "string" || typeof v === "number" || typeof v === "boolean";
/** What a literal of a file means (`$${` is a `${`). */
const meaning = (v: unknown): unknown => (typeof v === "string" ? v.replaceAll("$${", "${") : v);

function note(p: Prepared, d: GitDocRef, what: string): void {
  p.changes.set(d.file, [...(p.changes.get(d.file) ?? []), what]);
}

/** Sets a list of environments at a path: the list, or no key when it would name every environment the
 *  document is for. */
function setScope(d: GitDocRef, path: (string | number)[], envs: string[], all: readonly string[]): void {
  d.edits.structural = true;
  if (sameJson(envs, [...all])) d.doc.deleteIn([...path, SCOPE_KEY]);
  else d.doc.setIn([...path, SCOPE_KEY], d.doc.createNode(envs, { flow: true }));
}

/** Which of git's documents of an address each environment that holds it reads: the one whose scope
 *  holds it; the only one, widened, where none does. Undefined (and a refusal) when that cannot be said. */
function assign(address: string, holdings: Holding[], docs: GitDocRef[], ctx: PrepareCtx, p: Prepared): Map<GitDocRef, Holding[]> | undefined {
  const out = new Map<GitDocRef, Holding[]>();
  for (const h of holdings) {
    const mine = docs.filter((d) => effective(scopeOf(scopeNode(d)), ctx.order).includes(h.env));
    let d = mine.length === 1 ? mine[0] : undefined;
    if (!mine.length && docs.length === 1 && docs[0]) {
      d = docs[0];
      const widened = inOrder([...effective(scopeOf(scopeNode(d)), ctx.order), h.env], ctx.order);
      setScope(d, ["metadata"], widened, ctx.order);
      note(p, d, `${address}: metadata.environments gains ${h.env}, which holds it`);
    }
    if (!d) {
      const why = mine.length
        ? `${mine.length} documents of it are for ${h.env}`
        : `none of git's ${docs.length} documents of it is for ${h.env} (metadata.environments)`;
      p.refused.push({
        message: `${address}: environment ${h.env} holds it, and ${why}: not exported (give ${h.env} exactly one of them, and export again)`,
        because: "shared",
      });
      return undefined;
    }
    out.set(d, [...(out.get(d) ?? []), h]);
  }
  return out;
}

/** A literal at a path whose values differ between the holders: a ${VAR} in its place, with each
 *  holder's value and, for an environment the document is for that holds no such value, git's own. */
function varFor(
  d: GitDocRef,
  path: (string | number)[],
  values: Map<string, unknown>,
  others: string[],
  parts: string[],
  what: string,
  ctx: PrepareCtx,
): "var" | "same" | "refused" | "kept" {
  const list = [...values.values()];
  const norm = (v: unknown): unknown => (ctx.kind?.compared ? ctx.kind.compared(String(path[path.length - 1]), v) : v);
  if (list.every((v) => sameJson(norm(v), norm(list[0])))) return "same";
  const raw = d.doc.getIn(path);
  if (raw !== undefined && variablesIn(JSON.stringify(raw)).length) return "kept"; // each environment's placement sets its own
  if (!list.every(isScalarValue) || (raw !== undefined && !isScalarValue(raw))) return "refused";
  const all = new Map(values as Map<string, string | number | boolean>);
  for (const env of others) if (raw !== undefined) all.set(env, meaning(raw) as string | number | boolean);
  const ref = ctx.namer.name(parts, all, what);
  setOwnValue(d.doc, path, `\${${ref.name}}`, d.edits);
  return "var";
}

/** The spec fields git sets, where the holders' values differ: each a ${VAR}. A list that differs
 *  cannot be one: its field is returned (splitByLists gives each group of environments its document). */
function prepareSpec(address: string, d: GitDocRef, holders: Holding[], others: string[], ctx: PrepareCtx, p: Prepared): string[] {
  const spec = d.doc.get("spec", true);
  if (!isMap(spec)) return [];
  const name = holders[0]?.file.value.metadata.name ?? "";
  const lists: string[] = [];
  for (const item of spec.items) {
    const field = isScalar(item.key) ? String(item.key.value) : undefined;
    if (!field || !holders.every((h) => field in h.file.value.spec)) continue;
    const values = new Map(holders.map((h) => [h.env, h.file.value.spec[field]]));
    const r = varFor(d, ["spec", field], values, others, [name, field], `${address}: ${field}`, ctx);
    if (r === "var") note(p, d, `${address}: ${field} differs between ${holders.map((h) => h.env).join(", ")}: now a \${VAR}`);
    if (r === "refused") lists.push(field);
  }
  return lists;
}

/** A document whose lists differ between the environments it is for (a list cannot be a ${VAR}):
 *  one copy for each group of environments that agree, scoped to it, with the group's lists, each
 *  after the one before. Undefined when a list is written with variables (export cannot split them). */
function splitByLists(address: string, d: GitDocRef, holders: Holding[], lists: string[], ctx: PrepareCtx, p: Prepared): [GitDocRef, Holding[]][] | undefined {
  if (lists.some((f) => variablesIn(JSON.stringify(d.doc.getIn(["spec", f]) ?? null)).length)) {
    p.refused.push({
      message: `${address}: ${lists.join(", ")} differ${lists.length === 1 ? "s" : ""} between ${holders.map((h) => h.env).join(", ")}, and git writes ${lists.length === 1 ? "it" : "them"} with variables: not exported (give each environment its own document of the policy, with metadata.environments, and export again)`,
      because: "variable",
    });
    return undefined;
  }
  const norm = (f: string, v: unknown): unknown => (ctx.kind?.compared ? ctx.kind.compared(f, v) : v);
  const groups = new Map<string, Holding[]>();
  for (const h of holders) {
    const key = canonicalJson(lists.map((f) => norm(f, h.file.value.spec[f])) as never);
    groups.set(key, [...(groups.get(key) ?? []), h]);
  }
  const out: [GitDocRef, Holding[]][] = [];
  let at = d.docs.indexOf(d.doc);
  for (const group of groups.values()) {
    const doc = out.length ? d.doc.clone() : d.doc;
    if (out.length) {
      d.docs.splice(++at, 0, doc);
      // Its own document of the file: the copy starts with ---.
      if (doc.directives) doc.directives.docStart = true;
    }
    const ref: GitDocRef = { ...d, doc };
    setScope(
      ref,
      ["metadata"],
      group.map((h) => h.env),
      [],
    );
    for (const f of lists) setLiveValue(doc, ["spec", f], (group[0] as Holding).file.value.spec[f], d.edits);
    out.push([ref, group]);
  }
  d.edits.structural = true;
  note(
    p,
    d,
    `${address}: ${lists.join(", ")} differ${lists.length === 1 ? "s" : ""}: one document each for ${[...groups.values()].map((g) => g.map((h) => h.env).join(", ")).join("; ")}`,
  );
  return out;
}

/** What a kind brings what it exports beyond the spec into git's document with, for the environments
 *  that read it (Kind.prepareEnvsInGit). */
function envsDoc(d: GitDocRef, holders: Holding[], ctx: PrepareCtx, p: Prepared): EnvsDocInGit {
  return {
    file: d.file,
    holders,
    order: ctx.order,
    scope: effective(scopeOf(scopeNode(d)), ctx.order),
    merge: envsMerge(ctx, d.file, ctx.unique),
    get(path) {
      const node = d.doc.getIn(path, false);
      return isNode(node) ? node.toJS(d.doc) : node;
    },
    scopeAt: (path) => scopeOf(d.doc.getIn([...path, SCOPE_KEY], true)),
    setScope: (path, envs, all) => setScope(d, path, envs, all),
    varFor: (path, values, others, parts, what) => varFor(d, path, values, others, parts, what, ctx),
    setOwn: (path, text) => setOwnValue(d.doc, path, text, d.edits),
    append(key, entry) {
      const node = quotedWhereNeeded(d.doc.createNode(ownText(entry)));
      const seq = d.doc.get(key, true);
      if (isSeq(seq)) seq.add(node);
      else d.doc.set(key, d.doc.createNode([node]));
      d.edits.structural = true;
    },
    writeValues: (file, text, what) => void p.values.push({ file, text, what }),
    note: (what) => note(p, d, what),
  };
}

/** A merged entry as a file writes it: each VarRef as `${name}` (the service's text as literal text). */
function ownText(entry: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(entry).map(([k, v]) => [k, v instanceof VarRef ? `\${${v.name}}` : typeof v === "string" ? v.replaceAll("${", "$${") : v]),
  );
}

/** One address git holds, prepared for every environment's placement. */
export function prepareAddress(address: string, holdings: Holding[], docs: GitDocRef[], ctx: PrepareCtx, p: Prepared): void {
  const assigned = assign(address, holdings, docs, ctx, p);
  if (!assigned) return void p.excluded.add(address);
  for (const [d, holders] of assigned) {
    let others = effective(scopeOf(scopeNode(d)), ctx.order).filter((e) => !holders.some((h) => h.env === e));
    if (others.length) {
      // Adopting every environment: a document is for those that hold its policy, so that each plan
      // right after says "No changes" (the change of scope is in the diff a reviewer reads).
      setScope(
        d,
        ["metadata"],
        holders.map((h) => h.env),
        ctx.order,
      );
      note(
        p,
        d,
        `${address}: metadata.environments ${holders.map((h) => h.env).join(", ")} (${others.join(", ")} ${others.length === 1 ? "does" : "do"} not hold it)`,
      );
      others = [];
    }
    for (const h of holders) p.sharedWith.set(`${h.env}\u0000${address}`, others);
    const lists = prepareSpec(address, d, holders, others, ctx, p);
    const parts = lists.length ? splitByLists(address, d, holders, lists, ctx, p) : [[d, holders] as [GitDocRef, Holding[]]];
    if (!parts) return void p.excluded.add(address);
    for (const [part, group] of parts) {
      if (part !== d) prepareSpec(address, part, group, [], ctx, p);
      ctx.kind?.prepareEnvsInGit?.(envsDoc(part, group, ctx, p));
    }
  }
}
