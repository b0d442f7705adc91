import { UserError } from "../errors.js";
import { terminalLines } from "../report/escape.js";

/** Data revsync prints as it is rather than as a report: a CSV (errors --format csv), a file the service
 *  holds (ssp download, ssp template, to stdout), a completion script. One rule for every such path
 *  (docs/decisions.md, "Reports show outside text as text"):
 *  - every secret revsync knows is blanked out, wherever the data goes: a pipe is a CI log as often as
 *    a file, and a secret is never printed (`--output FILE` is where the service's bytes go whole);
 *  - to a terminal, control characters are shown as text (`\u001B`), as in everything else revsync
 *    prints, so an escape sequence in the data cannot set the title, clear the screen or forge a line;
 *    its own line ends (LF, CRLF) and tabs stay;
 *  - to a pipe or a file, the data is what it is, byte for byte: a CSV's quoted cell may hold any text
 *    (RFC 4180), and the program that reads it gets the service's text, not revsync's picture of it.
 *  `redacted`: a secret was blanked out (the caller says so on stderr). */
export function dataOutput(data: string | Uint8Array, redact: (text: string) => string, terminal: boolean): { data: string | Uint8Array; redacted: boolean } {
  const text = typeof data === "string" ? data : utf8(data);
  if (text === undefined) return bytesOutput(data as Uint8Array, redact, terminal);
  const safe = redact(text);
  return { data: terminal ? shownOnTerminal(safe) : safe, redacted: safe !== text };
}

/** The bytes as UTF-8 text, or undefined when they are not UTF-8. */
function utf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Text for a terminal: each line as terminalLines shows it, CRLF line ends kept as line ends. */
const shownOnTerminal = (text: string): string => text.split("\r\n").map(terminalLines).join("\r\n");

/** Bytes that are not UTF-8 (a file saved in another encoding): read one character per byte (Latin-1),
 *  so that blanking a secret out changes no other byte. A secret whose UTF-8 form is still in them after
 *  that (one with characters beyond Latin-1) cannot be blanked out byte for byte: nothing is printed. */
function bytesOutput(bytes: Uint8Array, redact: (text: string) => string, terminal: boolean): { data: string | Uint8Array; redacted: boolean } {
  const latin1 = Buffer.from(bytes).toString("latin1");
  const safe = redact(latin1);
  const out = Buffer.from(safe, "latin1");
  const lossy = out.toString("utf8");
  if (redact(lossy) !== lossy)
    throw new UserError(
      "the data holds a secret of revsync's sign-in, in a file that is not UTF-8 text: nothing was printed",
      "write it to a file with --output FILE",
    );
  return { data: terminal ? shownOnTerminal(safe) : out, redacted: safe !== latin1 };
}
