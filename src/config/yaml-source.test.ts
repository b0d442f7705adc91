import { describe, expect, it } from "vitest";
import type { Diagnostic } from "./diagnostics.js";
import { indentationSlip, readYamlText } from "./yaml-source.js";

const problems = (text: string): string[] => {
  const d: Diagnostic[] = [];
  readYamlText(text, "f.yaml", d);
  return d.map((x) => `${x.line}:${x.column} ${x.message}`);
};

describe("an indentation slip is said at its line, once", () => {
  it("a line deeper than one that opens no block; a block whose lines disagree", () => {
    expect(problems("spec:\n  a: 1\n   b: 2\n  c: 3\n")).toEqual([
      "3:1 line 3 is indented 3 spaces, deeper than line 2 (2), which opens no block: YAML reads it as part of line 2's value; indent it as the lines around it",
    ]);
    expect(problems("spec:\n   a: 1\n  b: 2\n  c: 3\n")).toEqual([
      "2:1 line 2 is indented 3 spaces, and line 3 after it in the same block 2: the lines of a block need one indentation (one of them slipped)",
    ]);
  });

  it("lists, block scalars and flow collections are no slip; other syntax errors are the parser's", () => {
    const fine = "batches:\n  - name: A\n    status: approved\n  - name: B\n    status: reviewed\nexpression: |\n  x\n     y\nwhen: [a,\n    b]\n";
    expect(problems(fine)).toEqual([]);
    expect(indentationSlip(fine, 3)).toBeUndefined();
    expect(problems("a: [1, 2\nb: 3\n")[0]).toMatch(/^\d+:\d+ YAML syntax: /);
  });
});
