/** export --all-envs: every environment's service adopted into one set of policy files. A field equal in
 *  every environment that holds the policy is written as it is; a field that differs becomes a `${VAR}`,
 *  each environment's value in its own `vars:` of revsync.yaml; a policy or batch only some environments
 *  hold is scoped to them (metadata.environments, a batch's environments); a policy whose lists differ
 *  (a list cannot be a ${VAR}) is one document per group of environments that agree, each scoped. So
 *  `plan --env E` right after is "No changes" for every E. Pure: the caller reads and writes. */
import { Document, isScalar, isSeq, visit } from "yaml";
import { canonicalJson, sameJson } from "../canonical-json.js";
import { literalValue } from "../config/interpolate.js";
import { VarRef, type EnvsMerge, type ExportedFile, type Holding } from "../kinds/export-file.js";
import type { Kind, Registry } from "../kinds/kind.js";
import { KINDS, kindOfFile } from "../kinds/registry.js";
import { slug } from "../shared/address.js";
import { placeComments, quotedWhereNeeded } from "./mapping.js";

export { VarRef, type Holding };

/** One environment's `vars:` entry that export sets, and what reads it. */
export interface EnvVar {
  env: string;
  name: string;
  value: string | number | boolean;
  what: string;
}

/** One document of the merged files: its value (with VarRefs), scope, comments and values files. */
export interface MergedDoc {
  address: string;
  /** The export of the first environment that holds it (its kind, its batch addresses). */
  base: ExportedFile;
  /** The environments it is for; undefined: every environment of revsync.yaml. */
  scope?: string[];
  value: { apiVersion: string; kind: string; metadata: { name: string; environments?: string[] }; spec: Record<string, unknown>; [key: string]: unknown };
  specComments: string[];
  batchComments: string[];
  /** Values files beside it, relative to the policy file's folder. */
  valuesFiles: { file: string; text: string }[];
  /** Lines of what was left out, each naming its environments. */
  leftOut: string[];
}

/** Names the `${VAR}`s of differing values: an existing entry of `vars:` that holds exactly these values
 *  in these environments is reused (a contra account the repo names already); else a name made of the
 *  policy's and the field's (hardware_ssp_floor_percentage) that no environment's vars hold. */
export class VarNamer {
  private made = new Map<string, Map<string, unknown>>();
  readonly sets: EnvVar[] = [];
  constructor(private readonly existing: ReadonlyMap<string, Readonly<Record<string, unknown>>>) {}

  name(parts: string[], values: ReadonlyMap<string, string | number | boolean>, what: string): VarRef {
    const fits = (held: (env: string) => unknown): boolean => [...values].every(([env, v]) => sameJson(held(env), v));
    const names = new Set([...this.existing.values()].flatMap((vars) => Object.keys(vars)));
    const reuse = [...names].sort().find((n) => fits((env) => this.existing.get(env)?.[n]));
    if (reuse) return new VarRef(reuse);
    const base = parts.map((p) => slug(p).replace(/-/g, "_")).join("_");
    for (let i = 1; ; i++) {
      const name = i === 1 ? base : `${base}_${i}`;
      const mine = this.made.get(name);
      if (mine && fits((env) => mine.get(env))) return new VarRef(name);
      if (mine || names.has(name)) continue;
      this.made.set(name, new Map(values));
      for (const [env, value] of values) this.sets.push({ env, name, value, what });
      return new VarRef(name);
    }
  }
}

const isScalarValue = (v: unknown): v is string | number | boolean => typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/** The environments of a list, in revsync.yaml's order. */
const envsOf = (holdings: readonly Holding[]): string[] => holdings.map((h) => h.env);

/** What the merge of one address needs. */
interface MergeCtx {
  order: readonly string[];
  kind: Kind | undefined;
  namer: VarNamer;
}

/** Whether every holding's value of a field is the same, as its kind compares it. */
function allSame(ctx: MergeCtx, field: string, values: unknown[]): boolean {
  const norm = (v: unknown): unknown => (ctx.kind?.compared ? ctx.kind.compared(field, v) : v);
  return values.every((v) => sameJson(norm(v), norm(values[0])));
}

/** The value of a field over the holdings: as it is where they agree, else a VarRef (scalars only). */
function mergedValue(ctx: MergeCtx, field: string, holdings: readonly Holding[], values: unknown[], parts: string[], what: string): unknown {
  if (allSame(ctx, field, values)) return values[0];
  const byEnv = new Map(holdings.map((h, i) => [h.env, values[i] as string | number | boolean]));
  return ctx.namer.name(parts, byEnv, what);
}

/** Comment lines of several environments: a line all of them have as it is, else naming its environments. */
function mergedLines(holdings: readonly Holding[], of: (f: ExportedFile) => string[]): string[] {
  const lines = new Map<string, string[]>();
  for (const h of holdings) for (const l of of(h.file)) lines.set(l, [...(lines.get(l) ?? []), h.env]);
  const named = (l: string, envs: string[]): string => (l.startsWith(" ") ? ` (${envs.join(", ")})${l}` : `(${envs.join(", ")}) ${l}`);
  return [...lines].map(([l, envs]) => (envs.length === holdings.length ? l : named(l, envs)));
}

/** The spec of one document: each field every holding shows, merged; one some leave out stays out. */
function mergedSpec(ctx: MergeCtx, holdings: readonly Holding[], name: string, address: string): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  const fields = [...new Set(holdings.flatMap((h) => Object.keys(h.file.value.spec)))];
  for (const field of fields) {
    if (!holdings.every((h) => field in h.file.value.spec)) continue;
    const values = holdings.map((h) => h.file.value.spec[field]);
    spec[field] = mergedValue(ctx, field, holdings, values, [name, field], `${address}: ${field}`);
  }
  return spec;
}

/** What a kind merges what it exports beyond the spec with (Kind.mergeEnvs). */
export function envsMerge(ctx: Pick<MergeCtx, "kind" | "namer">, file: string, unique: (path: string) => string): EnvsMerge {
  const m: MergeCtx = { order: [], ...ctx };
  return {
    file,
    merged: (field, holders, values, parts, what) => mergedValue(m, field, holders, values, parts, what),
    name: (parts, values, what) => ctx.namer.name(parts, values, what),
    unique,
  };
}

/** One document for a group of environments that agree on every list. */
function mergedDoc(ctx: MergeCtx, holdings: readonly Holding[], scope: string[] | undefined, file: string, unique: (p: string) => string): MergedDoc {
  const base = { ...(holdings[0] as Holding).file, file };
  const name = base.value.metadata.name;
  const doc: MergedDoc = {
    address: base.address,
    base,
    ...(scope ? { scope } : {}),
    value: { apiVersion: base.value.apiVersion, kind: base.value.kind, metadata: { name, ...(scope ? { environments: scope } : {}) }, spec: {} },
    specComments: mergedLines(holdings, (f) => f.specComments),
    batchComments: mergedLines(holdings, (f) => f.batchComments),
    valuesFiles: [],
    leftOut: mergedLines(holdings, (f) => f.leftOut),
  };
  doc.value.spec = mergedSpec(ctx, holdings, name, base.address);
  const beyond = ctx.kind?.mergeEnvs?.(holdings, envsMerge(ctx, file, unique));
  if (beyond) {
    Object.assign(doc.value, beyond.value);
    doc.valuesFiles.push(...beyond.valuesFiles);
  }
  return doc;
}

/** The holdings of one address split into groups that agree on every list field (a list cannot be a
 *  ${VAR}): one group when they all do. */
function groupsOf(ctx: MergeCtx, holdings: readonly Holding[]): Holding[][] {
  const fields = [...new Set(holdings.flatMap((h) => Object.keys(h.file.value.spec)))];
  const lists = fields.filter((k) => {
    const values = holdings.map((h) => h.file.value.spec[k]);
    return values.every((v) => v !== undefined) && values.some((v) => !isScalarValue(v) && v !== null) && !allSame(ctx, k, values);
  });
  const groups = new Map<string, Holding[]>();
  for (const h of holdings) {
    const key = canonicalJson(lists.map((k) => (ctx.kind?.compared ? ctx.kind.compared(k, h.file.value.spec[k]) : h.file.value.spec[k])) as never);
    groups.set(key, [...(groups.get(key) ?? []), h]);
  }
  return [...groups.values()];
}

/** Every environment's exported files merged: the documents, by address, in the first environment's
 *  order of files. `order`: the environments of revsync.yaml; `taken`: paths the folder holds. */
export function mergeExports(
  perEnv: readonly { env: string; files: readonly ExportedFile[] }[],
  order: readonly string[],
  namer: VarNamer,
  taken: ReadonlySet<string>,
  kinds: Registry = KINDS,
): MergedDoc[] {
  const byAddress = new Map<string, Holding[]>();
  for (const env of order)
    for (const file of perEnv.find((p) => p.env === env)?.files ?? []) byAddress.set(file.address, [...(byAddress.get(file.address) ?? []), { env, file }]);
  const used = new Set(taken);
  const unique = (file: string): string => {
    let path = file;
    for (let i = 2; used.has(path); i++) path = file.replace(/\.(yaml|csv)$/, `-${i}.$1`);
    used.add(path);
    return path;
  };
  const docs: MergedDoc[] = [];
  for (const holdings of byAddress.values()) {
    const ctx: MergeCtx = { order, kind: kindOfFile(kinds, (holdings[0] as Holding).file.value.kind), namer };
    const file = unique((holdings[0] as Holding).file.file);
    for (const group of groupsOf(ctx, holdings)) {
      const scope = group.length === order.length ? undefined : envsOf(group);
      docs.push(mergedDoc(ctx, group, scope, file, unique));
    }
  }
  return docs;
}

/** A merged value as a file writes it: the service's text as literal text, each VarRef as `${name}`. */
function written(value: unknown): unknown {
  if (value instanceof VarRef) return `\${${value.name}}`;
  if (Array.isArray(value)) return value.map(written);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, written(v)]));
  return literalValue(value);
}

/** The text of one policy file holding merged documents (of one address): the header, then each. */
export function renderMerged(docs: readonly MergedDoc[], header: string[]): string {
  const texts = docs.map((d) => {
    const doc = new Document(written(d.value));
    quotedWhereNeeded(doc.contents);
    // A scope reads best on one line: [sandbox, production].
    visit(doc, {
      Pair(_, pair) {
        if (isScalar(pair.key) && pair.key.value === "environments" && isSeq(pair.value)) pair.value.flow = true;
      },
    });
    placeComments(doc, d);
    return doc.toString({ lineWidth: 0 });
  });
  return `${header.map((h) => `# ${h}`).join("\n")}\n${texts.join("---\n")}`;
}
