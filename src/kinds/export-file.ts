/** A policy file a kind exports: what it holds, what it left out and why, and the values files beside
 *  it; and the one way a kind fits the service's values into a file's spec (fitSpec). */
import { fileValidator, type SchemaRef } from "../schema/ajv.js";
import { isInexact } from "../number.js";
import type { UnknownField } from "../shared/unknown.js";

/** The dates a batch of a policy file may set: git may set them, the service holds them. */
export const BATCH_DATES = ["effective_start_date", "effective_end_date"] as const;

export interface ExportedBatch {
  name: string;
  status: string;
  /** The values file, relative to the policy file. */
  values?: string;
  /** The batch's dates as the service holds them (YYYY-MM-DD), where it shows them as dates. */
  effective_start_date?: string;
  effective_end_date?: string;
}

export interface ExportedFile {
  /** Path relative to the export folder. */
  file: string;
  address: string;
  /** The address of one of its batches, where it lists batches. */
  batchAddress?: (name: string) => string;
  schema: SchemaRef;
  value: { apiVersion: string; kind: string; metadata: { name: string }; spec: Record<string, unknown>; batches?: ExportedBatch[] };
  /** Values files written beside the policy file: path relative to the export folder, and the text. */
  valuesFiles: { file: string; text: string }[];
  /** Each listed batch's values (CSV text), by batch name: what an existing file's batch is given. */
  batchValues: Map<string, string>;
  /** The spec fields left out (a comment says why): an existing file loses its own value for them,
   *  except for those the service does not show (nullFields), which keep git's value. */
  leftOutFields: string[];
  /** The spec fields the service shows as null, or as a number a double cannot hold exactly: unknown,
   *  never a value to write over git's (src/shared/unknown.ts). */
  nullFields: string[];
  /** Of those, the ones the service answers with a number that is not exact: the service's text. */
  notComparable: Map<string, string>;
  /** Comments written in place of what was left out: inside spec, and after the batches. */
  specComments: string[];
  batchComments: string[];
  /** One line per thing left out, for export to print. */
  leftOut: string[];
  /** Set when only some of its batches are exported (--target of a batch): a file git holds keeps the
   *  policy's own fields as they are. */
  batchesOnly?: boolean;
  /** Per batch, the dates the service does not show as dates (null, or text that is no date): git's
   *  stay, not compared (src/shared/unknown.ts). */
  batchDatesUnknown: Map<string, UnknownField[]>;
}

/** What export offers a kind to bring git's document of one of its exported files up to the service in
 *  place, beyond the spec (src/export/in-place.ts brings the spec): each edit keeps the rest of the file
 *  as it was (comments, ${VAR}s, order). Paths are the document's; files are relative to the export
 *  folder. */
export interface DocInGit {
  /** The document's value as git means it (its ${VAR}s filled). */
  readonly current: Record<string, unknown>;
  /** The folder of the policy file. */
  readonly dir: string;
  /** Sets a value to the service's: a ${VAR} keeps its place (this environment's vars: entry takes the
   *  value, or it is refused), and in a file other environments read too it is refused; "set" where the
   *  file holds the value now. */
  set(path: (string | number)[], value: unknown): "set" | "var" | "refused";
  /** Sets a value revsync chose (a values file's name), as literal text. */
  put(path: (string | number)[], value: unknown): void;
  /** Appends an entry to the list at `key` (made where the document has none). */
  append(key: string, entry: Record<string, unknown>): void;
  /** Adds comment lines the node at `key` (the document, where it has none) does not hold yet; whether
   *  it added any. */
  comment(key: string, lines: string[]): boolean;
  /** Refuses a difference in a file other environments read (their plans would change), said with
   *  `what`; whether it refused. */
  refuseShared(what: string): boolean;
  /** A values file name beside the policy file that no file and no other write takes. */
  claimValues(file: string): string;
  /** A file of the export folder as it holds it. */
  readValues(file: string): string | undefined;
  /** A values file to write; `named`: one the document names only now (it stands or falls with it). */
  writeValues(file: string, text: string, what: string, named?: boolean): void;
  /** What changed, in words ("batch FY26-H1 status"). */
  changed(what: string): void;
  /** Fields of `address` the service does not show: git's kept, not compared. */
  unknown(address: string, fields: UnknownField[]): void;
}

/** A value that differs between environments: export --all-envs writes it as `${name}`, each
 *  environment's value in its own vars: of revsync.yaml. */
export class VarRef {
  constructor(readonly name: string) {}
}

/** What one environment's service gives of an address. */
export interface Holding {
  env: string;
  file: ExportedFile;
}

/** What export --all-envs offers a kind to merge what it exports beyond a document's spec over the
 *  environments that hold the entry (Kind.mergeEnvs; src/export/all-envs.ts merges the spec). */
export interface EnvsMerge {
  /** The merged document's policy file, relative to the export folder. */
  readonly file: string;
  /** One field's values over some holders: as they are where they agree (as the kind compares them),
   *  else a VarRef named after `parts`; `what` says what reads it. */
  merged(field: string, holders: readonly Holding[], values: unknown[], parts: string[], what: string): unknown;
  /** A ${VAR} holding each environment's value (a vars: entry that holds exactly these is reused). */
  name(parts: string[], values: ReadonlyMap<string, string | number | boolean>, what: string): VarRef;
  /** A new file's path (relative to the export folder) that nothing holds. */
  unique(path: string): string;
}

/** What export --all-envs offers a kind to bring git's document of an entry up to every environment that
 *  reads it, in place, beyond the spec (Kind.prepareEnvsInGit; src/export/all-envs-in-place.ts brings
 *  the spec): a value that differs becomes a ${VAR}, what only some hold is scoped to them. Paths are the
 *  document's. */
export interface EnvsDocInGit {
  /** The policy file, relative to the export folder. */
  readonly file: string;
  /** The environments that hold the entry and read this document, in revsync.yaml's order. */
  readonly holders: readonly Holding[];
  /** Every environment of revsync.yaml, in its order. */
  readonly order: readonly string[];
  /** The environments the document is for. */
  readonly scope: string[];
  /** To merge what git lists nothing of yet. */
  readonly merge: EnvsMerge;
  /** The value at `path` as git writes it (its ${VAR}s unfilled). */
  get(path: (string | number)[]): unknown;
  /** The environments the node at `path` names (its own environments:), if it names any. */
  scopeAt(path: (string | number)[]): string[] | undefined;
  /** Names environments at `path`: no key where they are every one of `all`. */
  setScope(path: (string | number)[], envs: string[], all: readonly string[]): void;
  /** A literal at `path` whose values differ between environments becomes a ${VAR} (`others`: the
   *  environments that read it holding no value, which keep git's). */
  varFor(path: (string | number)[], values: Map<string, unknown>, others: string[], parts: string[], what: string): "var" | "same" | "refused" | "kept";
  /** Sets text revsync wrote itself (a ${VAR}) at `path`. */
  setOwn(path: (string | number)[], text: string): void;
  /** Appends a merged entry to the list at `key` (each VarRef as its ${VAR}, text as literal text). */
  append(key: string, entry: Record<string, unknown>): void;
  /** A values file to write, relative to the export folder. */
  writeValues(file: string, text: string, what: string): void;
  /** What changed, in words. */
  note(what: string): void;
}

/** A new file of the policy file kind `kind` for the entry at `address` named `name`, nothing in it yet. */
export function newFile(file: string, address: string, schema: SchemaRef, kind: string, name: string, batchAddress?: (name: string) => string): ExportedFile {
  return {
    file,
    address,
    ...(batchAddress ? { batchAddress } : {}),
    schema,
    value: { apiVersion: "revsync/v1", kind, metadata: { name }, spec: {} },
    specComments: [],
    batchComments: [],
    leftOut: [],
    valuesFiles: [],
    batchValues: new Map(),
    leftOutFields: [],
    nullFields: [],
    notComparable: new Map(),
    batchDatesUnknown: new Map(),
  };
}

const show = (v: unknown): string => JSON.stringify(v) ?? "undefined";

/** Why export writes nothing for one copy of a name the service holds twice (src/plan/held-twice.ts): a
 *  policy file names what it manages by its name, so it could mean either copy, and two files of one
 *  name fail validate. `copy`: the copy in words ('SSP policy "X" (compliance_id "SSP-1")'). */
export function heldTwiceRefusal(copy: string): string {
  return `${copy}: not exported, the service holds its name more than once and a policy file names what it manages by its name alone; remove or rename the copies in the service until one holds the name, then export again`;
}

/** Leaves out of spec each field the policy file format refuses (a value outside a documented list, a
 *  type the format does not take) or that the service shows as null: a field left out keeps its live
 *  value and is never a change. Each is named, with its live value, in a comment in its place.
 *  `unknownKeepsGit`: a field the service does not show (null, or a number that is not comparable) keeps
 *  git's value in a file git holds (docs/decisions.md, "Nulls are unknown, not a change"); a kind that
 *  compares such a field as it is leaves it out. */
export function fitSpec(f: ExportedFile, live: Record<string, unknown>, fields: readonly string[], unknownKeepsGit: boolean): void {
  for (const k of fields) {
    const v = live[k];
    if (v === undefined) continue;
    if (v === null) {
      f.specComments.push(` ${k}: left out, the service shows null (unknown); it keeps its live value`);
      f.leftOutFields.push(k);
      if (unknownKeepsGit) f.nullFields.push(k);
      f.leftOut.push(`${f.address}: ${k} (the service shows null)`);
      continue;
    }
    if (isInexact(v)) {
      // A number a double cannot hold exactly is not comparable (the one number rule): never written into
      // git, where it would read as another number, and git's own value stays, as for a null.
      f.specComments.push(` ${k}: left out, the service answers ${v.text}, a number a double cannot hold exactly (not comparable); it keeps its live value`);
      f.leftOutFields.push(k);
      if (unknownKeepsGit) {
        f.nullFields.push(k);
        f.notComparable.set(k, v.text);
      }
      f.leftOut.push(`${f.address}: ${k} (the service answers ${v.text}, not comparable)`);
      continue;
    }
    f.value.spec[k] = v;
  }
  dropRefused(f, fields.length);
}

/** Takes out of spec, one by one, each field the file's schema refuses (at most `most`). */
function dropRefused(f: ExportedFile, most: number): void {
  const validate = fileValidator(f.schema);
  const doc: unknown = f.value;
  for (let guard = 0; guard < most && !validate(doc); guard++) {
    const err = (validate.errors ?? []).find((e) => e.instancePath.startsWith("/spec/"));
    const field = err?.instancePath.split("/")[2];
    if (!field || !(field in f.value.spec)) break;
    const value = f.value.spec[field];
    delete f.value.spec[field];
    const why =
      err?.keyword === "enum" || /must be equal to one of the allowed values/.test(err?.message ?? "")
        ? `holds a value a policy file may not (${describeOutside(field, value, err?.instancePath ?? "")})`
        : `holds ${show(value)}, which a policy file may not (${err?.message ?? "invalid"})`;
    f.specComments.push(` ${field}: left out, the service ${why}; it keeps its live value`);
    f.leftOutFields.push(field);
    f.leftOut.push(`${f.address}: ${field} (${describeOutside(field, value, err?.instancePath ?? "")})`);
  }
}

/** The offending value itself: for a list, the item at fault (an operator of a condition, say). */
function describeOutside(field: string, value: unknown, pointer: string): string {
  const parts = pointer.split("/").slice(3);
  let node: unknown = value;
  for (const p of parts) node = (node as Record<string, unknown> | undefined)?.[p];
  const last = parts[parts.length - 1];
  return last && node !== undefined && typeof node !== "object" ? `${last} ${show(node)}` : `${field} ${show(value)}`;
}
