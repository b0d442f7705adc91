import type { Diagnostic } from "./diagnostics.js";
import { at, schemaDiagnostics, type SchemaError } from "./schema-diagnostics.js";
import { coerceEnvText } from "./interpolate.js";
import { schemaJson, type SchemaRef } from "../schema/ajv.js";
import type { SourceDoc } from "./yaml-source.js";
import type { ParsedValues } from "./values.js";

/** One policy document of the repo, as the rules check it: `kind` is the `kind:` it carries. */
export interface PolicyDoc {
  src: SourceDoc;
  absFile: string;
  kind: string;
}

/** Reports a problem of a document at a place of it (a JSON pointer; `key`: the key's place, not the value's;
 *  `severity`: an error unless said, a warning leaves validate's exit 0 and lets plan run). */
export type Emit = (
  doc: PolicyDoc,
  pointer: string,
  message: string,
  opts?: { key?: boolean; rule: string; offset?: number; severity?: Diagnostic["severity"] },
) => void;

/** A document's spec, as its rules read it. */
export const specOf = <T>(d: PolicyDoc): T => (d.src.value as { spec?: T }).spec ?? ({} as T);

/** Values files parsed while checking, by absolute path: the desired state takes them from here, so each
 *  file is read once per load. */
export type ParsedValuesByPath = Map<string, ParsedValues>;

/** What a kind's rules are given: the repo's root, where to report, the diagnostics of the files they
 *  read besides the policy files (values files), and those files as parsed. */
export interface RuleContext {
  root: string;
  emit: Emit;
  extra: Diagnostic[];
  parsed: ParsedValuesByPath;
}

/** What reading git's policy files asks of a resource kind (src/kinds/kind.ts gives the rest of a kind):
 *  the `kind:` its files carry, their schema, the rules they keep beyond it, and the entry a checked
 *  document makes in git's state. config stands below the kinds and knows none of them. */
export interface FileKind<D = unknown> {
  /** The kind's name, the first segment of its addresses ("ssp"): git's state is keyed by it. */
  readonly name: string;
  /** The `kind:` of its policy files ("SspPolicy"). */
  readonly fileKind: string;
  readonly schema: SchemaRef;
  /** The lists of its documents whose items may carry `environments:` (config/scope.ts), as an SSP
   *  policy's batches do: an item of other environments is taken out before anything reads it. */
  readonly scopedLists?: readonly string[];
  /** A schema problem that one of its rules reports in its own words (not said twice). */
  ownWords?(pointer: string, key?: string): boolean;
  /** Its rules beyond the schema, over the documents of its kind. */
  rules?(docs: PolicyDoc[], ctx: RuleContext): void;
  /** The entry of git's state a document that passed every check makes. `cwd`: where paths are shown from. */
  entry(doc: PolicyDoc, ctx: { cwd: string; parsed: ParsedValuesByPath }): D;
  /** Every address git's entries of this kind name (a policy's and each of its batches'). */
  addressesIn(entries: readonly D[]): string[];
}

/** Why a name cannot travel in a URL path as itself (a batch's name is a segment of the review and
 *  approve paths, a policy's goes into queries and addresses): "." and ".." are dot segments a URL
 *  resolves away, and control characters no service keeps as they are. */
export function unsafeName(name: string): string | undefined {
  if (name === "." || name === "..") return `${JSON.stringify(name)} is a dot segment: in a URL path it would name another resource`;
  if ([...name].some((ch) => (ch.codePointAt(0) ?? 0) < 0x20 || ch === "\u007f")) return `${JSON.stringify(name)} holds a control character`;
  if (name.trim() === "") return "a name of blanks only";
  return undefined;
}

export function duplicateNames(docs: PolicyDoc[], emit: Emit): void {
  const seen = new Map<string, PolicyDoc>();
  for (const d of docs) {
    const name = (d.src.value as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== "string") continue;
    const unsafe = unsafeName(name);
    if (unsafe) emit(d, "/metadata/name", `the name cannot be used: ${unsafe}`, { rule: "unsafe-name" });
    const key = `${d.kind}\u0000${name}`;
    const first = seen.get(key);
    if (first) {
      const p = at(first.src, "/metadata/name");
      emit(d, "/metadata/name", `duplicate ${d.kind} name ${JSON.stringify(name)}: also defined at ${first.src.file}:${p.line}`, { rule: "duplicate-name" });
    } else seen.set(key, d);
  }
}

/** Whether the number at a pointer was read as written: one that is not exact was reported where the
 *  file is read, and a rule comparing the number YAML rounded it to would speak of a number nobody wrote. */
export const exactAt = (d: PolicyDoc, pointer: string): boolean => !d.src.inexact?.has(pointer);
/** The JSON Schema type at a pointer of a document (following properties and items). */
function schemaTypeAt(schema: object, pointer: string): unknown {
  let node = schema as { properties?: Record<string, object>; items?: object; type?: unknown } | undefined;
  for (const seg of pointer.split("/").slice(1)) {
    node = (node?.properties?.[seg] ?? (/^\d+$/.test(seg) ? node?.items : undefined)) as typeof node;
    if (!node) return undefined;
  }
  return node?.type;
}

/** A whole-value ${VAR} from the process environment is text; where the schema wants a number or a
 *  boolean and the text is such a literal, it becomes one (hardware_floor=80 fills an integer field). */
function typeEnvValues(src: SourceDoc, schema: SchemaRef): void {
  for (const [pointer, text] of src.envTexts ?? []) {
    const typed = coerceEnvText(text, schemaTypeAt(schemaJson(schema), pointer));
    if (typed === text) continue;
    const parts = pointer.split("/").slice(1);
    const last = parts.pop();
    let node = src.value as Record<string, unknown> | undefined;
    for (const seg of parts) node = node?.[seg] as Record<string, unknown> | undefined;
    if (node && last !== undefined) node[last] = typed;
  }
}

/** Schema errors that a semantic rule says in its own words, at the same place: the schemas hold these
 *  rules so that every validator refuses what revsync refuses, and revsync says each problem once. A
 *  name's form (unsafe-name), a batch's dates (batch-dates), a formula policy's expression and batches
 *  (formula-expression, formula-batches: the schema's if/then). */
function restated(pointer: string, e: SchemaError): boolean {
  if (e.keyword === "if" || e.schemaPath.startsWith("#/then/")) return true;
  return e.keyword === "pattern" && /^\/(?:metadata\/name|batches\/\d+\/(?:name|effective_start_date|effective_end_date))$/.test(pointer);
}

/** A problem with a value filled from variables names them, and where they came from: the value the
 *  message quotes is not what the file says. */
function namingVariables(src: SourceDoc, d: Diagnostic): Diagnostic {
  const from = d.pointer === undefined || d.rule === "unknown-field" ? undefined : src.variables?.get(d.pointer);
  return from ? { ...d, message: `${d.message} (${from.words})`, variables: from.names } : d;
}

/** Schema checks per kind, then the rules every kind keeps (names), then each kind's own. */
export function runRules(root: string, docs: PolicyDoc[], kinds: readonly FileKind[], parsed: ParsedValuesByPath = new Map()): Diagnostic[] {
  const out: Diagnostic[] = [];
  const emit: Emit = (doc, pointer, message, opts) => {
    const p = at(doc.src, pointer, opts?.key);
    const d: Diagnostic = {
      file: doc.src.file,
      line: p.line,
      column: p.column + (opts?.offset ?? 0),
      pointer,
      message,
      severity: opts?.severity ?? "error",
      rule: opts?.rule,
    };
    out.push(namingVariables(doc.src, d));
  };
  const kindOf = new Map(kinds.map((k) => [k.fileKind, k]));
  for (const d of docs) {
    const kind = kindOf.get(d.kind);
    if (!kind) continue;
    typeEnvValues(d.src, kind.schema);
    // A value whose ${VAR} could not be filled, or a number that is not exact, was reported already: no
    // second message about it.
    const reported = (pointer: string): boolean =>
      !exactAt(d, pointer) || [...(d.src.unresolved ?? [])].some((u) => pointer === u || pointer.startsWith(`${u}/`));
    out.push(
      ...schemaDiagnostics(
        d.src,
        kind.schema,
        // An unknown field is its key's problem: said even when its value's variable could not be filled.
        (pointer, key, e) => (reported(pointer) && e?.keyword !== "additionalProperties") || !!kind.ownWords?.(pointer, key) || (!!e && restated(pointer, e)),
      ).map((x) => namingVariables(d.src, x)),
    );
  }
  duplicateNames(docs, emit);
  const ctx: RuleContext = { root, emit, extra: out, parsed };
  for (const k of kinds)
    k.rules?.(
      docs.filter((d) => d.kind === k.fileKind),
      ctx,
    );
  return out;
}
