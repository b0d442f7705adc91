/** Which environments a policy document is for (`metadata.environments`), and which an item of one of
 *  its kind's scoped lists is for (a batch's `environments`): default, every environment of
 *  revsync.yaml. For any other environment the document or item is not there at all: it is neither read
 *  (none of its variables filled) nor checked, planned, applied, exported or reported missing. The
 *  names are checked for every environment, so that a misspelt one is said even where nothing reads it. */
import { isMap, isScalar, isSeq, Scalar, type Document, type LineCounter, type Node } from "yaml";
import { nearest } from "../did-you-mean.js";
import type { Diagnostic } from "./diagnostics.js";
import { position, type KeepDoc } from "./yaml-source.js";

/** The key of a scope: `environments:`, under a document's metadata or in an item of a scoped list. */
export const SCOPE_KEY = "environments";

/** The environments a scope node names, when it is a list of names (the schema reports anything else,
 *  which is then read everywhere, so that it is reported). */
export function scopeOf(node: unknown): string[] | undefined {
  if (!isSeq(node) || !node.items.length) return undefined;
  const names = node.items.map((i) => (isScalar(i) && typeof i.value === "string" ? i.value : undefined));
  return names.every((n): n is string => n !== undefined) ? names : undefined;
}

/** Whether a scope (undefined: every environment) holds an environment (undefined: any). */
export const inScope = (scope: readonly string[] | undefined, environment: string | undefined): boolean =>
  environment === undefined || scope === undefined || scope.includes(environment);

export interface ScopeOptions {
  /** The environment being read; undefined reads every document and item. */
  environment: string | undefined;
  /** The environments of revsync.yaml. */
  known: readonly string[];
  /** The lists of a document of a kind whose items may carry `environments:` (batches). */
  scopedLists: (fileKind: string) => readonly string[];
  /** The file as shown, for the diagnostics. */
  file: string;
  diagnostics: Diagnostic[];
  /** Export's read: an item of other environments becomes null in its place (so that the places of the
   *  others stay those of the file), and each document of other environments is noted in `dropped`. */
  keepPlaces?: boolean;
  dropped?: Set<number>;
}

/** Each name of a scope that revsync.yaml has no environment of: an error at the name. */
function unknownNames(node: unknown, where: string, lines: LineCounter, o: ScopeOptions): void {
  if (!isSeq(node)) return;
  for (const item of node.items) {
    if (!isScalar(item) || typeof item.value !== "string" || o.known.includes(item.value)) continue;
    const near = nearest(item.value, o.known, { max: 1, within: 2 })[0];
    o.diagnostics.push({
      file: o.file,
      ...position(lines, (item as Node).range?.[0]),
      severity: "error",
      rule: "environments",
      message: `${where}: no environment ${JSON.stringify(item.value)} in revsync.yaml${near ? ` (did you mean ${near}?)` : ""}; it has: ${o.known.join(", ")}`,
    });
  }
}

/** The document's own scope (checked), and its scoped lists' items of other environments taken out. */
function scopeItems(doc: Document.Parsed, lines: LineCounter, o: ScopeOptions): void {
  const kind = doc.get("kind");
  for (const list of typeof kind === "string" ? o.scopedLists(kind) : []) {
    const seq = doc.get(list, true);
    if (!isSeq(seq)) continue;
    seq.items.forEach((item, i) => unknownNames(isMap(item) ? item.get(SCOPE_KEY, true) : undefined, `${list}.${i}.${SCOPE_KEY}`, lines, o));
    const mine = (item: unknown): boolean => !isMap(item) || inScope(scopeOf(item.get(SCOPE_KEY, true)), o.environment);
    seq.items = o.keepPlaces ? seq.items.map((item) => (mine(item) ? item : new Scalar(null))) : seq.items.filter(mine);
  }
}

/** The KeepDoc of one environment's read of the policy files (readYamlFile). */
export function keepInScope(o: ScopeOptions): KeepDoc {
  return (doc, lines, index) => {
    if (!isMap(doc.contents)) return true;
    const node = doc.getIn(["metadata", SCOPE_KEY], true);
    unknownNames(node, `metadata.${SCOPE_KEY}`, lines, o);
    scopeItems(doc, lines, o);
    const keep = inScope(scopeOf(node), o.environment);
    if (!keep) o.dropped?.add(index);
    return keep;
  };
}
