import type { Painter } from "../report/painter.js";
import { processIo, type CliIo } from "./io.js";

/** Collects every secret revsync learns (env credentials, tokens) and blanks them out of all output. */
export class Redactor {
  private secrets = new Set<string>();
  private pattern: RegExp | undefined;

  add(secret: string | undefined): void {
    if (!secret || secret.length < 4 || this.secrets.has(secret)) return;
    this.secrets.add(secret);
    const escaped = [...this.secrets].sort((a, b) => b.length - a.length).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    this.pattern = new RegExp(escaped.join("|"), "g");
  }

  redact(text: string): string {
    return this.pattern ? text.replace(this.pattern, "[redacted]") : text;
  }
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

function painter(on: boolean): Painter {
  return {
    paint: (color, text) => {
      if (!on) return text;
      const codes = { red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39], bold: [1, 22], dim: [2, 22] }[color];
      return `\u001b[${codes[0]}m${text}\u001b[${codes[1]}m`;
    },
  };
}

/** The version of the shape of every JSON output (a saved plan's is PLAN_FORMAT_VERSION, also "1").
 *  Consumers ignore unknown keys; a new major version is a change they must not read as the old one. */
export const JSON_FORMAT_VERSION = "1";

/** All of a command's output goes through here: results to stdout, the rest to stderr, redacted. Each
 *  stream has its own colour decision: `paint` is for stdout's text, `err.paint` for stderr's. */
export class Output implements Painter {
  /** Paints text that goes to stderr (a plan apply shows before asking, a log line). */
  readonly err: Painter;
  private readonly outPainter: Painter;
  constructor(
    readonly redactor: Redactor,
    private readonly stdout: Stream = process.stdout,
    private readonly stderr: Stream = process.stderr,
    readonly opts: { quiet?: boolean; verbose?: boolean; noColor?: boolean; io?: CliIo } = {},
  ) {
    this.io = opts.io ?? processIo();
    this.outPainter = painter(colorFor(stdout, !!opts.noColor, this.io.env));
    this.err = painter(colorFor(stderr, !!opts.noColor, this.io.env));
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

  get interactive(): boolean {
    return !!this.stderr.isTTY && !!this.io.stdin.isTTY;
  }

  get stderrIsTTY(): boolean {
    return !!this.stderr.isTTY;
  }

  get errStream(): Stream {
    return this.stderr;
  }

  out(text: string): void {
    this.stdout.write(this.redactor.redact(text.endsWith("\n") ? text : `${text}\n`));
  }

  /** A JSON result on stdout, with format_version first. */
  json(value: object): void {
    this.out(JSON.stringify({ format_version: JSON_FORMAT_VERSION, ...value }, null, 2));
  }

  raw(text: string): void {
    this.stdout.write(this.redactor.redact(text));
  }

  info(text: string): void {
    if (!this.opts.quiet) this.stderr.write(this.redactor.redact(`${text}\n`));
  }

  warn(text: string): void {
    this.stderr.write(this.redactor.redact(`${this.err.paint("yellow", "Warning:")} ${text}\n`));
  }

  error(text: string): void {
    this.stderr.write(this.redactor.redact(`${this.err.paint("red", "Error:")} ${text}\n`));
  }

  /** A line of an error report on stderr (a diagnostic), redacted. */
  errorLine(text: string): void {
    this.stderr.write(this.redactor.redact(`${text}\n`));
  }

  /** revsync's own advice: fixed text, never redacted (a secret that happens to be a word of it would
   *  garble it), and said even with --quiet. */
  hint(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  verbose(text: string): void {
    if (this.opts.verbose) this.stderr.write(this.redactor.redact(`${text}\n`));
  }

  /** Paints text that goes to stdout. */
  paint(color: Colour, text: string): string {
    return this.outPainter.paint(color, text);
  }
}
