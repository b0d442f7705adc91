/** Text revsync did not write, as each report shows it. Names, values, messages and notes come from the
 *  service (anyone who can name a policy), from pull requests and from files: in a report they are data,
 *  never markup and never terminal codes. One function for each context, and every report calls them
 *  where such text enters it:
 *  - markdown (a PR comment, a job summary, an audit file): `markdownText`, and `commentText` inside its
 *    hidden marker;
 *  - the terminal (every text report, and the last step of all that revsync prints): `terminalText`;
 *  - a label of a Mermaid chart: `mermaidLabel`.
 *  (JUnit XML has its own, `xml` of junit.ts.) */

/** Characters that steer a terminal or the order text is read in, or that cannot be seen: the C0
 *  controls (newline and tab among them), DEL, the C1 controls (U+009B is a terminal's CSI), the
 *  bidirectional marks, embeddings, overrides and isolates (a right-to-left override shows `txt.exe` as
 *  `exe.txt`), the line and paragraph separators, and the zero-width space, word joiner and byte order
 *  mark (two names that differ only by one look the same). The zero-width joiners some scripts and
 *  emoji need are kept. */
// eslint-disable-next-line no-control-regex -- these are exactly the characters it is about
const CONTROLS = /[\u0000-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u202A-\u202E\u2060\u2066-\u2069\u2028\u2029\uFEFF]/g;
// eslint-disable-next-line no-control-regex -- the same, but for newline and tab: the lines of a report
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u202A-\u202E\u2060\u2066-\u2069\u2028\u2029\uFEFF]/g;

const SHORT: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** A control character as text a reader sees: `\n`, `\t`, `\r`, else `\u` and four hex digits (`\u001B`,
 *  `\u202E`), which is also what JSON writes for it, so a JSON report means the same data. */
const visible = (c: string): string => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;

/** Outside text for a terminal: every control character, newline and tab included, shown visibly instead
 *  of acting (an ESC sequence cannot colour, move the cursor, clear the screen or set the title; a
 *  newline cannot start a line that looks like revsync's own). For one field of a line of a text report. */
export const terminalText = (text: string): string => text.replace(CONTROLS, visible);

/** A whole report on its way to the terminal: the same, line by line (its own newlines and tabs kept).
 *  Output runs every text it prints through this, so nothing reaches a terminal as a control code but
 *  revsync's own colours (which it adds after). */
export const terminalLines = (text: string): string => text.replace(CONTROLS_BUT_LINES, visible);

/** Markdown and HTML's specials, as character references: `&` (so `&lt;` in a name stays `&lt;`), `<` and
 *  `>` (no tag, no comment, no autolink), and what markdown reads as markup: `\` escapes, backticks,
 *  `*` `_` `~` emphasis, `[` `]` links, `|` table cells, `#` headings, `$` math; and `@` (an e-mail, a
 *  mention). A character reference is
 *  text in markdown, in a table cell and in raw HTML alike (a `<summary>`, a `<code>`), where a backslash
 *  escape would show its backslash. */
const SPECIAL = /[&<>\\`*_~[\]|#$@]/g;
/** A word joiner (U+2060, invisible) after every `@` and `#`: GitHub reads `@name` as a mention (a
 *  notification to that user or team) and `#12` as a reference to an issue in the text a page shows,
 *  after character references are read, so a reference alone would not stop them; a character between
 *  does. (A word joiner in outside text is shown as `\u2060`, so every one a reader meets is revsync's.) */
const WORD_JOINER = "&#8288;";
const reference = (c: string): string =>
  c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "@" || c === "#" ? `&#${c.charCodeAt(0)};${WORD_JOINER}` : `&#${c.charCodeAt(0)};`;
/** The same, without the word joiner: inside a `<code>` element, which GitHub makes no mention or issue
 *  reference in, so that a name copied from it is the name. */
const codeReference = (c: string): string => reference(c).replace(WORD_JOINER, "");
/** What makes a link of plain text (GitHub's autolinks, linkify's): the dot of `www.`, the `:` of
 *  `https://` and a `//` (an e-mail's `@` is a reference already). Each as a character reference, which
 *  ends the run of text a renderer looks for links in, and reads as the same character. */
const AUTOLINK = /(?<=[wW]{3})\.|:(?=\/)|\/(?=\/)/g;
/** What starts a block when it begins a line: a list item (`-`, `+`, `1.`, `1)`), a setext underline
 *  (`=`), indentation (a code block); and white space at either end, which a table cell or a paragraph
 *  would trim away. */
const BLOCK_START = /^(?:[-+=\s]|\d+[.)])/;
const LAST_SPACE = /\s$/;

/** Outside text inside markdown, anywhere: in a paragraph, a table cell, a heading, a `<summary>` or a
 *  `<code>` element. It renders as the same text, one line (control characters shown as `terminalText`
 *  shows them; a word joiner after each `@` and `#`), and can open, close or end nothing: no tag, no
 *  comment, no `<details>`, no cell, no code span, no emphasis, no link, no heading, quote or list; and
 *  it makes no autolink (`https://…`, `www.…`, a domain, an e-mail), no @mention and no issue reference.
 *  Not for an HTML attribute value (revsync puts none there). */
export function markdownText(text: string): string {
  return referenced(text, reference);
}

function referenced(text: string, ref: (c: string) => string): string {
  let safe = terminalText(text)
    .replace(SPECIAL, ref)
    .replace(AUTOLINK, (c) => `&#${c.charCodeAt(0)};`);
  if (LAST_SPACE.test(safe)) safe = `${safe.slice(0, -1)}&#${safe.charCodeAt(safe.length - 1)};`;
  return BLOCK_START.test(safe) ? `&#${safe.charCodeAt(0)};${safe.slice(1)}` : safe;
}

/** Outside text as a `<code>` element, for raw HTML (a `<summary>`, where markdown is not read) and for
 *  what a code span cannot hold: escaped as `markdownText` escapes it, but for the word joiners (GitHub
 *  makes no mention or issue reference inside code), so that it reads, and copies, as the text itself. */
export const htmlCode = (text: string): string => `<code>${codeText(text)}</code>`;

/** Outside text inside a `<code>` element revsync writes around it: `markdownText` but for the word
 *  joiners. */
export const codeText = (text: string): string => referenced(text, codeReference);

/** Outside text as a markdown code span, in a paragraph, a list item or a heading (`cell`: in a table
 *  cell): the text as it is (control characters shown as `terminalText` shows them), nothing invisible
 *  added, so that a name copied from the page is the name. Its fence is a run of backticks longer than
 *  any inside, padded with a space on each side where the text begins or ends with a backtick or a
 *  space (CommonMark takes one away from each side). In a table cell each `|` is written `\|` (the
 *  table reads it as the character, code span or not); a text with a backslash right before a `|`,
 *  which no escape keeps in a cell, and the empty text, which no code span holds, are `htmlCode`. */
export function markdownCode(text: string, where: { cell?: boolean } = {}): string {
  const shown = terminalText(text);
  if (shown === "" || (where.cell && shown.includes("\\|"))) return htmlCode(text);
  const longest = Math.max(0, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  const pad = /^[` ]|[` ]$/.test(shown) && !/^ +$/.test(shown) ? " " : "";
  return `${fence}${pad}${where.cell ? shown.replace(/\|/g, "\\|") : shown}${pad}${fence}`;
}

/** Outside text inside an HTML comment (the hidden marker a CI recipe finds the comment by, which it
 *  writes with the plain name): kept as it is but for control characters (shown), `>`, the one
 *  character that could end the comment (`-->`, `--!>`), and `<`. Nothing else in a comment is read. */
export const commentText = (text: string): string => terminalText(text).replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A label of a Mermaid chart, in its double quotes: letters, digits, marks, currency signs, spaces and
 *  plain punctuation kept; a quote, a bracket, a backtick or a backslash (which would end it) become
 *  `'`; anything else (`#` and `;` make Mermaid's entity codes, `<` its HTML, a control character a new
 *  line of the chart) becomes `_`; cut to `max` characters. */
export function mermaidLabel(text: string, max: number): string {
  const t = [...text].map((c) => (/["'[\]`\\]/.test(c) ? "'" : /[\p{L}\p{M}\p{N}\p{Sc} .,:!?/()+%*=@-]/u.test(c) ? c : "_"));
  return `"${t.length > max ? `${t.slice(0, max - 1).join("")}…` : t.join("")}"`;
}
