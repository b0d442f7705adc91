import { UserError } from "./errors.js";

/** A backslash and a double quote as they stand in output: as themselves, or as a report's character
 *  reference (markdown escapes the backslash of a JSON escape it shows: `&#92;"`). */
const BACKSLASH = "(?:\\\\|&#0*92;)";
const QUOTE = '(?:"|&quot;|&#0*34;)';

/** How one character of a secret may stand in what revsync prints, however a report wrote it: as
 *  itself; a `|` as a markdown table cell's `\|`; as a character reference, in markdown, HTML and XML (`&#64;`, `&amp;`); as JSON and the
 *  terminal show it (`\"`, `\\`, `\n`, `\u0009`), also inside markdown (`&#92;"`); percent-encoded, as
 *  in a URL's path; a control character as XML's replacement character. Markdown puts a word joiner
 *  after an `@` or a `#` it writes (docs/decisions.md, "Reports show outside text as text"), which may
 *  follow it. */
function charPattern(c: string): string {
  const literal = c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  if (/[A-Za-z]/.test(c)) return literal;
  const code = c.codePointAt(0) ?? 0;
  const forms = [literal, `&#0*${code};`];
  const named: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };
  if (named[c]) forms.push(named[c]);
  const json: Record<string, string> = { '"': QUOTE, "\\": BACKSLASH, "\n": "n", "\r": "r", "\t": "t", "\b": "b", "\f": "f" };
  if (json[c]) forms.push(`${BACKSLASH}${json[c]}`);
  // A code span in a markdown table cell writes a `|` as `\|` (markdownCode).
  if (c === "|") forms.push(`${BACKSLASH}\\|`);
  if (code <= 0xffff) {
    const hex = [...code.toString(16).padStart(4, "0")].map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join("");
    forms.push(`${BACKSLASH}u${hex}`);
  }
  if (code < 0x20 || code === 0x7f) forms.push("\uFFFD");
  const percent = encodeURIComponent(c);
  if (percent !== c) forms.push(percent);
  const one = `(?:${forms.join("|")})`;
  return c === "@" || c === "#" ? `${one}(?:&#8288;|\u2060)?` : one;
}

/** charPattern of each character met so far: a token revsync receives is some hundreds of characters
 *  of a few dozen kinds, and a run signs in more than once. */
const formsOf = new Map<string, string>();

function charForms(c: string): string {
  let forms = formsOf.get(c);
  if (forms === undefined) formsOf.set(c, (forms = charPattern(c)));
  return forms;
}

/** The shortest run of letters worth looking for before the whole pattern is run. */
const MIN_ANCHOR = 3;

/** A secret's longest run of ASCII letters: what any text holding the secret, in any form, holds as is. */
function letterRun(secret: string): string {
  return (secret.match(/[A-Za-z]+/g) ?? []).reduce((a, b) => (b.length > a.length ? b : a), "");
}

/** One secret as redact looks for it: its pattern, the run of letters any text holding it holds, and
 *  what holds it. The pattern is built the first time a text holds that run (a long secret's is a long
 *  regex, which V8 compiles at first use, kept for every text after): most secrets of a run, a token
 *  received among them, never stand in anything it prints. */
interface Sought {
  readonly pattern: () => RegExp;
  /** Undefined when the secret has no run of letters long enough to look for: it is always looked for. */
  readonly anchor: string | undefined;
  readonly holder: string;
}

function sought(secret: string, holder: string): Sought {
  const anchor = letterRun(secret);
  let pattern: RegExp | undefined;
  return {
    pattern: () => (pattern ??= new RegExp([...secret].map(charForms).join(""), "g")),
    anchor: anchor.length >= MIN_ANCHOR ? anchor : undefined,
    holder,
  };
}

/** Where the secrets stand in text, as [start, end) spans in the order of the text, and what holds
 *  each secret found. Spans that overlap (two secrets sharing characters, one inside another) merge
 *  into one, so that no part of either is left standing beside the other's blank. */
function spansOf(text: string, sought: readonly Sought[]): { spans: [number, number][]; holders: string[] } {
  const spans: [number, number][] = [];
  const holders: string[] = [];
  for (const s of sought) {
    const pattern = s.pattern();
    pattern.lastIndex = 0;
    const before = spans.length;
    for (let m = pattern.exec(text); m; m = pattern.exec(text)) spans.push([m.index, m.index + m[0].length]);
    if (spans.length > before) holders.push(s.holder);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last && span[0] < last[1]) last[1] = Math.max(last[1], span[1]);
    else merged.push(span);
  }
  return { spans: merged, holders };
}

/** Collects every secret revsync learns (env credentials, tokens) and blanks them out of all output: a
 *  secret of any length, in any form a report writes it (charPattern). Text output is redacted as text;
 *  structured output (JSON, evidence records) field by field before it is serialized (`redactJson`), so
 *  that redacting never breaks it. What cannot be redacted without harm is refused before a run starts
 *  (`unsafeSecret`). */
export class Redactor {
  /** Each secret, as redact looks for it, in the order revsync learnt them. */
  private secrets = new Map<string, Sought>();
  /** What holds each secret that was blanked out of some text so far. */
  private hit = new Set<string>();
  /** Secrets taken out (drop): a command that leaves them in its output keeps doing so, whoever hands
   *  one back later (a sign-in hands the password it sends). */
  private dropped = new Set<string>();

  add(secret: string | undefined, holder = "a token revsync received"): void {
    if (!secret || this.secrets.has(secret) || this.dropped.has(secret)) return;
    this.secrets.set(secret, sought(secret, holder));
  }

  /** Takes a secret out (one a command that sends nothing does not blank out: unsafeSecret). */
  drop(secret: string | undefined): void {
    if (!secret) return;
    this.dropped.add(secret);
    this.secrets.delete(secret);
  }

  redact(text: string): string {
    if (!this.secrets.size) return text;
    // A secret's letters stand in every form as themselves (charPattern): only the secrets whose longest
    // run of letters the text holds (or that have none long enough to look for) can be in it, and only
    // their patterns are run.
    const candidates = [...this.secrets.values()].filter((s) => s.anchor === undefined || text.includes(s.anchor));
    if (!candidates.length) return text;
    const { spans, holders } = spansOf(text, candidates);
    if (!spans.length) return text;
    for (const holder of holders) this.hit.add(holder);
    let out = "";
    let at = 0;
    for (const [start, end] of spans) {
      out += `${text.slice(at, start)}[redacted]`;
      at = end;
    }
    return out + text.slice(at);
  }

  /** What holds each secret blanked out of some text so far: text revsync printed then is not what the
   *  service or a file holds. */
  altered(): string[] {
    return [...this.hit];
  }
}

/** The shortest secret revsync accepts, and the shortest that may be a word or a number alone. */
export const MIN_SECRET = 8;
const MIN_PLAIN_SECRET = 12;

/** Why a secret cannot be kept out of output without harm, if it cannot: one so short, or so plain (a
 *  word or a number alone), that blanking it out would blank ordinary words and values of what revsync
 *  prints and records (a secret `true` would turn `"four_eyes": true` into `[redacted]`). Never says
 *  the secret itself. */
export function unsafeSecret(secret: string): string | undefined {
  const n = [...secret].length;
  if (n < MIN_SECRET)
    return `it is ${n} character${n === 1 ? "" : "s"} long: a secret that short could be any word or value revsync prints, and blanking it out would garble them`;
  if (n < MIN_PLAIN_SECRET && /^(?:[\p{L}\p{M}]+|\p{N}+)$/u.test(secret))
    return `it is a word or a number of ${n} characters alone: blanking it out would garble every word or value revsync prints that holds it`;
  return undefined;
}

/** The secrets of the environment that revsync would blank out of everything it prints, each checked
 *  before the run does anything: each variable whose secret is unsafe, with why. */
export function unsafeSecrets(env: NodeJS.ProcessEnv, names: readonly string[]): { name: string; why: string }[] {
  return names.flatMap((name) => {
    const value = env[name];
    const why = value ? unsafeSecret(value) : undefined;
    return why ? [{ name, why }] : [];
  });
}

/** The refusal of a command that would send with an unsafe secret: a UserError naming the first. */
export function unsafeSecretRefusal(first: { name: string; why: string }): UserError {
  const { name, why } = first;
  return new UserError(
    `${name} cannot be kept out of revsync's output: ${why}; nothing was sent`,
    `give ${name} the real secret (at least ${MIN_SECRET} characters, not a word or a number alone), or unset it`,
  );
}
