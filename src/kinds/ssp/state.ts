/** What the SSP writes of one apply run share: the SSP list read right before creates (shared by the
 *  creates whose guards start together), the checksums of uploaded files' values and the check of the
 *  values a step is bound to, what this run created, reviewed and checked. */
import type { ApiCore } from "../../api/core.js";
import { ssp } from "./service.js";
import type { SspEnvelope, SspItem, SspList } from "../../schema/generated/api.js";
import type { Change } from "../../shared/entries.js";
import { batchNameOf } from "../../shared/address.js";
import type { ApplyRun } from "../kind.js";
import { createMismatch } from "./compare.js";
import { batchPayload, createPayload } from "./payload.js";
import { fileIdOf, ownValues } from "./read.js";
import { valuesChecksum } from "./values.js";

/** What the service holds otherwise than a step is bound to, found in a live policy: the fields a create
 *  sets that differ, and each batch whose values are not the ones bound (`why`: "missing", or
 *  heldOtherwise's words). Empty lists when it holds them all. */
export interface Unbound {
  fields: string[];
  batches: { batch: string; why: string }[];
}

/** The check of what a step is bound to, against the live policy a guard (or a create's read-back) read,
 *  with the reads it needs going through `core` (the step's view of the client). */
export type BoundCheck = (live: SspEnvelope, core: ApiCore) => Promise<Unbound>;

export class SspRun {
  private listing: Promise<SspList> | undefined;
  /** The checksums of uploaded files' values, by file id: an upload's file does not change (a new upload
   *  is a new file). */
  readonly fileSums = new Map<string, Promise<string>>();
  /** Policies whose version this run checked against the plan (its own writes move it after). */
  readonly policyChecked = new Set<string>();
  /** Batches (their addresses) this run reviewed: their reviewer is this run's sign-in. */
  readonly reviewedHere = new Set<string>();
  /** The ids of the policies this run created, by name. */
  readonly createdIds = new Map<string, string>();
  /** The creates of this run that landed (done, or confirmed by reading back), for the one check after
   *  the last of them, and what that check found (src/kinds/ssp/create.ts, checkCreations). */
  readonly landedCreates: Change[] = [];
  creationsChecked: Promise<Map<string, string> | { failed: string }> | undefined;

  constructor(readonly run: ApplyRun) {}

  /** The SSP list, read right before a create's send: creates whose guards start while a read is in
   *  flight share it (one round trip old at most); a failed shared read makes each of them read for
   *  itself, so a read failing fails only the writes whose own read fails. */
  async list(core: ApiCore): Promise<SspList> {
    const shared = this.listing;
    if (shared) {
      try {
        return await shared;
      } catch {
        return ssp.list(core);
      }
    }
    const mine = ssp.list(core);
    this.listing = mine;
    const done = (): void => {
      if (this.listing === mine) this.listing = undefined;
    };
    mine.then(done, done);
    return mine;
  }

  /** The checksum of an uploaded file's values, read once: an upload's file does not change (a new upload
   *  is a new file). */
  fileSum(fileId: string, core: ApiCore): Promise<string> {
    let sum = this.fileSums.get(fileId);
    if (!sum) {
      sum = ssp.download(core, fileId).then((b) => valuesChecksum({ csv: b.toString("utf8") }));
      this.fileSums.set(fileId, sum);
      sum.catch(() => this.fileSums.delete(fileId));
    }
    return sum;
  }

  /** Whether a live batch holds the values of checksum `sum`, as far as the service shows them: its
   *  uploaded file (read once) and its own values (ssp_values, what pricing uses; read each time, as they
   *  may change without a new file). Undefined when every one shown holds them; what differs, in words,
   *  when not (docs/decisions.md, "Values nobody reviewed are never approved"). */
  async heldOtherwise(policy: string, lb: SspItem, sum: string, core: ApiCore): Promise<string | undefined> {
    const fileId = fileIdOf(lb);
    const [file, own] = await Promise.all([
      fileId ? this.fileSum(fileId, core) : undefined,
      ownValues(core, policy, batchNameOf(lb)).then((v) => v && valuesChecksum(v)),
    ]);
    if (file === undefined && own === undefined) return "the service shows neither an uploaded file of it nor its own values (ssp_values)";
    if (file !== undefined && file !== sum) return "its uploaded file does not hold the values git holds";
    if (own === undefined || own === sum) return undefined;
    return file === undefined
      ? "its own values (ssp_values, what pricing uses) are not the values git holds"
      : "its own values (ssp_values, what pricing uses) are not the values git holds, though its uploaded file is: the service holds two sets of values for it";
  }
}

/** What a step is bound to, as a check of a live policy: a review or approve to its batch's values, a
 *  create to the fields it sets and the values of each batch it uploads; values by the checksum of git's
 *  values the plan showed (docs/decisions.md, "Values nobody reviewed are never approved"). One check
 *  for the guard of every step and a create's read-back: what the reviewer saw is what the service must
 *  hold. */
export function boundTo(run: SspRun, c: Change): BoundCheck {
  const bound = boundChecksums(c);
  const sent = createPayload(c)?.body.compliance_spec[0];
  return async (live, core) => {
    const batches: Unbound["batches"] = [];
    for (const b of bound) {
      const lb = live.compliance_spec?.[0]?.batches?.find((x) => batchNameOf(x) === b.batch);
      const why = lb ? await run.heldOtherwise(b.policy, lb, b.sum, core) : "missing";
      if (why) batches.push({ batch: b.batch, why });
    }
    return { fields: sent ? createMismatch(sent, live.compliance_spec?.[0]) : [], batches };
  };
}

/** What a step is bound to: the policy, batch and values checksum of a review or approve, or of each batch
 *  a create uploads (the checksums its entry shows, which the payload check held to the values it sends). */
function boundChecksums(c: Change): { policy: string; batch: string; sum: string }[] {
  const batch = batchPayload(c);
  if (batch) return batch.values_checksum ? [{ policy: batch.policy, batch: batch.batch, sum: batch.values_checksum }] : [];
  const policy = createPayload(c)?.body.compliance_name ?? "";
  const shown = (c.after as { batches?: { batch_name: string; values_checksum: string }[] } | null)?.batches ?? [];
  return shown.map((b) => ({ policy, batch: b.batch_name, sum: b.values_checksum }));
}
