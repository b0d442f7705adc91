import MarkdownIt from "markdown-it";

// Markdown as a reader sees it: rendered by markdown-it (tables and strikethrough as GitHub has them,
// raw HTML let through, which is stricter than GitHub, whose sanitizer drops much of it), then read
// back as tags and text. Tests hold revsync's markdown to what it renders to, not to its source.

const renderer = new MarkdownIt({ html: true });

/** The HTML a GFM renderer makes of a markdown text. */
export const renderGfm = (markdown: string): string => renderer.render(markdown);

/** Every tag of the HTML, in order, without attributes: ["<details>", "<summary>", "</summary>", …]. */
export const tagsOf = (html: string): string[] => [...html.matchAll(/<(\/?[a-zA-Z][a-zA-Z0-9-]*)[^>]*>/g)].map((m) => `<${m[1]?.toLowerCase()}>`);

/** The inner HTML of each element named `tag` (not nested in one of its kind), in order. */
export const elementsOf = (html: string, tag: string): string[] =>
  [...html.matchAll(new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1] ?? "");

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** The text of an HTML fragment, as a browser shows it: tags left out, character references read. */
export const textOf = (html: string): string =>
  html
    .replace(/<[^>]*>/g, "")
    .replace(/&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|([a-zA-Z]+));/g, (all, dec?: string, hex?: string, name?: string) =>
      dec ? String.fromCodePoint(Number(dec)) : hex ? String.fromCodePoint(parseInt(hex, 16)) : (NAMED[name ?? ""] ?? all),
    );
