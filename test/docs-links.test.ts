import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import GithubSlugger from "github-slugger";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { ROOT } from "../src/testing/helpers.js";

// The README routes to the pages under docs/, and the pages to each other: every relative link of
// them must reach a file of the repository, and a link with #anchor a heading of that page, as GitHub
// makes a heading's anchor (github-slugger is its algorithm). Code and comments cite pages by heading
// (docs/decisions.md, "One number rule"): each such citation must name a heading that exists; one of
// the README may also name a page its map links to (README, "Reliability").

const md = new MarkdownIt({ html: true });
const PAGES = [
  "README.md",
  "BENCHMARKS.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

interface Page {
  headings: string[];
  /** The text of each link, as a reader clicks it. */
  linkTexts: string[];
  anchors: Set<string>;
  links: string[];
}

const pages = new Map<string, Page>();
function page(path: string): Page {
  const known = pages.get(path);
  if (known) return known;
  const tokens = md.parse(readFileSync(join(ROOT, path), "utf8"), {});
  const slugger = new GithubSlugger();
  const headings: string[] = [];
  const anchors = new Set<string>();
  const links: string[] = [];
  const linkTexts: string[] = [];
  tokens.forEach((t, i) => {
    if (t.type === "heading_open") {
      const text = (tokens[i + 1]?.children ?? [])
        .filter((c) => c.type === "text" || c.type === "code_inline")
        .map((c) => c.content)
        .join("");
      headings.push(text);
      anchors.add(slugger.slug(text));
    }
    let text: string[] | undefined;
    for (const c of t.children ?? []) {
      if (c.type === "link_open") {
        links.push(String(c.attrGet("href") ?? ""));
        text = [];
      } else if (c.type === "link_close" && text) {
        linkTexts.push(text.join(""));
        text = undefined;
      } else if (text && (c.type === "text" || c.type === "code_inline")) text.push(c.content);
    }
  });
  const p = { headings, linkTexts, anchors, links };
  pages.set(path, p);
  return p;
}

/** What is wrong with one link of a page, or undefined when it reaches what it names. */
function broken(from: string, href: string): string | undefined {
  if (/^[a-z][a-z+.-]*:/i.test(href)) return undefined; // https:, mailto: and the like: not ours to check
  const [path = "", anchor] = href.split("#", 2);
  const target = path ? relative(ROOT, resolve(ROOT, dirname(from), decodeURIComponent(path))) : from;
  if (target.startsWith("..")) return `leads out of the repository`;
  if (!existsSync(join(ROOT, target))) return `${target} does not exist`;
  if (anchor === undefined) return undefined;
  if (!target.endsWith(".md") || statSync(join(ROOT, target)).isDirectory()) return `#${anchor} on ${target}, which is no page`;
  return page(target).anchors.has(anchor) ? undefined : `${target} has no heading #${anchor}`;
}

/** The text files of the repository's code, schemas and examples, where comments cite the pages. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === "node_modules" ? [] : sourceFiles(path);
    return /\.(ts|mjs|cjs|js|json|ya?ml|py|sh)$/.test(e.name) && !e.name.endsWith("validators.cjs") ? [path] : [];
  });
}

describe("the docs' links", () => {
  it("the README links to every page of docs/", () => {
    const linked = new Set(page("README.md").links.map((l) => l.split("#")[0]));
    for (const p of PAGES.filter((p) => p.startsWith("docs/"))) expect(linked.has(p), `README.md links to ${p}`).toBe(true);
  });

  it.each(PAGES)("%s: every relative link reaches a file, and every #anchor a heading", (from) => {
    const links = page(from).links;
    expect(links.length).toBeGreaterThan(0);
    expect(links.map((href) => ({ href, broken: broken(from, href) })).filter((l) => l.broken)).toEqual([]);
  });

  it("a broken link, a missing page and a missing anchor are each found", () => {
    expect(broken("README.md", "docs/concepts.md#addresses")).toBeUndefined();
    expect(broken("docs/concepts.md", "../README.md#exit-codes")).toBeUndefined();
    expect(broken("docs/concepts.md", "#the-plans-classes")).toBeUndefined();
    expect(broken("README.md", "docs/no-such-page.md")).toBe("docs/no-such-page.md does not exist");
    expect(broken("README.md", "docs/concepts.md#no-such-heading")).toBe("docs/concepts.md has no heading #no-such-heading");
    expect(broken("docs/concepts.md", "../../outside.md")).toBe("leads out of the repository");
  });

  it("every citation of a page's heading in code, scripts, schemas and examples names a heading of it", () => {
    const cited: { file: string; cite: string }[] = [];
    for (const file of ["src", "scripts", "bench", "schemas", "examples", "test"].flatMap(sourceFiles)) {
      // A comment's citation may break across lines: join them, their comment marks left out.
      const text = readFileSync(join(ROOT, file), "utf8").replace(/\n\s*(?:\*|\/\/|#)?\s*/g, " ");
      for (const m of text.matchAll(/\b(README|(?:docs\/)?[\w-]+\.md)(?:'s)?,? "([^"]+)"/g)) {
        const name = m[1] === "README" ? "README.md" : (m[1] as string);
        const path = [name, `docs/${name}`].find((p) => PAGES.includes(p));
        if (!path) {
          cited.push({ file, cite: `${m[0]}: no such page` });
          continue;
        }
        const heading = m[2] as string;
        const named = path === "README.md" ? [...page(path).headings, ...page(path).linkTexts] : page(path).headings;
        if (!named.some((h) => h === heading || h.startsWith(heading))) cited.push({ file, cite: `${m[0]}: no such heading` });
      }
    }
    expect(cited).toEqual([]);
  });
});
