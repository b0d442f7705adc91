/** What a use case says while it runs (an apply, an export, a lock taken, a repo scaffolded): results on
 *  stdout, notes, warnings and errors on stderr, every text with revsync's secrets blanked out. The use
 *  cases live below the CLI and print through this alone; the CLI's Output (src/cli/output.ts) is one,
 *  and a test may give its own. */
export interface RunOutput {
  /** A result, on stdout. */
  out(text: string): void;
  /** A note beside the result, on stderr (not with --quiet). */
  info(text: string): void;
  warn(text: string): void;
  error(text: string): void;
  /** A line of an error report on stderr (a diagnostic, where a record was written). */
  errorLine(text: string): void;
  /** revsync's own advice: fixed text, said even with --quiet. */
  hint(text: string): void;
  /** A line of --verbose's log. */
  verbose(text: string): void;
  /** true the first time a key is seen by this command: for warnings said once per command. */
  once(key: string): boolean;
  /** Whether someone can answer a question on a terminal. */
  readonly interactive: boolean;
  /** The secrets kept out of everything printed and recorded. */
  readonly redactor: Redacting;
}

/** Secrets blanked out of text, and more of them learned as the run goes (a token received). */
export interface Redacting {
  redact(text: string): string;
  add(secret: string | undefined, holder?: string): void;
  /** Takes a secret out: one too short or plain to blank out, which only the sign-in is sent (src/redactor.ts). */
  drop(secret: string | undefined): void;
}

/** A question asked on a terminal: true only for the answer "yes" (src/cli/prompt.ts). */
export type AskYes = (question: string) => Promise<boolean>;
