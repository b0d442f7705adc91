import { nearest } from "../did-you-mean.js";
export interface Diagnostic {
  file: string;
  line: number;
  column: number;
  /** JSON pointer into the document, when the problem is inside one. */
  pointer?: string;
  message: string;
  severity: "error" | "warning";
  rule?: string;
  /** The variables the value at this place was filled from (its message names them). */
  variables?: string[];
}

/** Text in the order of its characters' codes: the same on every machine. A locale's collation is not:
 *  it differs by locale and ICU data, and holds two different names equal when they differ only by
 *  characters it ignores (a zero-width space, a soft hyphen, é written as e and an accent), which would
 *  interleave two files' problems. */
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Diagnostics once each, by file, line and column: each file's problems together, in the order of its
 *  lines (problems at one place in the order they were found). */
export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return list
    .filter((d) => {
      const key = `${d.file}:${d.line}:${d.column}:${d.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) => byCodePoint(a.file, b.file) || a.line - b.line || a.column - b.column);
}

/** Describes a value as a person would: the string "yes", the number 3, a list, nothing. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return "nothing (null)";
  if (typeof v === "string") return `the string ${JSON.stringify(v)}`;
  if (typeof v === "number") return `the number ${v}`;
  if (typeof v === "boolean") return `${v}`;
  if (Array.isArray(v)) return "a list";
  return "a mapping";
}

export function article(type: string): string {
  const words: Record<string, string> = {
    boolean: "a boolean (true or false)",
    integer: "a whole number",
    number: "a number",
    string: "a string",
    array: "a list",
    object: "a mapping",
    null: "null",
  };
  return words[type] ?? type;
}

/** Closest candidate by edit distance, for "did you mean" hints. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  return nearest(word, candidates, { max: 1 })[0];
}
