import { randomBytes } from "node:crypto";
import { UserError } from "../errors.js";
import { redactJson } from "../redact-json.js";
import { terminalLines } from "../report/escape.js";
import type { Painter } from "../report/painter.js";
import type { RunOutput } from "../run-output.js";
import { processIo, type CliIo } from "./io.js";
import { dataOutput } from "./data-output.js";

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

/** Collects every secret revsync learns (env credentials, tokens) and blanks them out of all output: a
 *  secret of any length, in any form a report writes it (charPattern). Text output is redacted as text;
 *  structured output (JSON, evidence records) field by field before it is serialized (`redactJson`), so
 *  that redacting never breaks it. What cannot be redacted without harm is refused before a run starts
 *  (`unsafeSecret`). */
export class Redactor {
  /** Each secret, and what holds it (a variable's name, "a token revsync received"). */
  private secrets = new Map<string, string>();
  private pattern: RegExp | undefined;
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
    const each = [...this.secrets.keys()].sort((a, b) => b.length - a.length).map((x) => [...x].map(charPattern).join(""));
    this.pattern = each.length ? new RegExp(each.join("|"), "g") : undefined;
  }

  redact(text: string): string {
    if (!this.pattern) return text;
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

export interface Stream {
  write(chunk: string | Uint8Array): unknown;
  isTTY?: boolean;
}

type Colour = "red" | "green" | "yellow" | "cyan" | "bold" | "dim";

/** Whether text bound for one stream gets colour: --no-color never; FORCE_COLOR (other than 0 or
 *  false) always, NO_COLOR set or not (Node's rule, and force-color.org's: forcing colour is the more
 *  specific wish); NO_COLOR never; else only when that stream is a terminal. Decided per stream, so
 *  `revsync plan 2>err.txt` on a terminal colours the plan and leaves err.txt plain. */
export function colorFor(stream: Stream, noColorFlag: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  if (noColorFlag) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== "") return force !== "0" && force !== "false";
  if (env.NO_COLOR) return false;
  return !!stream.isTTY && env.TERM !== "dumb";
}

/** A painter marks its colour codes with the run's key (private-use characters and a random key no
 *  outside text can know) instead of writing them: Output turns every other control character into
 *  visible text, then the marks into the terminal's codes, so the only codes that reach a terminal are
 *  revsync's own colours. */
function painter(on: boolean, key: string): Painter {
  return {
    paint: (color, text) => {
      if (!on) return text;
      const codes = { red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39], bold: [1, 22], dim: [2, 22] }[color];
      return `${key}${codes[0]}m${text}${key}${codes[1]}m`;
    },
  };
}

const MARK = "\uE000";

/** The version of the shape of every JSON output (a saved plan's is PLAN_FORMAT_VERSION, also "1").
 *  Consumers ignore unknown keys; a new major version is a change they must not read as the old one. */
export const JSON_FORMAT_VERSION = "1";

/** All of a command's output goes through here: results to stdout, the rest to stderr, redacted. Each
 *  stream has its own colour decision: `paint` is for stdout's text, `err.paint` for stderr's. */
export class Output implements Painter, RunOutput {
  /** Paints text that goes to stderr (a plan apply shows before asking, a log line). */
  readonly err: Painter;
  private readonly outPainter: Painter;
  /** The mark of this run's colour codes, and where they stand in a text. */
  private readonly key = `${MARK}${randomBytes(8).toString("hex")}\uE001`;
  private readonly marks: RegExp;
  constructor(
    readonly redactor: Redactor,
    private readonly stdout: Stream = process.stdout,
    private readonly stderr: Stream = process.stderr,
    readonly opts: { quiet?: boolean; verbose?: boolean; noColor?: boolean; io?: CliIo } = {},
  ) {
    this.io = opts.io ?? processIo();
    this.marks = new RegExp(`${this.key}(\\d+)m`, "g");
    this.outPainter = painter(colorFor(stdout, !!opts.noColor, this.io.env), this.key);
    this.err = painter(colorFor(stderr, !!opts.noColor, this.io.env), this.key);
  }

  /** Text as it reaches a stream: secrets blanked out, then every control character that came with it
   *  shown as text (terminalLines: an ESC sequence of a policy name cannot colour, move the cursor or
   *  clear the screen), then revsync's own colours written as the terminal's codes. Every text revsync
   *  prints goes through here (`raw`, the bytes of a file or a completion script, does not). */
  terminal(text: string): string {
    return terminalLines(this.redactor.redact(text)).replace(this.marks, "\u001b[$1m");
  }

  /** The run's streams, environment, working directory and signals (the process's, unless given). */
  readonly io: CliIo;

  private said = new Set<string>();

  /** true the first time a key is seen by this command: for warnings said once per command. */
  once(key: string): boolean {
    if (this.said.has(key)) return false;
    this.said.add(key);
    return true;
  }

  /** Whether someone can answer a question: the answer is read from stdin, a terminal. The question goes
   *  to stderr wherever that goes: `revsync apply 2>&1 | tee apply.log` still asks, on the terminal tee
   *  writes to, and keeps the question and the run in the log. */
  get interactive(): boolean {
    return !!this.io.stdin.isTTY;
  }

  get stderrIsTTY(): boolean {
    return !!this.stderr.isTTY;
  }

  get errStream(): Stream {
    return this.stderr;
  }

  out(text: string): void {
    this.stdout.write(this.terminal(text.endsWith("\n") ? text : `${text}\n`));
  }

  /** A JSON result on stdout, with format_version first: secrets taken out of each text of it before it
   *  is written (never out of the JSON text, which a secret like `true` would break). */
  json(value: object): void {
    const safe = redactJson({ format_version: JSON_FORMAT_VERSION, ...value }, (t) => this.redactor.redact(t));
    this.stdout.write(terminalLines(`${JSON.stringify(safe, null, 2)}\n`));
  }

  /** Data as it is (a CSV, a file the service holds, a completion script), by dataOutput's one rule:
   *  secrets blanked out wherever it goes, control characters shown as text on a terminal, the data's
   *  own bytes to a pipe or a file. */
  raw(data: string | Uint8Array): void {
    const shown = dataOutput(data, (t) => this.redactor.redact(t), !!this.stdout.isTTY);
    if (shown.redacted && this.once("data-redacted"))
      this.warn("a secret of revsync's sign-in was blanked out of the data printed (the service's data holds it); --output FILE writes the data whole");
    this.stdout.write(shown.data);
  }

  info(text: string): void {
    if (!this.opts.quiet) this.stderr.write(this.terminal(`${text}\n`));
  }

  warn(text: string): void {
    this.stderr.write(this.terminal(`${this.err.paint("yellow", "Warning:")} ${text}\n`));
  }

  error(text: string): void {
    this.stderr.write(this.terminal(`${this.err.paint("red", "Error:")} ${text}\n`));
  }

  /** A line of an error report on stderr (a diagnostic), redacted. */
  errorLine(text: string): void {
    this.stderr.write(this.terminal(`${text}\n`));
  }

  /** revsync's own advice: fixed text, never redacted (a secret that happens to be a word of it would
   *  garble it), and said even with --quiet. What it quotes is still shown as text. */
  hint(text: string): void {
    this.stderr.write(terminalLines(`${text}\n`).replace(this.marks, "\u001b[$1m"));
  }

  verbose(text: string): void {
    if (this.opts.verbose) this.stderr.write(this.terminal(`${text}\n`));
  }

  /** Paints text that goes to stdout. */
  paint(color: Colour, text: string): string {
    return this.outPainter.paint(color, text);
  }
}
