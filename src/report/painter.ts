/** What reports need of the output: colouring (or not) a piece of text. cli/Output provides it. */
export interface Painter {
  paint(color: "red" | "green" | "yellow" | "cyan" | "bold" | "dim", text: string): string;
}

/** What printers need besides colour: somewhere to write results (stdout), and notes (stderr). */
export interface Sink extends Painter {
  out(text: string): void;
  /** A JSON result, with format_version. */
  json(value: object): void;
  /** Data as it is (a CSV): secrets blanked out, control characters shown as text on a terminal. */
  raw(data: string | Uint8Array): void;
  /** A note beside the result, on stderr (not with --quiet). */
  info(text: string): void;
}
