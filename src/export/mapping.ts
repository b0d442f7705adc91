/** The service's state as policy files: each kind of the registry exports its own (src/kinds/), here
 *  given names no other file takes and written as YAML with their comments. */
import { Document, visit, type Node } from "yaml";
import { literalValue } from "../config/interpolate.js";
import type { ExportedFile } from "../kinds/export-file.js";
import { liveOf, type LiveState, type Registry } from "../kinds/kind.js";
import { KINDS } from "../kinds/registry.js";

export type { ExportedBatch, ExportedFile } from "../kinds/export-file.js";

/** A comment export writes (and a line it prints), with every character escaped as \uXXXX that a reader
 *  or YAML could take for a line break, or that turns text around (the C0 and C1 controls, NEL, the line
 *  and paragraph separators, bidirectional marks, BOM): the service's text quoted in it stays on its one
 *  line and reads back as written, so exporting again adds nothing. */
const oneLine = (text: string): string =>
  text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

/** The live state as policy files: pure, so `plan` right after export finds no change. `taken`: paths
 *  (relative to the export folder) that hold something already; a new file gets another name.
 *  `unnamed`: gets one line for each entry left out because git cannot hold its name (unsafeName: a
 *  name that cannot travel in a URL path as itself); plan shows it as not in git. */
export function exportFiles(
  live: LiveState,
  targets: string[],
  taken: ReadonlySet<string> = new Set(),
  unnamed: string[] = [],
  kinds: Registry = KINDS,
  refused: string[] = [],
): ExportedFile[] {
  const used = new Set<string>(taken);
  const unique = (file: string): string => {
    let path = file;
    for (let i = 2; used.has(path); i++) path = file.replace(/\.(yaml|csv)$/, `-${i}.$1`);
    used.add(path);
    return path;
  };
  const files = kinds.flatMap((k) => k.export(liveOf(k, live), { targets, unique, unnamed, refused }));
  for (const f of files) for (const list of [f.specComments, f.batchComments, f.leftOut]) list.forEach((l, i) => (list[i] = oneLine(l)));
  unnamed.forEach((l, i) => (unnamed[i] = oneLine(l)));
  refused.forEach((l, i) => (refused[i] = oneLine(l)));
  return files;
}

/** Plain text that a YAML 1.1 reader (ajv-cli's, PyYAML's) takes for another type, though YAML 1.2 (what
 *  revsync and editors read) takes it for text, and which the YAML writer therefore leaves plain: a date
 *  or timestamp, a y/n/yes/no/on/off, a binary, sexagesimal or underscored number. (What YAML 1.2 reads as
 *  another type too, `true`, `null`, `12`, the writer quotes already.) */
const YAML11_NOT_TEXT =
  /^(?:\d{4}-\d\d?-\d\d?(?:(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?|[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|[-+]?(?:0b[01_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|[0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?))$/;

/** Whether a text written plain is read as another type by a YAML 1.1 reader. */
export const yaml11NotText = (text: string): boolean => YAML11_NOT_TEXT.test(text);

/** A node export made from the service's values, with every text that holds a line break or a control
 *  character written double-quoted (escaped): YAML's block styles cannot carry every such text exactly
 *  (a line of blanks before a line break is lost), a double-quoted scalar carries any. A text a YAML 1.1
 *  reader would take for a date, a boolean or a number (yaml11NotText) is quoted too: a date export
 *  writes stays text for ajv-cli. */
export function quotedWhereNeeded<T>(node: T): T {
  visit(node as Node, {
    Scalar(_, s) {
      if (typeof s.value !== "string") return;
      // eslint-disable-next-line no-control-regex
      if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(s.value)) s.type = "QUOTE_DOUBLE";
      else if (yaml11NotText(s.value) && s.type !== "QUOTE_DOUBLE") s.type = "QUOTE_SINGLE";
    },
  });
  return node;
}

/** A file's text: the header comment lines, then the YAML with the comments in place. Every text of the
 *  service is written as literal text (literalText: a `${` of the service never reads as a variable). */
export function renderFile(f: ExportedFile, header: string[]): string {
  const doc = new Document(literalValue(f.value));
  quotedWhereNeeded(doc.contents);
  placeComments(doc, f);
  return `${header.map((h) => `# ${h}`).join("\n")}\n${doc.toString({ lineWidth: 0 })}`;
}

/** The comments of what was left out, in their places: inside spec, and after the batches. */
export function placeComments(doc: Document, f: Pick<ExportedFile, "specComments" | "batchComments">): void {
  const spec = doc.get("spec", true) as { comment?: string | null } | undefined;
  if (spec && f.specComments.length) spec.comment = f.specComments.join("\n");
  if (f.batchComments.length) {
    const batches = doc.get("batches", true) as { comment?: string | null } | undefined;
    if (batches) batches.comment = f.batchComments.join("\n");
    else doc.comment = f.batchComments.join("\n");
  }
}
