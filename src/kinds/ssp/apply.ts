/** The SSP writes of one apply run: each step's create, review or approve, and the one check after the
 *  run's creates. */
import type { ApiCore } from "../../api/core.js";
import { UserError } from "../../errors.js";
import type { Change } from "../../shared/entries.js";
import type { KindApply, WriteResult } from "../kind.js";
import { writeBatch } from "./batch.js";
import { checkCreations, writeCreate } from "./create.js";
import { batchPayload, createPayload } from "./payload.js";
import { boundTo, SspRun } from "./state.js";

export class SspApply extends SspRun implements KindApply {
  /** One step: a create, or a batch's review or approve. */
  async write(c: Change, core: ApiCore): Promise<WriteResult> {
    const bound = boundTo(this, c);
    const create = createPayload(c);
    if (create) return { outcome: await writeCreate(this, c, create, core, bound) };
    const batch = batchPayload(c);
    if (batch) return writeBatch(this, c, batch, core, bound);
    throw new UserError(`${c.address}: the plan carries no payload for ${c.action}`);
  }

  /** The one check after the run's creates (done already when a batch step of a created policy asked):
   *  a create that shares its place in the hierarchy now was undone, not done. */
  async settle(landed: readonly Change[]): Promise<Map<string, { overwritten: string } | { unchecked: string }>> {
    const checked = await checkCreations(this);
    const out = new Map<string, { overwritten: string } | { unchecked: string }>();
    for (const c of landed) {
      if (c.action !== "create") continue;
      if ("failed" in checked) out.set(c.address, { unchecked: `not read again after the run's creates: ${checked.failed}` });
      else {
        const clash = checked.get(c.address);
        if (clash) out.set(c.address, { overwritten: clash });
      }
    }
    return out;
  }
}
