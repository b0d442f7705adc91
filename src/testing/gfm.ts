import MarkdownIt from "markdown-it";

// Markdown as a reader sees it: rendered by markdown-it (tables and strikethrough as GitHub has them,
// raw HTML let through, which is stricter than GitHub, whose sanitizer drops much of it; plain text
// made into links by linkify: URLs, // links, e-mails), then read back as tags and text. Tests hold
// revsync's markdown to what it renders to, not to its source.

const renderer = new MarkdownIt({ html: true, linkify: true });
/** The same parser, its runs of text left as the parser finds them: a character reference ends one. */
const lexer = new MarkdownIt({ html: true });
lexer.core.ruler.disable("text_join");

/** The HTML a GFM renderer makes of a markdown text. */
export const renderGfm = (markdown: string): string => renderer.render(markdown);

/** Every tag of the HTML, in order, without attributes: ["<details>", "<summary>", "</summary>", …]. */
export const tagsOf = (html: string): string[] => [...html.matchAll(/<(\/?[a-zA-Z][a-zA-Z0-9-]*)[^>]*>/g)].map((m) => `<${m[1]?.toLowerCase()}>`);

/** The inner HTML of each element named `tag` (not nested in one of its kind), in order. */
export const elementsOf = (html: string, tag: string): string[] =>
  [...html.matchAll(new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1] ?? "");

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** HTML text with its character references read. */
const decoded = (text: string): string =>
  text.replace(/&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|([a-zA-Z]+));/g, (all, dec?: string, hex?: string, name?: string) =>
    dec ? String.fromCodePoint(Number(dec)) : hex ? String.fromCodePoint(parseInt(hex, 16)) : (NAMED[name ?? ""] ?? all),
  );

/** The text of an HTML fragment, as a browser shows it: tags left out, character references read, and
 *  word joiners (U+2060, which nobody sees) left out. */
export const textOf = (html: string): string => decoded(html.replace(/<[^>]*>/g, "")).replace(/\u2060/g, "");

/** What GitHub makes a mention or an issue reference of, in the text a page shows (its text outside
 *  code, pre and links, character references read): `@name` or `@org/team` after the start or a
 *  character that is not a word's, and `#12` likewise. Each found, in order. */
export function mentionsOf(html: string): string[] {
  const outside = html.replace(/<(code|pre|a)\b[^>]*>[\s\S]*?<\/\1>/gi, " ");
  const texts = outside.split(/<[^>]*>/).map(decoded);
  return texts.flatMap((t) => [...t.matchAll(/(?:^|[^\w`])(@[A-Za-z0-9][A-Za-z0-9-]*(?:\/[\w.-]+)?|#\d+)/g)].map((m) => m[1] ?? ""));
}

/** What GitHub's autolinks (cmark-gfm's extension) make a link of, in each run of plain text of a
 *  markdown document: `www.` at a run's start or after a space, `*`, `_`, `~` or `(`; `http://`,
 *  `https://` and `ftp://`; an e-mail address. A character reference ends a run of text, as in
 *  cmark-gfm, so `www&#46;x` holds no `www.`. Each found, in order. */
export function autolinksOf(markdown: string): string[] {
  const found: string[] = [];
  const walk = (tokens: ReturnType<typeof lexer.parse>): void => {
    for (const t of tokens) {
      if (t.children) walk(t.children);
      if (t.type !== "text") continue;
      for (const m of t.content.matchAll(/(?:^|[\s*_~(])(www\.[^\s<]*)|((?:https?|ftp):\/\/[^\s<]*)|([\w.+-]+@[\w-]+\.[\w.-]*\w)/gi))
        found.push(m[1] ?? m[2] ?? m[3] ?? "");
    }
  };
  walk(lexer.parse(markdown, {}));
  return found;
}
