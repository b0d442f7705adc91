import type { HolderState, LockBackend, LockHolder } from "../../lock/lock.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** An environment's lock as lock status reads it: where it is kept, who holds it, if anyone, and whether
 *  the holder's process still runs, where this machine can tell (`state`). */
export interface LockStatus {
  environment: string;
  backend: Pick<LockBackend, "kind" | "where">;
  holder: LockHolder | undefined;
  state?: HolderState;
  /** Whether lock status runs on a terminal: without one, the unlock command it names carries --force
   *  (there, unlock asks nobody and refuses without it). */
  interactive?: boolean;
}

export type LockStatusView = (status: LockStatus, out: Sink) => void;

/** The words advice needs, loaded with the view. */
interface LockWords {
  unlockCommand: (env: string, id: string, force?: boolean) => string;
  deadlineOf: (h: LockHolder) => number;
  formatDuration: (ms: number) => string;
}

/** What to do about a holder, by whether its process runs. */
function advice(
  { environment, backend, holder, state, interactive }: LockStatus & { holder: LockHolder },
  { unlockCommand, deadlineOf, formatDuration }: LockWords,
): string {
  const unlock = unlockCommand(environment, holder.id, !interactive);
  // unlock refuses a running holder's lock but with --force: the command it names says so.
  if (state === "alive")
    return `Its process (pid ${holder.pid}) is running on this host: that apply is alive; wait for it (apply --lock-timeout). Only --force releases it, and that apply then writes beside the next one: ${unlockCommand(environment, holder.id, true)}`;
  if (state === "gone")
    return backend.kind === "local"
      ? `Its process (pid ${holder.pid}) is gone: the next apply takes the lock over, after waiting ${formatDuration(deadlineOf(holder))} (its request deadline) for any write it sent to land (or release it now: ${unlock}).`
      : `Its process (pid ${holder.pid}) is no longer running on this host: release it: ${unlock}`;
  return `If that apply is dead, release it: ${unlock}`;
}

/** revsync lock status. */
export const lockStatusViews: Views<LockStatusView> = {
  text: async () => {
    const { deadlineOf, holderWords, unlockCommand } = await import("../../lock/lock.js");
    const { formatDuration } = await import("../../duration.js");
    return (status, out) => {
      const { environment, backend, holder } = status;
      if (holder?.released)
        return out.out(
          `Environment ${JSON.stringify(environment)} is not locked (${backend.where}): its last lock, ${holder.released.lock}, was ${holder.released.why}; a write sent under it may still land, so the next apply waits ${formatDuration(deadlineOf(holder))} before it writes.`,
        );
      out.out(
        holder
          ? `Environment ${JSON.stringify(environment)} is locked (${backend.where}):\n  held by ${holderWords(holder, Date.now(), environment)}\n  ${advice({ ...status, holder }, { unlockCommand, deadlineOf, formatDuration })}`
          : `Environment ${JSON.stringify(environment)} is not locked (${backend.where}).`,
      );
    };
  },
  json:
    async () =>
    ({ environment, backend, holder, state }, out) =>
      out.json({
        environment,
        backend: backend.kind,
        where: backend.where,
        locked: !!holder && !holder.released,
        holder: holder && !holder.released ? holder : null,
        ...(holder && !holder.released ? { holder_process: state ?? "unknown" } : {}),
        // A lock released while a write sent under it may still land: the next apply waits this long.
        ...(holder?.released ? { released: { ...holder.released, next_apply_waits_ms: holder.request_deadline_ms ?? null } } : {}),
      }),
};
