import type { LockBackend, LockHolder } from "../../lock/lock.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** An environment's lock as lock status reads it: where it is kept, and who holds it, if anyone. */
export interface LockStatus {
  environment: string;
  backend: Pick<LockBackend, "kind" | "where">;
  holder: LockHolder | undefined;
}

export type LockStatusView = (status: LockStatus, out: Sink) => void;

/** revsync lock status. */
export const lockStatusViews: Views<LockStatusView> = {
  text: async () => {
    const { holderWords } = await import("../../lock/lock.js");
    return ({ environment, backend, holder }, out) =>
      out.out(
        holder
          ? `Environment ${JSON.stringify(environment)} is locked (${backend.where}):\n  held by ${holderWords(holder, Date.now())}\n  If that apply is dead, release it: revsync unlock --env ${environment} ${holder.id}`
          : `Environment ${JSON.stringify(environment)} is not locked (${backend.where}).`,
      );
  },
  json:
    async () =>
    ({ environment, backend, holder }, out) =>
      out.json({ environment, backend: backend.kind, where: backend.where, locked: !!holder, holder: holder ?? null }),
};
