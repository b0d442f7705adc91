/** What the SSP writes of one apply run share: the SSP list read right before creates (shared by the
 *  creates whose guards start together), the checksums of uploaded files' values, what this run created,
 *  reviewed and checked, and the one read after the run's creates. */
import type { ApiCore } from "../../api/core.js";
import { ssp } from "../../api/resources.js";
import type { SspEnvelope, SspItem, SspList } from "../../schema/generated/api.js";
import type { Change } from "../../shared/entries.js";
import { batchNameOf } from "../../shared/address.js";
import { isoOf } from "../../shared/who.js";
import type { ApplyRun } from "../kind.js";
import { overwrittenWords } from "../words.js";
import { createdItem, createPayload, type CreatePayload } from "./payload.js";
import { fileIdOf, ownValues } from "./read.js";
import { valuesChecksum } from "./values.js";

/** Another active policy that holds `hierarchyNo`, of a name other than `name`. */
export function hierarchyHolder(list: SspList, name: string, hierarchyNo: number): SspEnvelope | undefined {
  return list.find((e) => {
    const item = e.compliance_spec?.[0];
    return e.compliance_name !== name && item?.hierarchy_no === hierarchyNo && item.active !== false;
  });
}

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
  /** The creates of this run that landed, for the one check after the last of them. */
  private readonly landedCreates: Change[] = [];
  private creationsChecked: Promise<Map<string, string> | { failed: string }> | undefined;

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

  /** Differences between a live policy's batches and the values git sends with a create. */
  async createValues(p: CreatePayload, live: SspEnvelope, core: ApiCore): Promise<string[]> {
    const out: string[] = [];
    for (const b of createdItem(p).batches ?? []) {
      const lb = live.compliance_spec?.[0]?.batches?.find((x) => batchNameOf(x) === b.batch_name);
      if (!lb) out.push(`batch ${b.batch_name} (missing)`);
      else if (await this.heldOtherwise(p.body.compliance_name, lb, valuesChecksum(b.ssp_values), core)) out.push(`batch ${b.batch_name} (values)`);
    }
    return out;
  }

  /** A create landed (done, or confirmed by reading back), with the id the service gave it. */
  created(c: Change, id: string): void {
    const p = createPayload(c);
    if (p) this.createdIds.set(p.body.compliance_name, id);
    this.landedCreates.push(c);
  }

  /** Once every create of the run has ended: one read of the SSP list, sent after the last of them
   *  landed, finds each created policy that another active policy shares its hierarchy_no with now
   *  (someone else's create since the guard's read). Of two creates at one place made at once, at least
   *  one run's read sees the other's. Its words by the create's address; `failed` when the read failed. */
  checkCreations(core: ApiCore = this.run.core): Promise<Map<string, string> | { failed: string }> {
    if (!this.creationsChecked) {
      const creates = [...this.landedCreates];
      this.creationsChecked = creates.length
        ? ssp.list(core).then(
            (list) => clashes(list, creates),
            (e: unknown) => ({ failed: e instanceof Error ? e.message : String(e) }),
          )
        : Promise.resolve(new Map());
    }
    return this.creationsChecked;
  }
}

/** Each created policy another active policy shares its place in the hierarchy with, in words. */
function clashes(list: SspList, creates: readonly Change[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of creates) {
    const p = createPayload(c);
    if (!p) continue;
    const holder = hierarchyHolder(list, p.body.compliance_name, p.hierarchy_no);
    if (!holder) continue;
    const who = { modified_by: holder.created_by ?? holder.last_modified_by ?? null, modified_on: isoOf(holder.created_on ?? holder.last_modified_on) };
    out.set(
      c.address,
      overwrittenWords(who, [
        `the active policy ${JSON.stringify(holder.compliance_name)} holds hierarchy_no ${p.hierarchy_no} too, so which one prices an order line is undefined`,
      ]),
    );
  }
  return out;
}
