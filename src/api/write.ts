import { ApiError } from "../errors.js";
import { BUSY_STATUS, readBackReason, type Verdict } from "./classify.js";
import { bodyProblem, freshProgress, pathProblem, type ApiCore, type RequestSpec } from "./core.js";

/** What one write came to, as data: the apply report and the approvals command put it in words, and
 *  nothing reads it back out of a message (docs/architecture.md, "One write, one unit"). */
export type WriteOutcome<T> =
  /** The service answered that it made the write (`unchecked`: why what it holds could not be read
   *  again after it, when the write has a check). */
  | { kind: "done"; result: T; unchecked?: string }
  /** The service holds what the write asks for, made by someone else (`status`: the state found, where
   *  the resource has one): found before anything was sent, or after a send of this write that the
   *  service refused as not made (`answered`: its status, a 409, a 412 or a 2xx with an error array;
   *  someone else's write came first), or after a send turned away unprocessed (`unprocessed`: a 401,
   *  its token refused). Never after a send that may have landed, or a 429 or 503 the service may have processed all
   *  the same: what it finds then is confirmed (read back). */
  | { kind: "already"; status?: string; why: string; answered?: number; unprocessed?: number }
  /** An earlier send of this run may have landed and reading back shows that it did (`why`: what left
   *  the outcome unknown: a lost answer, a 5xx, or a 429 or 503 the service may have processed all the
   *  same). */
  | { kind: "confirmed"; status?: string; why: string; result: T; unchecked?: string }
  /** The write landed, and reading the service right after it shows that someone else's write met it:
   *  undid it, or came in the same round trip, and this write may have undone theirs (`reason`: what
   *  differs or how the version moved, who changed it and when). Never "done". */
  | { kind: "overwritten"; reason: string; result: T }
  /** The guard found the resource changed since the plan: nothing (more) was sent for it. */
  | { kind: "blocked"; reason: string }
  /** A definite refusal, or a conflict: the service did not make this write. */
  | { kind: "refused"; error: ApiError }
  /** A send may have landed and reading back could not tell: never sent again. */
  | { kind: "unknown"; error: ApiError };

/** What the guard found, right before a send: go (with what the send needs of the fresh read: its
 *  body's live part, the If-Match version), blocked (someone else's change, with who and when), or
 *  already (the service holds the write's effect). */
export type GuardVerdict<R> = { go: R } | { blocked: string } | { already: string; status?: string };

/** A write's guard: reads the resource right before each send and says go (with what the send needs),
 *  blocked or already. Without one (a caller outside apply, a test) every send goes as asked. */
export type GuardOf<R> = () => Promise<GuardVerdict<R>>;

/** What a read-back found after a send that may have landed: the write's effect (landed), the state
 *  before it (not landed: it may be sent again), or something else (`other`, in words: another's work). */
export type ReadBack<T> = { landed: true; status?: string; result: T } | { landed: false } | { other: string };

/** One write, as its caller describes it: the unit does the rest. */
export interface Write<T, R> {
  /** Reads the resource and compares it with what the plan saw. Runs before every send, the first and
   *  each resend (after a Retry-After, a backoff, a token refresh). */
  guard(): Promise<GuardVerdict<R>>;
  /** The request of one send, from what the guard read (the body, the If-Match). */
  request(read: R): RequestSpec;
  /** Reads what the service holds after a send that may have landed. */
  readBack(): Promise<ReadBack<T>>;
  /** The result of a 2xx answer; undefined when it lacks what the caller needs (a create's id without
   *  a body): then it is read back. */
  result(body: unknown): T | undefined;
  /** What a definite refusal of a send means when no earlier send of this run may have landed, where it
   *  means more than "refused" (a 409, or a 2xx with an error array, the interface's refusal whatever the
   *  status: someone else's work may have come first). A 412 never reaches it: it goes back to the guard. */
  firstRefusal?(err: ApiError): Promise<WriteOutcome<T> | undefined>;
  /** The most sends that spend the budget (default: ApiCore.writeSends). */
  maxSends?: number;
  /** After the write landed (done, or confirmed by reading back): reads what the service holds now and
   *  says, in words, what undid it (someone else's write since, with who and when) or what it may have
   *  undone (someone else's write in the same round trip), or undefined when what it set still holds and
   *  nobody else wrote meanwhile; `unchecked` (in words) when the read cannot tell. A read that fails leaves
   *  the write done, saying it was not checked. */
  check?(result: T): Promise<string | { unchecked: string } | undefined>;
}

/** How the service refused a send of a write as not made, in words for a report ("the service …"):
 *  "answered 409", or "refused it (status 200, with an error array)" for the interface's refusal
 *  whatever the status. */
export const refusedWords = (status: number): string =>
  status >= 200 && status < 300 ? `refused it (status ${status}, with an error array)` : `answered ${status}`;

/** The words a guard's blocked verdict ends its "what changed" with (src/kinds/words.ts): true of a write
 *  none of whose sends reached the service; the write unit says otherwise where one did. */
export const NOTHING_SENT_FOR_IT = "nothing was sent for it";

/** What a write says in place of "nothing was sent for it" once a send of it went out, and what answered it. */
const notSentSince = (sent: ApiError): string => `nothing more was sent for it (its send: ${readBackReason(sent)})`;

/** Why the guard's read failed, for the refusal of a write nothing (more) was sent for (`sent`: the
 *  answer to an earlier send of it that did not land). */
function guardFailed(e: ApiError, sent: ApiError | undefined): ApiError {
  const tail = sent ? notSentSince(sent) : NOTHING_SENT_FOR_IT;
  return new ApiError({
    method: e.method,
    path: e.path,
    status: e.status,
    message: `${e.serviceMessage}; reading it right before the write failed, so ${tail}`,
    problems: e.problems,
  });
}

/** The write unit: for one write, the guard before every send, each send, what each answer means,
 *  whether an earlier send may have landed, the read-back that settles an unknown outcome, and the
 *  outcome as data. Nothing else parses a write's answers or decides to send it again.
 *
 *  - 2xx: done. A 2xx that cannot be read, a lost answer, a 5xx: may have landed; read back before
 *    anything else, sent again (after the guard) only when the read says it did not land.
 *  - 429, 503, a connection refused before it was sent: not processed; the guard runs again, then the send.
 *    A guard that then finds the write's effect after a 429 or 503 reads back: a service may process a
 *    write and answer 503 or 429 all the same, so what it finds is confirmed, never "already".
 *  - A refusal (409, any 4xx, a 2xx with errors) of a write no earlier send of which may have landed:
 *    refused (`firstRefusal` says what a 409 means); after one that may have: read back. A 412 (the
 *    If-Match no longer holds; not processed) sends the write back to its guard, which reads again.
 *  - Any failure after a send that may have landed (a token refresh, the time limit, a spent budget)
 *    is read back when possible, and stays "unknown" when not: never "refused". */
export function runWrite<T, R>(core: ApiCore, w: Write<T, R>): Promise<WriteOutcome<T>> {
  return new WriteAttempt(core, w).run();
}

/** One write under way: where its sends stand, and whether one of them may have landed. */
class WriteAttempt<T, R> {
  private readonly p = freshProgress();
  private readonly maxSends: number;
  /** Some send of this write may have landed (its outcome was unknown at some point). */
  private mayHaveLanded = false;
  /** The error of the last send that may have landed and that no read-back has settled yet. */
  private unsettled: ApiError | undefined;
  /** The answer of the last send of this write that reached the service: one whose outcome was unknown,
   *  or a 429 or 503, which says "not processed" but may have been processed all the same. After it, a
   *  guard that finds the write's effect is not "already": the effect may be this write's own. */
  private reached: ApiError | undefined;
  /** The answer of the last send of this write that went out (any but a connection refused before it
   *  was sent): after it, no verdict says "nothing was sent". */
  private sent: ApiError | undefined;
  /** The status of the last definite refusal of a send of this write that means "not made" (a 409, a 412,
   *  a 2xx with an error array), before any send of it may have landed: a guard that then finds the
   *  write's effect says it answered revsync's send (someone else's came first). A 401 is not one: the
   *  token was refused, which says nothing of anyone else's write. */
  private refusedAs: number | undefined;

  constructor(
    private readonly core: ApiCore,
    private readonly w: Write<T, R>,
  ) {
    this.maxSends = w.maxSends ?? core.writeSends;
  }

  /** Guard, send, and decide from the answer, until the write has an outcome. */
  async run(): Promise<WriteOutcome<T>> {
    for (;;) {
      if (this.unsettled) {
        const s = await this.settle(this.unsettled);
        if (s) return s;
        this.unsettled = undefined;
      }
      const g = await this.guard();
      if ("kind" in g) return g;
      if ("blocked" in g) return { kind: "blocked", reason: this.afterSends(g.blocked) };
      if ("already" in g) return this.already(g);
      const spec = this.w.request(g.go);
      // A body is whole before it goes: a field the spec requires that revsync could not fill blocks it.
      const hole = bodyProblem(spec);
      if (hole)
        return { kind: "blocked", reason: this.afterSends(`blocked: the request body is not what the interface requires (${hole}); ${NOTHING_SENT_FOR_IT}`) };
      const astray = pathProblem(spec);
      if (astray)
        return {
          kind: "blocked",
          reason: this.afterSends(`blocked: the request would not reach the one resource it names (${astray}); ${NOTHING_SENT_FOR_IT}`),
        };
      let v: Verdict;
      try {
        v = await this.core.sendOnce(spec, this.p);
      } catch (e) {
        // Not sent (the time limit), or its token could not be had after a 401 (not processed).
        if (!(e instanceof ApiError)) throw e;
        return this.stop(e);
      }
      if (v.outcome === "ok") return this.ok(spec, v.body);
      const outcome = await this.answered(v);
      if (outcome) return outcome;
      try {
        await this.core.again(spec, v, this.p, this.maxSends);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        return this.stop(e);
      }
    }
  }

  /** The guard's verdict, or the outcome of a guard whose read failed. The run's own check of the write
   *  (ApiCore.gated: a promotion's source) goes first: what it blocks is not read or sent. */
  private async guard(): Promise<GuardVerdict<R> | WriteOutcome<T>> {
    try {
      const gate = await this.core.writeGate?.();
      if (gate !== undefined) return { blocked: gate };
      return await this.w.guard();
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return this.mayHaveLanded ? this.stop(e) : { kind: "refused", error: guardFailed(e, this.sent) };
    }
  }

  /** A guard's blocked words, true of this write: "nothing was sent for it" only while no send of it went
   *  out; after one did (a 412 sent it back to the guard, a 429 or 503 turned it away, a read-back found
   *  it had not landed), what the service answered it. */
  private afterSends(words: string): string {
    const sent = this.sent;
    return sent ? words.replace(NOTHING_SENT_FOR_IT, notSentSince(sent)) : words;
  }

  /** The guard finds what the write asks for in the service. Before any send went out: already, nothing
   *  was sent. After a send the service refused as not made (a 412): already, someone else's, made
   *  first, and said so (`answered`); after one it turned away unprocessed (a 401): already, someone
   *  else's, and said so (`unprocessed`). After one that reached it and may have been processed (a 503
   *  or a 429 answered to a write the service processed all the same, an answer lost): that send's
   *  effect, read back and confirmed, never "already"; when reading back does not show it, the outcome
   *  is unknown. */
  private async already(g: { already: string; status?: string }): Promise<WriteOutcome<T>> {
    const reached = this.reached;
    if (!reached)
      return {
        kind: "already",
        why: g.already,
        ...(g.status ? { status: g.status } : {}),
        ...(this.refusedAs !== undefined ? { answered: this.refusedAs } : this.sent ? { unprocessed: this.sent.status } : {}),
      };
    const s = await this.settle(reached);
    if (s) return s;
    const message = `${readBackReason(reached)} to a send of this write, and the service holds what it asked for (${g.already}), but reading it back does not show the write's effect: run revsync plan to see`;
    return {
      kind: "unknown",
      error: new ApiError({ method: reached.method, path: reached.path, status: reached.status, message: `outcome unknown: ${message}`, outcomeUnknown: true }),
    };
  }

  /** What an answer means for the write: an outcome, or undefined to guard and send again. */
  private async answered(v: Exclude<Verdict, { outcome: "ok" }>): Promise<WriteOutcome<T> | undefined> {
    // A connection refused before the request went out is the one answer to a send that was not sent.
    if (!(v.outcome === "busy" && v.err.status === 0)) this.sent = v.err;
    if (v.outcome === "refused") {
      if (this.mayHaveLanded) {
        // The refusal may be the service meeting an earlier send's effect (a stale If-Match, a status
        // already moved on): only reading back tells.
        const s = await this.settle(v.err);
        return s ?? { kind: "refused", error: v.err };
      }
      this.refusedAs = v.err.status;
      if (v.err.status !== 412) {
        const meant = this.w.firstRefusal ? await this.w.firstRefusal(v.err) : undefined;
        return meant ?? { kind: "refused", error: v.err };
      }
      // 412: the version the guard read moved before the send arrived, and nothing was processed. The
      // guard reads again and decides (someone else's change blocks it, with who and when).
    }
    if (v.outcome === "unknown") {
      this.mayHaveLanded = true;
      this.unsettled = v.err;
      this.reached = v.err;
    }
    // A 429 or 503 reached the service, which may have processed it all the same (a token refused, a
    // connection refused before the send, did not).
    if (v.outcome === "busy" && BUSY_STATUS.has(v.err.status)) this.reached = v.err;
    return undefined;
  }

  /** A 2xx: done, with its result; one without what the caller needs is read back. */
  private async ok(spec: RequestSpec, body: unknown): Promise<WriteOutcome<T>> {
    const r = this.w.result(body);
    if (r !== undefined) return this.checked({ kind: "done", result: r });
    const found = await this.w.readBack().catch((readErr: unknown) => ({ failed: readErr }) as const);
    if ("landed" in found && found.landed) return this.checked({ kind: "done", result: found.result });
    const accepted = new ApiError({
      method: spec.method,
      path: spec.path,
      status: 200,
      message: "the service accepted the write but does not show it",
      outcomeUnknown: true,
    });
    return { kind: "unknown", error: "failed" in found ? ApiError.readBackFailed(accepted, found.failed) : accepted };
  }

  /** A landed write, checked against what the service holds right after it (Write.check). */
  private async checked(o: Extract<WriteOutcome<T>, { kind: "done" | "confirmed" }>): Promise<WriteOutcome<T>> {
    if (!this.w.check) return o;
    try {
      const undone = await this.w.check(o.result);
      if (undone === undefined) return o;
      // What the read after the write cannot tell (whether someone else wrote meanwhile) is said, not guessed.
      if (typeof undone === "object") return { ...o, unchecked: undone.unchecked };
      return { kind: "overwritten", reason: undone, result: o.result };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return { ...o, unchecked: `not read again after the write: ${e.message}` };
    }
  }

  /** Reads back after a send that may have landed: an outcome, or undefined when it did not land. */
  private async settle(err: ApiError): Promise<WriteOutcome<T> | undefined> {
    let found: ReadBack<T>;
    try {
      found = await this.w.readBack();
    } catch (readErr) {
      return { kind: "unknown", error: ApiError.readBackFailed(err, readErr) };
    }
    const why = readBackReason(err);
    if ("other" in found) {
      return {
        kind: "refused",
        error: new ApiError({ method: err.method, path: err.path, status: err.status, message: `${why}; read back: ${found.other}`, conflict: true }),
      };
    }
    if (found.landed) return this.checked({ kind: "confirmed", why, result: found.result, ...(found.status ? { status: found.status } : {}) });
    this.p.mayHaveLanded = false;
    return undefined;
  }

  /** The write cannot be sent (again): settled by reading back when a send may have landed. */
  private async stop(e: ApiError): Promise<WriteOutcome<T>> {
    if (!this.mayHaveLanded) return { kind: "refused", error: e };
    const s = await this.settle(this.unsettled ?? (e.outcomeUnknown ? e : e.withOutcomeUnknown()));
    // Read back, it did not land: nothing more is sent, so the write failed.
    return (
      s ?? {
        kind: "refused",
        error: new ApiError({
          method: e.method,
          path: e.path,
          status: e.status,
          message: `${e.serviceMessage}; read back: it did not land`,
          problems: e.problems,
        }),
      }
    );
  }
}

/** Whether a write's outcome means the service holds what it asked for (an overwritten one does not). */
export const landed = <T>(o: WriteOutcome<T>): o is Extract<WriteOutcome<T>, { kind: "done" | "already" | "confirmed" }> =>
  o.kind === "done" || o.kind === "already" || o.kind === "confirmed";
