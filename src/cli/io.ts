import type { Readable } from "node:stream";
import type { Registry } from "../kinds/kind.js";
import { KINDS } from "../kinds/registry.js";
import type { SignalSource } from "./apply-signals.js";

/** What a run of the command entry reads from and writes to outside itself: its streams, environment,
 *  working directory and signals. bin.ts gives it the process's own (processIo); tests that are not
 *  about the process give it theirs, and run commands in process. A command reads these, never the
 *  process behind its back, so two runs in one process do not see each other. */
/** A stream a run writes to: a terminal has isTTY, and its width in columns. */
export interface OutStream {
  write(chunk: string | Uint8Array): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  stdin: Readable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** The working directory: relative paths of the command line are relative to it. */
  cwd: string;
  /** SIGINT and SIGTERM; `once` for a command that ends on the first (the emulator). */
  signals: SignalSource & { once(signal: "SIGINT" | "SIGTERM", listener: () => void): unknown };
  /** The wall clock guardrails judge by (freeze windows, exceptions' until days, days from today):
   *  the machine's unless a test gives its own. Never read from a flag or a variable, so that no run can
   *  be told it is another day. */
  now?: () => number;
  /** The resource kinds the run knows: the registry's (src/kinds/registry.ts) unless given, as a test
   *  gives a kind written outside the tree (test/toy-kind.e2e.test.ts). */
  kinds?: Registry;
}

/** The kinds of a run. */
export const kindsOf = (io: Pick<CliIo, "kinds">): Registry => io.kinds ?? KINDS;

/** The process's own streams, environment, working directory and signals. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), signals: process };
}
