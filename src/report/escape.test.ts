import fc from "fast-check";
import { binaryString } from "../testing/arbitraries.js";
import { propertyRuns } from "../testing/property-runs.js";
import { describe, expect, it } from "vitest";
import { ACTIONS, DRIFT_CLASSES, summarize, type Change, type DriftItem, type DriftReport } from "../plan/model.js";
import { planOf } from "../testing/builders.js";
import type { AllocationImpact } from "../policy-test/run.js";
import { autolinksOf, elementsOf, mentionsOf, renderGfm, tagsOf, textOf } from "../testing/gfm.js";
import { htmlCode, markdownCode, markdownText, mermaidLabel, terminalText } from "./escape.js";
import { driftMarkdown, planMarkdown } from "./plan.js";
import { allocationImpactMarkdown } from "./policy-test.js";

// Text revsync did not write renders as text: a plan of N entries renders N entries in a real GFM
// renderer (markdown-it) whatever the names, values, reasons and notes hold.

/** Pieces that steer markdown, HTML or a terminal, and plain text between them. */
const PIECES = [
  "<!--",
  "-->",
  "<details>",
  "</details>",
  "<summary>",
  "</summary>",
  "</code>",
  "</td>",
  "<br>",
  "<script>",
  "<img src=x onerror=alert(1)>",
  "|",
  "||",
  "`",
  "```",
  "*",
  "**",
  "_",
  "__",
  "~~",
  "[",
  "](http://x)",
  "![",
  "(",
  ")",
  "#",
  "# ",
  ">",
  "> ",
  "-",
  "- ",
  "+ ",
  "1. ",
  "1) ",
  "=",
  "---",
  "\n",
  "\n\n",
  "\r",
  "\t",
  "    ",
  " ",
  "&",
  "&lt;",
  "&#60;",
  "&amp;",
  ";",
  "\\",
  "\\|",
  "$",
  "$$",
  ":",
  "\u202e",
  "\u200f",
  "\u2066",
  "\u2028",
  "\u001b[31m",
  "\u001b]0;title\u0007",
  "\u009b2J",
  "\u0000",
  "\u007f",
  "a",
  "Legacy",
  "é",
  "😀",
  "\ufeff",
  "@team",
  "@acme/finance",
  " @alice",
  "#12",
  "https://evil.example/x",
  "http://",
  "//evil.example",
  "www.evil.com",
  "evil.com",
  "a@b.io",
  "mailto:",
  "ftp://x",
  ".",
  "/",
  "@",
] as const;
const adversarial = fc.array(fc.oneof(fc.constantFrom(...PIECES), binaryString({ maxLength: 3 })), { minLength: 1, maxLength: 8 }).map((p) => p.join(""));

interface Entry {
  name: string;
  action: Change["action"];
  field: string;
  before: string;
  after: string;
  reason: string;
}
const entry = fc.record({
  name: adversarial,
  action: fc.constantFrom(...ACTIONS),
  field: adversarial,
  before: adversarial,
  after: adversarial,
  reason: adversarial,
});

/** An entry whose every text is the entry's, or "x" (the same plan in plain words). */
const change = (e: Entry, i: number, plain: boolean): Change => ({
  address: `ssp/${plain ? `x${i}` : e.name}`,
  action: e.action,
  before: null,
  after: null,
  diff: [{ path: plain ? "x" : e.field, kind: "changed", before: plain ? "x" : e.before, after: plain ? "x" : e.after }],
  version_id: null,
  last_modified_on: null,
  reason: plain && e.reason ? "x" : e.reason,
});

describe("markdownText", () => {
  it("a name that opens a comment, closes a <details>, ends a cell or starts a block renders as itself, as text", () => {
    for (const name of ["Legacy <!-- retired", "</details>", "a | b", "`x`", "# Heading", "> quote", "- item", "1. first", "&lt;b&gt;", "*_[x](y)_*"]) {
      const html = renderGfm(`| a |\n|---|\n| ${markdownText(name)} |\n\n<details><summary>${markdownText(name)}</summary>\n\nbody\n\n</details>\n`);
      expect([name, tagsOf(html)]).toEqual([
        name,
        ["<table>", "<thead>", "<tr>", "<th>", "</th>", "</tr>", "</thead>", "<tbody>", "<tr>", "<td>", "</td>", "</tr>", "</tbody>", "</table>"].concat([
          "<details>",
          "<summary>",
          "</summary>",
          "<p>",
          "</p>",
          "</details>",
        ]),
      ]);
      expect(textOf(elementsOf(html, "td")[0] ?? "")).toBe(name);
      expect(textOf(elementsOf(html, "summary")[0] ?? "")).toBe(name);
    }
  });

  it("a link, an e-mail, a mention or an issue reference in outside text renders as text: no link, nobody notified", () => {
    for (const name of [
      "https://evil.example/pay",
      "see www.evil.com now",
      "ops@evil.io",
      "@finance-team",
      "@acme/finance",
      "cc @alice, fixes #12",
      "see //evil.com",
      "mailto:x@y.io",
    ]) {
      const md = `| a |\n|---|\n| ${markdownText(name)} |\n\n${markdownText(name)}\n`;
      const html = renderGfm(md);
      expect([name, tagsOf(html).filter((t) => t === "<a>"), mentionsOf(html), autolinksOf(md)]).toEqual([name, [], [], []]);
      expect(textOf(elementsOf(html, "td")[0] ?? "")).toBe(name);
      // The checks themselves find them where the text is not escaped.
      const raw = renderGfm(name);
      expect([name, tagsOf(raw).includes("<a>") || mentionsOf(raw).length > 0 || autolinksOf(name).length > 0]).toEqual([name, true]);
    }
  });

  it("control characters, newlines and bidirectional marks are shown, not acted on, in markdown and on a terminal", () => {
    expect(terminalText("a\u001b[2Jb\nc\u202etxt.exe\u0085")).toBe("a\\u001B[2Jb\\nc\\u202Etxt.exe\\u0085");
    expect(textOf(renderGfm(markdownText("x\u202e\ny")))).toBe("x\\u202E\\ny\n");
  });
});

describe("the markdown plan and drift, rendered by a GFM renderer, whatever the text", () => {
  it("the hidden marker holds the environment's name as the CI recipes write it, and no name can end the comment", () => {
    expect(planMarkdown({ ...planOf([]), environment: "prod_eu-1" }).split("\n")[0]).toBe("<!-- revsync-plan:prod_eu-1 -->");
    const html = renderGfm(planMarkdown({ ...planOf([]), environment: "x --> <b>y</b> --!> z\n\nw" }));
    expect(tagsOf(html)).toEqual(["<h3>", "<code>", "</code>", "</h3>", "<p>", "<strong>", "</strong>", "</p>"]);
    expect(html.split("\n")[0]).toBe("<!-- revsync-plan:x --&gt; &lt;b&gt;y&lt;/b&gt; --!&gt; z\\n\\nw -->");
  });

  it("a plan of N entries renders N <details>, each summary the entry's name as text, and no tag a plain plan lacks", () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 5 }), fc.array(adversarial, { maxLength: 2 }), (entries, notes) => {
        const md = planMarkdown(
          planOf(
            entries.map((e, i) => change(e, i, false)),
            notes,
          ),
        );
        const plainMd = planMarkdown(
          planOf(
            entries.map((e, i) => change(e, i, true)),
            notes.map(() => "x"),
          ),
        );
        const html = renderGfm(md);
        const plain = renderGfm(plainMd);
        // No tag a plain plan lacks (so no link linkify made), no mention, no autolink GitHub would make.
        expect(tagsOf(html)).toEqual(tagsOf(plain));
        expect(mentionsOf(html)).toEqual(mentionsOf(plain));
        expect(autolinksOf(md)).toEqual(autolinksOf(plainMd));
        expect(tagsOf(html).filter((t) => t === "<details>")).toHaveLength(entries.length);
        const summaries = elementsOf(html, "summary").map(textOf);
        expect(summaries).toEqual(entries.map((e) => expect.stringMatching(new RegExp(`ssp/${escapeRegExp(terminalText(e.name))}$`))));
        // Each cell of each entry's table is its value, as text.
        const cells = elementsOf(html, "td").map(textOf);
        for (const e of entries) expect(cells).toContain(terminalText(JSON.stringify(e.before)));
      }),
      propertyRuns({ quick: 25, deep: 300 }),
    );
  });

  it("a drift report of N items renders N rows, each with its address and message as text", () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 5 }), (entries) => {
        const item = (e: Entry, i: number, plain: boolean): DriftItem => ({
          address: `ssp/${plain ? `x${i}` : e.name}`,
          class: "changed",
          diff: [{ path: plain ? "x" : e.field, kind: "changed", before: plain ? "x" : e.before, after: plain ? "x" : e.after }],
          message: plain && e.reason ? "x" : e.reason,
          modified_by: plain ? "x" : e.after,
          modified_on: null,
        });
        const report = (plain: boolean): DriftReport => {
          const drift = entries.map((e, i) => item(e, i, plain));
          return {
            format_version: "1",
            environment: "production",
            created_at: "2026-11-21T00:00:00.000Z",
            drift,
            summary: summarize(DRIFT_CLASSES, drift as unknown as { [k: string]: unknown }[], "class"),
          };
        };
        const html = renderGfm(driftMarkdown(report(false)));
        expect(tagsOf(html)).toEqual(tagsOf(renderGfm(driftMarkdown(report(true)))));
        expect(mentionsOf(html)).toEqual(mentionsOf(renderGfm(driftMarkdown(report(true)))));
        expect(autolinksOf(driftMarkdown(report(false)))).toEqual(autolinksOf(driftMarkdown(report(true))));
        const rows = elementsOf(html, "tbody")[0] ?? "";
        expect(elementsOf(rows, "tr")).toHaveLength(entries.length);
        const cells = elementsOf(rows, "tr").map((r) => elementsOf(r, "td").map(textOf));
        expect(cells.map((c) => [c[1], c[2]])).toEqual(entries.map((e) => [`ssp/${terminalText(e.name)}`, terminalText(e.reason)]));
      }),
      propertyRuns({ quick: 25, deep: 300 }),
    );
  });

  it("the allocation impact: a chart label cannot end its label, its line or its chart; the table has a row per line", () => {
    fc.assert(
      fc.property(adversarial.filter(Boolean), adversarial, adversarial, (contract, line, policy) => {
        const impact: AllocationImpact = {
          contract,
          file: "tests/c.yaml",
          line: 3,
          currency: "USD",
          before_status: "allocated",
          after_status: "allocated",
          lines: [{ id: line, before: { policy, ssp: 100, basis: 100, allocated: 900 }, after: { policy, ssp: 100, basis: 100, allocated: 1000 }, shift: 100 }],
          moved: 100,
        };
        const md = allocationImpactMarkdown([impact]);
        const chart = /```mermaid\n([\s\S]*?)\n```/.exec(md)?.[1] ?? "";
        expect(chart.split("\n").map((l) => l.replace(/"[^"\n]*"/g, '"…"'))).toEqual([
          "xychart-beta",
          '    title "…"',
          '    x-axis ["…", "…"]',
          expect.stringMatching(/^ {4}y-axis "…" -?\d+ --> \d+$/),
          "    bar [900.00, 1000.00]",
        ]);
        for (const label of chart.match(/"[^"]*"/g) ?? []) expect(label).not.toMatch(/[#;<>&`\\\n[\]{}|]/);
        const html = renderGfm(md);
        expect(elementsOf(html, "strong").map(textOf)).toEqual([terminalText(contract)]);
        expect(elementsOf(elementsOf(html, "tbody")[0] ?? "", "tr").map((r) => textOf(elementsOf(r, "td")[0] ?? ""))).toEqual([terminalText(line)]);
      }),
      propertyRuns({ quick: 25, deep: 300 }),
    );
  });

  it("a Mermaid label keeps letters, digits and plain punctuation, and is cut to its length", () => {
    expect(mermaidLabel('Acme "Pro" [EU] #quot; <b>', 40)).toBe(`"Acme 'Pro' 'EU' _quot_ _b_"`);
    expect(mermaidLabel("Überweisung 2026 (€)", 40)).toBe('"Überweisung 2026 (€)"');
    expect(mermaidLabel("a".repeat(10), 5)).toBe('"aaaa…"');
  });
});

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("outside text as code reads, and copies, as the text itself", () => {
  /** The text of each <code> element, character references read, nothing left out (a word joiner stays). */
  const codes = (html: string): string[] =>
    elementsOf(html, "code").map((c) =>
      c.replace(/&(?:#(\d+)|(amp|lt|gt|quot));/g, (_, dec?: string, name?: string) =>
        dec ? String.fromCodePoint(Number(dec)) : (({ amp: "&", lt: "<", gt: ">", quot: '"' } as Record<string, string>)[name ?? ""] ?? ""),
      ),
    );
  const name = fc.string({
    unit: fc.constantFrom("a", "Z", " ", "`", "|", "@", "#", "\\", "<", ">", "&", "*", "_", "[", "]", "-", ".", ":", "/", "w", "$", "~"),
    minLength: 1,
    maxLength: 12,
  });

  it("a code span in a paragraph, a heading and a table cell, and <code> in a <summary>: exactly the name, no invisible character added, whatever backticks, pipes, @ and # it holds", () => {
    fc.assert(
      fc.property(name, (text) => {
        expect(markdownCode(text)).not.toMatch(/\u2060|&#8288;/);
        expect(codes(renderGfm(`A name: ${markdownCode(text)} here.`))).toEqual([text]);
        expect(codes(renderGfm(`### Plan for ${markdownCode(text)}`))).toEqual([text]);
        const table = renderGfm(`| Address | What |\n|---|---|\n| ${markdownCode(text, { cell: true })} | x |\n`);
        expect(elementsOf(table, "td")).toHaveLength(2);
        expect(codes(table)).toEqual([text]);
        expect(codes(renderGfm(`<details><summary>${htmlCode(text)}</summary>\n\nbody\n</details>\n`))).toEqual([text]);
        expect(mentionsOf(renderGfm(`A name: ${markdownCode(text)}`))).toEqual([]);
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
    // The fence is longer than any run inside; a name that starts or ends with a backtick is padded.
    expect(markdownCode("a``b")).toBe("```a``b```");
    expect(markdownCode("`x")).toBe("`` `x ``");
    expect(markdownCode("@alice #12")).toBe("`@alice #12`");
  });
});
