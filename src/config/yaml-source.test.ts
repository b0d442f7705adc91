import { describe, expect, it } from "vitest";
import type { Diagnostic } from "./diagnostics.js";
import { indentationSlip, keptParsed, readYamlText, type SourceDoc } from "./yaml-source.js";

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

describe("an alias", () => {
  it("that names no anchor set before it is said at its place; too many are a possible alias bomb", () => {
    expect(problems("- &a [1]\n- *a\n- *b\n")).toEqual(["3:3 *b names no anchor set before it: write &b on the value it stands for, above it"]);
    expect(problems("x: *later\ny: &later 1\n")).toEqual(["1:4 *later names no anchor set before it: write &later on the value it stands for, above it"]);
    const bomb = `a: &a [x, x]\n${Array.from({ length: 60 }, (_, i) => `k${i}: *a`).join("\n")}\n`;
    expect(problems(bomb)).toEqual(["1:1 too many YAML aliases (a possible alias bomb): expand them by hand"]);
  });
});

describe("a text read again: composed from the tokens the process keeps", () => {
  const vars = { vars: { region: "eu" }, env: {} };
  const read = (text: string, v: typeof vars | undefined = vars): { docs: SourceDoc[]; said: string[] } => {
    const d: Diagnostic[] = [];
    const docs = readYamlText(text, "f.yaml", d, v);
    return { docs, said: d.map((x) => `${x.line}:${x.column} ${x.message}`) };
  };
  const seen = (r: { docs: SourceDoc[]; said: string[] }): unknown => [
    r.docs.map((s) => [s.index, s.value, s.doc.toString(), [...(s.unresolved ?? [])]]),
    r.said,
  ];

  it("reads as a first read does, each read with documents of its own; an edited text is read anew", () => {
    const texts = [
      "kind: A\nname: ${region}-x\nn: 1.5\n---\nkind: B\nm: ${nope}\n",
      "a: 1\n  b: 2\n",
      "n: 123456789012345678\n__proto__: 1\n",
      "x: !!binary aGk=\n",
    ];
    for (const text of texts) {
      const first = read(text);
      const shown = seen(first);
      expect(keptParsed(text)).toBe(true);
      // A read that changes its documents (as KeepDoc and ${VAR} do) leaves the next read as the first.
      first.docs[0]?.doc.set("kind", "changed");
      const again = read(text);
      expect(seen(again)).toEqual(shown);
      if (first.docs[0]) expect(again.docs[0]?.doc).not.toBe(first.docs[0].doc);
    }
    // Filled with other vars (another environment), the same text reads with them, not the first read's.
    expect(read(texts[0] as string, { vars: { region: "us" }, env: {} }).docs[0]?.value).toMatchObject({ name: "us-x" });
    expect(read("kind: A\nname: ${region}-y\n").docs[0]?.value).toMatchObject({ name: "eu-y" });
  });

  it("keeps a bounded amount of text: the texts read longest ago go first; a text over the bound is never kept", () => {
    const { limit } = keptParsed();
    // A text of exactly n characters (a comment: it has no documents).
    const fill = (n: number, c = "x"): string => `# ${c.repeat(n - 3)}\n`;
    read(fill(limit));
    expect(keptParsed().chars).toBe(limit);
    read("kept: first\n");
    expect(keptParsed(fill(limit))).toBe(false);
    read("kept: second\n");
    read("kept: first\n");
    read(fill(limit - keptParsed().chars, "y"));
    expect(keptParsed().chars).toBe(limit);
    read("kept: third\n");
    // The one read longest ago is second: first was read again after it.
    expect(keptParsed("kept: second\n")).toBe(false);
    expect(["kept: first\n", "kept: third\n"].map((text) => keptParsed(text))).toEqual([true, true]);
    expect(keptParsed().chars).toBeLessThanOrEqual(limit);
    const over = `${fill(limit, "z")}n: 1\n`;
    expect(read(over).docs[0]?.value).toEqual({ n: 1 });
    expect(["kept: first\n", "kept: third\n", over].map((text) => keptParsed(text))).toEqual([true, true, false]);
  });

  it("keeps a bounded amount of the parser's tokens, not only of text: a text of few characters and many tokens is not kept", () => {
    const { partLimit } = keptParsed();
    // Parts of 100 to 150 bytes: what is kept takes at most some 40 MB.
    expect(partLimit * 150).toBeLessThanOrEqual(40 * 2 ** 20);
    // Lines of an empty comment: two parts of tokens (of 100 to 150 bytes each) for two characters.
    const dense = "#\n".repeat(partLimit / 2 + 1);
    expect(read(dense).docs).toEqual([]);
    expect(keptParsed(dense)).toBe(false);
    expect(keptParsed().parts).toBeLessThanOrEqual(partLimit);
  });
});
