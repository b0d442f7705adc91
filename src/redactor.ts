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

/** The shortest run of letters worth looking for before the whole pattern is run. */
const MIN_ANCHOR = 3;

/** A secret's longest run of ASCII letters: what any text holding the secret, in any form, holds as is. */
function letterRun(secret: string): string {
  return (secret.match(/[A-Za-z]+/g) ?? []).reduce((a, b) => (b.length > a.length ? b : a), "");
}

/** Collects every secret revsync learns (env credentials, tokens) and blanks them out of all output: a
 *  secret of any length, in any form a report writes it (charPattern). Text output is redacted as text;
 *  structured output (JSON, evidence records) field by field before it is serialized (`redactJson`), so
 *  that redacting never breaks it. What cannot be redacted without harm is refused before a run starts
 *  (`unsafeSecret`). */
export class Redactor {
  /** Each secret, and what holds it (a variable's name, "a token revsync received"). */
  private secrets = new Map<string, string>();
  private pattern: RegExp | undefined;
  /** The longest run of letters of each secret, when every secret has one long enough to look for. */
  private anchors: string[] | undefined;
  /** What holds each secret that was blanked out of some text so far. */
  private hit = new Set<string>();
  /** Secrets taken out (drop): a command that leaves them in its output keeps doing so, whoever hands
   *  one back later (a sign-in hands the password it sends). */
  private dropped = new Set<string>();

  add(secret: string | undefined, holder = "a token revsync received"): void {
    if (!secret || this.secrets.has(secret) || this.dropped.has(secret)) return;
    this.secrets.set(secret, holder);
    this.build();
  }

  /** Takes a secret out (one a command that sends nothing does not blank out: unsafeSecret). */
  drop(secret: string | undefined): void {
    if (secret) this.dropped.add(secret);
    if (secret && this.secrets.delete(secret)) this.build();
  }

  private build(): void {
    const secrets = [...this.secrets.keys()];
    const each = secrets.sort((a, b) => b.length - a.length).map((x) => [...x].map(charPattern).join(""));
    this.pattern = each.length ? new RegExp(each.join("|"), "g") : undefined;
    const anchors = secrets.map(letterRun);
    this.anchors = anchors.every((a) => a.length >= MIN_ANCHOR) ? anchors : undefined;
  }

  redact(text: string): string {
    if (!this.pattern) return text;
    // A secret's letters stand in every form as themselves (charPattern): text without the longest run
    // of letters of any secret holds none, and the pattern (a long one, run over every line) is not run.
    if (this.anchors && !this.anchors.some((a) => text.includes(a))) return text;
    const out = text.replace(this.pattern, "[redacted]");
    if (out !== text) for (const [secret, holder] of this.secrets) if (new RegExp([...secret].map(charPattern).join("")).test(text)) this.hit.add(holder);
    return out;
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
