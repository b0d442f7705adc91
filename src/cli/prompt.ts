import { createInterface } from "node:readline/promises";
import { Cancelled } from "../errors.js";
import { colorFor, type Output } from "./output.js";

/** Asks on the terminal; true only for the answer "yes". Ctrl-C, EOF (Ctrl-D) or a SIGINT/SIGTERM sent
 *  while it waits throw Cancelled: nothing was changed, exit 130. */
export async function askYes(out: Output, question: string): Promise<boolean> {
  // Plain output (--no-color, NO_COLOR) asks as a plain line: the terminal echoes what is typed, and
  // readline writes none of its cursor codes.
  const plain = !colorFor(out.errStream, !!out.opts.noColor, out.io.env);
  const rl = createInterface({ input: out.io.stdin, output: out.errStream as NodeJS.WritableStream, terminal: !plain });
  const ac = new AbortController();
  const cancel = (): void => ac.abort();
  rl.on("SIGINT", cancel);
  rl.on("close", cancel);
  out.io.signals.on("SIGINT", cancel);
  out.io.signals.on("SIGTERM", cancel);
  try {
    const answer = await rl.question(question, { signal: ac.signal });
    return answer.trim() === "yes";
  } catch (e) {
    if (ac.signal.aborted) {
      out.errStream.write("\n");
      throw new Cancelled();
    }
    throw e;
  } finally {
    rl.off("close", cancel);
    out.io.signals.off("SIGINT", cancel);
    out.io.signals.off("SIGTERM", cancel);
    rl.close();
  }
}
