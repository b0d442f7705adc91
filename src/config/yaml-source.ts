import {
  Composer,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  Parser,
  visit,
  type CST,
  type Document,
  type DocumentOptions,
  type Node,
  type ParseOptions,
  type SchemaOptions,
} from "yaml";
import type { Diagnostic } from "./diagnostics.js";
import { FileRefused, READ_CAPS, readFailure, readUserFileBytes, type PathWords } from "../user-files.js";
import { interpolateString, variableWords, type VarSource } from "./interpolate.js";
import { exactness } from "../number.js";
import { UserError } from "../errors.js";
import { plural } from "../words.js";

export const MAX_FILE_BYTES = READ_CAPS.text;
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

export interface SourceDoc {
  file: string;
  index: number;
  doc: Document.Parsed;
  lines: LineCounter;
  value: unknown;
  /** JSON pointers of values whose ${VAR} could not be filled (already reported). */
  unresolved?: Set<string>;
  /** JSON pointers of whole-value ${VAR}s filled from the process environment, with their text. */
  envTexts?: Map<string, string>;
  /** JSON pointers of values filled from variables: which, and where they came from in words (a problem
   *  with such a value names them). */
  variables?: Map<string, { names: string[]; words: string }>;
  /** JSON pointers of numbers that are not exact (already reported): no rule compares them. */
  inexact?: Set<string>;
}

export function position(lines: LineCounter, offset: number | undefined): { line: number; column: number } {
  const p = lines.linePos(offset ?? 0);
  return { line: p.line, column: p.col };
}

export type { VarSource };

/** A problem at a place of the file being read. */
type At = (line: number, column: number, message: string) => void;

/** Whether a document is read at all, asked before its variables are filled (and it may take parts
 *  out of it): a policy document of other environments (metadata.environments) is not, and reads none
 *  of this environment's variables. */
export type KeepDoc = (doc: Document.Parsed, lines: LineCounter, index: number) => boolean;

/** The texts this process has parsed, each as the parser's tokens and its lines, the one read last at
 *  the end. A text read again (the same file for another environment, a promotion's source and target,
 *  the policy tests and the guardrail tests of one folder, the next command of a long-lived process) is
 *  composed into documents from its tokens, not lexed and parsed again: lexing and parsing are some three
 *  quarters of a parse. Keyed by the exact text, never by a path: a file edited meanwhile is another text,
 *  and read as such. Each read composes documents of its own, which it may change (KeepDoc, ${VAR}); the
 *  tokens are only read. Bounded twice, past either the texts read longest ago go first: KEPT_CHARS of
 *  text, and KEPT_PARTS of tokens (the objects and arrays of the parser's tokens, some 100 to 150 bytes
 *  each), as a text's characters do not bound them: a policy file makes some 0.5 parts a character, a
 *  long flow list of short items 2.5 (docs/decisions.md, "A text is parsed once a process"). */
const parsed = new Map<string, { tokens: CST.Token[]; lines: LineCounter; parts: number }>();
let parsedChars = 0;
let parsedParts = 0;
const KEPT_CHARS = 1024 * 1024;
const KEPT_PARTS = 256 * 1024;

/** Whether the process keeps `text` parsed; without one, how many characters of text and parts of tokens
 *  it keeps, and their bounds (for tests). */
export function keptParsed(text: string): boolean;
export function keptParsed(): { chars: number; limit: number; parts: number; partLimit: number };
export function keptParsed(text?: string): boolean | { chars: number; limit: number; parts: number; partLimit: number } {
  return text === undefined ? { chars: parsedChars, limit: KEPT_CHARS, parts: parsedParts, partLimit: KEPT_PARTS } : parsed.has(text);
}

function tokensOf(text: string): { tokens: CST.Token[]; lines: LineCounter } {
  let read = parsed.get(text);
  if (read) {
    parsed.delete(text);
    parsed.set(text, read);
    return read;
  }
  const lines = new LineCounter();
  const tokens = Array.from(new Parser(lines.addNewLine).parse(text));
  read = { tokens, lines, parts: partsOf(tokens) };
  if (text.length > KEPT_CHARS || read.parts > KEPT_PARTS) return read;
  parsed.set(text, read);
  parsedChars += text.length;
  parsedParts += read.parts;
  for (const [old, kept] of parsed) {
    if (parsedChars <= KEPT_CHARS && parsedParts <= KEPT_PARTS) break;
    parsed.delete(old);
    parsedChars -= old.length;
    parsedParts -= kept.parts;
  }
  return read;
}

/** The objects and arrays the parser's tokens are made of: what keeping them costs. A loop, not recursion:
 *  tokens nest as deep as the text does. */
function partsOf(tokens: readonly CST.Token[]): number {
  let parts = 0;
  const todo: object[] = [...tokens];
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    parts++;
    const values: unknown[] = Array.isArray(next) ? next : Object.values(next);
    for (const v of values) if (v !== null && typeof v === "object") todo.push(v);
  }
  return parts;
}

// resolveKnownTags: false, so that !!binary, !!set, !!timestamp and the like are tags like any other
// (refused, named as written) instead of turning a value into bytes, a set or a date.
const parseOptions = (): ParseOptions & DocumentOptions & SchemaOptions => ({
  uniqueKeys: true,
  prettyErrors: false,
  customTags: [],
  resolveKnownTags: false,
  strict: true,
});

/** The documents of a text, and its lines: as yaml's parseAllDocuments reads them, from the tokens this
 *  process keeps of the same text when it keeps them. */
function parseDocs(text: string): { docs: Document.Parsed[]; lines: LineCounter } {
  const read = tokensOf(text);
  return { docs: Array.from(new Composer(parseOptions()).compose(read.tokens)), lines: read.lines };
}

/** Where the first alias `*name` of a document stands (its offset), for a problem with it. */
function aliasAt(doc: Document.Parsed, name: string): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Alias(_, node) {
      if (node.source !== name) return undefined;
      offset = node.range?.[0];
      return visit.BREAK;
    },
  });
  return offset;
}

/** Reads one YAML file defensively: a regular file only, size cap, strict UTF-8, no unknown tags, no
 *  prototype keys, bounded alias expansion; `inside`: the folder it must really lie in (a policy or
 *  policy test file: the policy repo, links followed). Every problem becomes a diagnostic; nothing throws. */
export function readYamlFile(
  absPath: string,
  shownPath: string,
  diagnostics: Diagnostic[],
  vars?: VarSource,
  inside?: { folder: string; words?: PathWords },
  keep?: KeepDoc,
): SourceDoc[] {
  const at: At = (line, column, message) => {
    diagnostics.push({ file: shownPath, line, column, message, severity: "error" });
  };
  const text = readText(absPath, at, inside);
  if (text === undefined) return [];
  return readYamlText(text, shownPath, diagnostics, vars, keep);
}

/** readYamlFile of a text already read (export reads the files it is about to change this way). */
export function readYamlText(text: string, shownPath: string, diagnostics: Diagnostic[], vars?: VarSource, keep?: KeepDoc): SourceDoc[] {
  const at: At = (line, column, message) => {
    diagnostics.push({ file: shownPath, line, column, message, severity: "error" });
  };
  const { docs: list, lines } = parseDocs(text);
  const out: SourceDoc[] = [];
  const flowVars = anyErrors(list) ? unquotedFlowVariables(text) : [];
  list.forEach((doc, index) => {
    const badSyntax = syntaxProblems(doc, lines, flowVars, at, text);
    const inexact = new Set<string>();
    const badKeys = keyAndNumberProblems(doc, lines, at, inexact);
    if (badSyntax || badKeys) return;
    // An empty document (a trailing ---, or only comments): the yaml library gives it no contents or a null scalar.
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return;
    if (keep && !keep(doc, lines, index)) return;
    // Every problem is reported: a variable that cannot be filled does not hide the document's other checks.
    const filled = vars ? interpolate(doc, lines, vars, shownPath, diagnostics) : undefined;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 50 });
    } catch (e) {
      const msg = (e as Error).message;
      const unresolved = /^Unresolved alias .*: (.*)$/.exec(msg)?.[1];
      if (unresolved !== undefined) {
        const p = position(lines, aliasAt(doc, unresolved));
        at(p.line, p.column, `*${unresolved} names no anchor set before it: write &${unresolved} on the value it stands for, above it`);
      } else at(1, 1, /alias/i.test(msg) ? "too many YAML aliases (a possible alias bomb): expand them by hand" : `YAML: ${msg}`);
      return;
    }
    out.push({ file: shownPath, index, doc, lines, value, ...filled, ...(inexact.size ? { inexact } : {}) });
  });
  return out;
}

/** The file's text: a regular file (readUserFileBytes), at most 5 MiB, strict UTF-8 (the first byte
 *  that is not said at its place). */
function readText(absPath: string, at: At, inside?: { folder: string; words?: PathWords }): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readUserFileBytes(absPath, MAX_FILE_BYTES, inside);
  } catch (e) {
    if (e instanceof FileRefused && /is over /.test(e.why)) at(1, 1, "file is over 5 MiB: policy files must be smaller");
    else at(1, 1, e instanceof FileRefused || !(e instanceof UserError) ? `cannot read the file: ${readFailure(e)}` : e.message);
    return undefined;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const offset = firstInvalidUtf8(bytes);
    const before = bytes.subarray(0, offset).toString("utf8");
    const line = before.split("\n").length;
    at(line, before.length - before.lastIndexOf("\n"), "file is not UTF-8 text: save it as UTF-8");
    return undefined;
  }
}

/** The parser's errors and warnings of one document, each at its place; true when there is one. An
 *  unquoted ${VAR} inside { } or [ ] is YAML's own syntax there ({ starts a mapping): one error that
 *  says to quote it, instead of the parser's several. A tag is refused by its name. */
function syntaxProblems(doc: Document.Parsed, lines: LineCounter, flowVars: { offset: number; text: string }[], at: At, text: string): boolean {
  const explained = flowVars.filter((v) => doc.errors.some((e) => e.pos[0] >= v.offset && e.pos[0] < v.offset + v.text.length));
  for (const v of explained) {
    const p = position(lines, v.offset);
    at(p.line, p.column, `${v.text} inside { } or [ ] must be quoted, or YAML reads its { as a mapping: write "${v.text}"`);
  }
  // A line indented off its block is the cause of the parser's errors around it: said once, at it.
  const first = doc.errors[0];
  const slip = !explained.length && first ? indentationSlip(text, position(lines, first.pos[0]).line) : undefined;
  if (slip) at(slip.line, 1, slip.message);
  const problems = explained.length || slip ? [] : [...doc.errors, ...doc.warnings];
  for (const e of problems) {
    const p = position(lines, e.pos[0]);
    const tag = /Unresolved tag: (\S+)/.exec(e.message);
    const written = tag?.[1]?.replace(/^tag:yaml\.org,2002:/, "!!");
    at(
      p.line,
      p.column,
      written ? `the YAML tag ${written} is not allowed in policy files: write the value as plain text` : `YAML syntax: ${e.message.split("\n")[0]}`,
    );
  }
  return problems.length > 0 || !!slip;
}

/** Keys that would reach an object's prototype, refused (true when there is one); and the one number
 *  rule (src/number.ts): a number the file writes that a double cannot hold exactly is an error at its
 *  place, as YAML would round it, and revsync would send and compare another number. Its pointer goes
 *  into `inexact`: no rule compares the number YAML rounded it to. */
function keyAndNumberProblems(doc: Document.Parsed, lines: LineCounter, at: At, inexact: Set<string>): boolean {
  let bad = false;
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && FORBIDDEN_KEYS.has(String(pair.key.value))) {
        const p = position(lines, pair.key.range?.[0]);
        at(p.line, p.column, `the key ${JSON.stringify(pair.key.value)} is not allowed`);
        bad = true;
      }
    },
    Scalar(_, node, path) {
      if (typeof node.value !== "number" || node.source === undefined) return;
      const parent = path[path.length - 1];
      if (isPair(parent) && parent.key === node) return;
      const e = exactness(node.source);
      if (e.exact) return;
      const p = position(lines, node.range?.[0]);
      const pointer = pointerOf(path, node);
      inexact.add(pointer);
      const where = pointer.slice(1).split("/").join(".");
      at(p.line, p.column, `${where ? `${where}: ` : ""}${e.why}: write a number revsync can hold exactly`);
    },
  });
  return bad;
}

/** A line of YAML as the indentation check reads it: its number (from 1), indent and content. */
interface YamlLine {
  line: number;
  indent: number;
  content: string;
}

/** The lines that carry YAML (not blank, not comments, not inside a block scalar), comments cut off. */
function yamlLines(text: string): YamlLine[] {
  const out: YamlLine[] = [];
  let scalarAbove: number | undefined;
  text.split("\n").forEach((raw, i) => {
    const indent = raw.length - raw.trimStart().length;
    const content = raw.replace(/\s+#.*$/, "").trim();
    if (!content || content.startsWith("#") || /^(---|\.\.\.)(\s|$)/.test(content)) return;
    if (scalarAbove !== undefined && indent > scalarAbove) return;
    scalarAbove = /[|>][-+0-9]*$/.test(content) ? indent : undefined;
    out.push({ line: i + 1, indent, content });
  });
  return out;
}

/** Where the values of a line's mapping start: a key at its indent, or after each "- " of a sequence item. */
const itemColumn = (l: YamlLine): number => l.indent + (/^(-\s+)+/.exec(l.content)?.[0].length ?? 0);
const opensBlock = (l: YamlLine): boolean => /:$/.test(l.content) || /^-$/.test(l.content);
const inFlow = (l: YamlLine): boolean => (l.content.match(/[[{]/g)?.length ?? 0) > (l.content.match(/[\]}]/g)?.length ?? 0);

/** An indentation slip near a parser error (at `near`, a line number): a line indented deeper than the
 *  line before it, which opens no block (YAML then reads it as part of that line's value), or back to a
 *  column no enclosing block has (its block's first line, or it, slipped). Undefined when none is. */
export function indentationSlip(text: string, near: number): { line: number; message: string } | undefined {
  const ls = yamlLines(text);
  const stack: YamlLine[] = [];
  for (const [i, l] of ls.entries()) {
    const prev = ls[i - 1];
    if (prev && inFlow(prev)) return undefined;
    const popped: YamlLine[] = [];
    while (stack.length && (stack[stack.length - 1] as YamlLine).indent > l.indent) popped.push(stack.pop() as YamlLine);
    const top = stack[stack.length - 1];
    const first = popped[popped.length - 1];
    let slip: { line: number; message: string } | undefined;
    if (prev && l.indent > prev.indent && !opensBlock(prev) && l.indent !== itemColumn(prev))
      slip = {
        line: l.line,
        message: `line ${l.line} is indented ${plural(l.indent, "space")}, deeper than line ${prev.line} (${prev.indent}), which opens no block: YAML reads it as part of line ${prev.line}'s value; indent it as the lines around it`,
      };
    else if (first && (!top || top.indent < l.indent))
      slip = {
        line: first.line,
        message: `line ${first.line} is indented ${plural(first.indent, "space")}, and line ${l.line} after it in the same block ${l.indent}: the lines of a block need one indentation (one of them slipped)`,
      };
    if (slip) return Math.abs(slip.line - near) <= 1 || Math.abs(l.line - near) <= 1 ? slip : undefined;
    if (!top || l.indent > top.indent) stack.push(l);
  }
  return undefined;
}

function anyErrors(docs: Document.Parsed[]): boolean {
  return docs.some((d) => d.errors.length > 0);
}

/** Each ${…} written unquoted inside a flow collection ({ } or [ ]), with its offset: quotes and
 *  comments are skipped, and a quote starts a quoted scalar only where a value can start. */
export function unquotedFlowVariables(text: string): { offset: number; text: string }[] {
  const found: { offset: number; text: string }[] = [];
  let depth = 0;
  let prev = "\n"; // the last character that was not a space or tab
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (c === "#" && (i === 0 || /\s/.test(text[i - 1] ?? ""))) {
      while (i < text.length && text[i] !== "\n") i++;
      prev = "\n";
      continue;
    }
    if ((c === "'" || c === '"') && "\n:,[{-?".includes(prev)) {
      for (i++; i < text.length; i++) {
        if (c === '"' && text[i] === "\\") i++;
        else if (text[i] === c) {
          if (c === "'" && text[i + 1] === "'") i++;
          else break;
        }
      }
      prev = c;
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if ((c === "}" || c === "]") && depth > 0) depth--;
    else if (c === "$" && text[i + 1] === "{" && depth > 0 && text[i - 1] !== "$") {
      const end = text.indexOf("}", i);
      const var_ = text.slice(i, end < 0 ? i + 2 : end + 1);
      found.push({ offset: i, text: var_ });
      i += var_.length - 1;
      prev = "}";
      continue;
    }
    if (c !== " " && c !== "\t") prev = c;
  }
  return found;
}

/** Offset of the first byte that breaks UTF-8, to point at the line. */
function firstInvalidUtf8(b: Buffer): number {
  for (let i = 0; i < b.length;) {
    const c = b[i] ?? 0;
    const n = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > b.length) return i;
    for (let k = 1; k < n; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    i += n;
  }
  return b.length;
}

/** The YAML node at a JSON pointer's path (or its nearest existing parent). */
export function nodeAt(doc: Document, path: (string | number)[]): Node | undefined {
  let node: unknown = doc.contents;
  let last: unknown = node;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(key));
      node = pair?.value;
    } else if (isSeq(node)) {
      node = node.items[Number(key)];
    } else node = undefined;
    if (!node) break;
    last = node;
  }
  return (node ?? last) as Node | undefined;
}

/** The key node of a property of the mapping at path, for "unknown field" diagnostics. */
export function keyAt(doc: Document, path: (string | number)[], key: string): Node | undefined {
  const parent = nodeAt(doc, path);
  if (!isMap(parent)) return parent;
  const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
  return (pair?.key as Node | undefined) ?? parent;
}

/** The JSON pointer of a node, from the ancestors a visitor passes. */
function pointerOf(path: readonly unknown[], node: unknown): string {
  const chain = [...path, node];
  const parts: string[] = [];
  for (let i = 0; i < chain.length - 1; i++) {
    const cur = chain[i];
    const next = chain[i + 1];
    if (isPair(cur) && next === cur.value) parts.push(String(isScalar(cur.key) ? cur.key.value : cur.key));
    else if (isSeq(cur)) parts.push(String(cur.items.indexOf(next as never)));
  }
  return parts.length ? `/${parts.join("/")}` : "";
}

/** ${VAR} in string scalars (config/interpolate.ts has the rules). */
export function interpolate(
  doc: Document,
  lines: LineCounter,
  vars: VarSource,
  file: string,
  diagnostics: Diagnostic[],
): Required<Pick<SourceDoc, "unresolved" | "envTexts" | "variables">> {
  const unresolved = new Set<string>();
  const envTexts = new Map<string, string>();
  const variables = new Map<string, { names: string[]; words: string }>();
  visit(doc, {
    Scalar(_, node, path) {
      if (typeof node.value !== "string" || !node.value.includes("$")) return;
      const parent = path[path.length - 1];
      if (isPair(parent) && parent.key === node) return; // a key, not a value
      const pointer = pointerOf(path, node);
      const r = interpolateString(node.value, vars);
      for (const message of r.problems) diagnostics.push({ ...position(lines, node.range?.[0]), file, pointer, severity: "error", message, rule: "variables" });
      // A value that cannot be filled is unknown: its problem is said (here, or where revsync.yaml sets
      // the var it reads), and no check of the value says more.
      if (r.problems.length || r.unresolved) {
        unresolved.add(pointer);
        return;
      }
      node.value = r.value;
      if (r.envText !== undefined) envTexts.set(pointer, r.envText);
      if (r.read?.length) variables.set(pointer, { names: r.read, words: variableWords(r.read, vars) });
    },
  });
  return { unresolved, envTexts, variables };
}
