import { ApiError } from "../errors.js";

/** What the API layer learned about a write, as data: the apply report puts it in words, and nothing
 *  reads it back out of a message. */
export type Landed =
  /** The service answered that it made the write. */
  | { kind: "done" }
  /** A first send was refused because the write was made already (a 409), and reading back shows the
   *  state it asked for: `status` is the state found. */
  | { kind: "already"; status: string }
  /** The answer was lost, or a repeat of a send that may have landed was refused; reading back shows
   *  that the write landed (`status`: the state found, where the resource has one; `why`: what left the
   *  outcome unknown, in words, where the API layer knows it). */
  | { kind: "confirmed"; status?: string; why?: string };

export type Failed =
  /** The write may have landed and reading back could not tell: it is never sent again. */
  | { kind: "unknown"; error: ApiError }
  /** A definite refusal: the service did not make the write. */
  | { kind: "refused"; error: ApiError };

export type WriteOutcome = Landed | Failed;

/** A write that landed, with the service's answer (or what reading back found). */
export type Written<T> = Landed & { result: T };

/** Runs a write and says what became of it. A failure the service answered (an ApiError) is an outcome
 *  too; any other error (a bug, bad input) is thrown. */
export async function settle<T>(write: Promise<Written<T>>): Promise<Written<T> | Failed> {
  try {
    return await write;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return e.outcomeUnknown ? { kind: "unknown", error: e } : { kind: "refused", error: e };
  }
}
