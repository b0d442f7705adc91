import { randomBytes } from "node:crypto";
import { Redactor } from "../redactor.js";
import { redactJson } from "../redact-json.js";
import { terminalLines } from "../report/escape.js";
import type { Painter } from "../report/painter.js";
import type { RunOutput } from "../run-output.js";
import { processIo, type CliIo } from "./io.js";
import { dataOutput } from "./data-output.js";

export { MIN_SECRET, Redactor, unsafeSecret, unsafeSecretRefusal, unsafeSecrets } from "../redactor.js";

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
