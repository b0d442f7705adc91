/** The create of an SSP policy, whole: the guard that reads the SSP list before every send, the POST, the
 *  read-back by exact name, and what a first 409 means, given to the write unit (src/api/write.ts); and
 *  the one check after the run's creates that no other policy took a created one's place. */
import type { ApiCore } from "../../api/core.js";
import { ssp } from "../../api/resources.js";
import { runWrite, type GuardOf, type WriteOutcome } from "../../api/write.js";
import { ApiError } from "../../errors.js";
import type { SspCreateBody, SspEnvelope, SspList, SspUpdateResult } from "../../schema/generated/api.js";
import type { Change } from "../../shared/entries.js";
import { envelopeWho, isoOf, whoWords, type Who } from "../../shared/who.js";
import { blocked, overwrittenWords } from "../words.js";
import { createdItem, createPayload, type CreatePayload } from "./payload.js";
import type { BoundCheck, SspRun } from "./state.js";

/** What differs between a live policy and a create, in words: the fields it sets (compared as plan
 *  compares them) and the values of the batches it uploads ("batch B1 (values)"). */
export type Differs = (live: SspEnvelope) => Promise<string[]>;

/** Another active policy that holds `hierarchyNo`, of a name other than `name`. */
export function hierarchyHolder(list: SspList, name: string, hierarchyNo: number): SspEnvelope | undefined {
  return list.find((e) => {
    const item = e.compliance_spec?.[0];
    return e.compliance_name !== name && item?.hierarchy_no === hierarchyNo && item.active !== false;
  });
}

/** Whether a create makes an active policy (one whose `active` is not false). */
const createsActive = (p: CreatePayload): boolean => createdItem(p).active !== false;

/** Who made a policy, and when, as the service says (its creator, else who changed it last). */
const madeBy = (env: SspEnvelope): Who => ({
  modified_by: env.created_by ?? env.last_modified_by ?? null,
  modified_on: isoOf(env.created_on ?? env.last_modified_on),
});

/** The guard of a create: the policy must not exist (unless it is git's policy already, values and all)
 *  and no active policy may hold its place in the hierarchy. */
export function createGuard(run: SspRun, c: Change, p: CreatePayload, core: ApiCore, differs: Differs): GuardOf<null> {
  return async () => {
    const name = p.body.compliance_name;
    const list = await run.list(core);
    // A name held twice since the plan addresses nothing: neither copy is "already" git's.
    const named = list.filter((e) => e.compliance_name === name).length;
    if (named > 1) return blocked(`the service holds ${named} SSP policies named ${JSON.stringify(name)} now, not none as the plan saw`);
    // An inactive policy prices nothing: it shares a place with no one (as validate and plan hold it).
    const holder = createsActive(p) ? hierarchyHolder(list, name, p.hierarchy_no) : undefined;
    // The list carries no batches: what is compared with git's is the policy's own read, batches and all
    // (a retry of a create that landed finds it so, and goes on as "already").
    const existing = list.some((e) => e.compliance_name === name) ? await ssp.get(core, name) : undefined;
    const held = existing && (await differs(existing));
    const clash =
      holder &&
      `hierarchy_no ${p.hierarchy_no} is held now by the active policy ${JSON.stringify(holder.compliance_name)}${whoWords(envelopeWho(holder))}; two policies in one place of the hierarchy make it undefined which one prices an order line`;
    if (existing && held?.length)
      return blocked(
        `${c.address} exists in the service now${whoWords(envelopeWho(existing))}, and differs from git's (${held.join(", ")}); the plan was to create it`,
      );
    // git's policy, but not alone in its place of the hierarchy: never "already applied".
    if (existing && clash) return blocked(`${c.address} is in the service as git has it, but ${clash}`);
    if (existing) return { already: "the service holds git's policy and values" };
    if (clash) return blocked(clash);
    run.run.log(`${c.address}: read again just now, not in the service; sending the create`);
    return { go: null };
  };
}

/** An SSP create, through the write unit. After a send that may have landed, the policy is read back by
 *  exact name: landed only when `differs` (its fields against what was sent, the values of its batches)
 *  finds nothing; another policy of that name is someone else's. A 409 to a send no earlier send of which
 *  may have landed is a conflict: someone else's policy, never "created". */
export function createWrite(core: ApiCore, body: SspCreateBody, guard: GuardOf<null>, differs: Differs): Promise<WriteOutcome<SspUpdateResult>> {
  const name = body.compliance_name;
  const found = (live: SspEnvelope): SspUpdateResult => ({ compliance_id: live.compliance_id ?? "", compliance_details: [], error: [] });
  return runWrite<SspUpdateResult, null>(core, {
    guard,
    request: () => ssp.createRequest(body),
    result: (b) => {
      const r = b as SspUpdateResult | undefined;
      return r?.compliance_id ? r : undefined;
    },
    readBack: async () => {
      const live = await ssp.get(core, name);
      if (!live) return { landed: false };
      const differ = await differs(live);
      if (!differ.length) return { landed: true, result: found(live) };
      return {
        other: `an SSP policy named ${JSON.stringify(name)} exists in the service${whoWords(envelopeWho(live), "created")} but differs from the one revsync sent (${differ.join(", ")}): it is not ours to count as created`,
      };
    },
    firstRefusal: async (err) => {
      if (err.status !== 409) return undefined;
      const live = await ssp.get(core, name).catch(() => undefined);
      const message = `ssp/${name} exists in the service now${live ? whoWords(madeBy(live), "created") : ""}: someone else's policy, not created by this run; its batches are left alone`;
      return { kind: "refused", error: new ApiError({ method: err.method, path: err.path, status: 409, message, conflict: true }) };
    },
  });
}

/** One step: the create of `c`, guarded before every send; a create that landed is the run's own.
 *  `bound`: the run's check of what the create is bound to (its fields, the values of the batches it
 *  uploads). */
export async function writeCreate(run: SspRun, c: Change, p: CreatePayload, core: ApiCore, bound: BoundCheck): Promise<WriteOutcome<SspUpdateResult>> {
  const differs: Differs = async (live) => {
    const { fields, batches } = await bound(live, core);
    return [...fields, ...batches.map((b) => `batch ${b.batch} (${b.why === "missing" ? "missing" : "values"})`)];
  };
  const o = await createWrite(core, p.body, createGuard(run, c, p, core, differs), differs);
  if (o.kind === "done" || o.kind === "confirmed") {
    run.createdIds.set(p.body.compliance_name, o.result.compliance_id);
    run.landedCreates.push(c);
  }
  return o;
}

/** Once every create of the run has ended: one read of the SSP list, sent after the last of them
 *  landed, finds each created policy that another active policy shares its hierarchy_no with now
 *  (someone else's create since the guard's read). Of two creates at one place made at once, at least
 *  one run's read sees the other's. Its words by the create's address; `failed` when the read failed. */
export function checkCreations(run: SspRun, core: ApiCore = run.run.core): Promise<Map<string, string> | { failed: string }> {
  if (!run.creationsChecked) {
    const creates = [...run.landedCreates];
    run.creationsChecked = creates.length
      ? ssp.list(core).then(
          (list) => clashes(list, creates, run.createdIds),
          (e: unknown) => ({ failed: e instanceof Error ? e.message : String(e) }),
        )
      : Promise.resolve(new Map());
  }
  return run.creationsChecked;
}

/** Each created policy another policy of its name came with (the spec promises no 409 on a duplicate
 *  name: someone else's create between the guard's read and revsync's send lands too), or another active
 *  policy shares its place in the hierarchy with, in words. */
function clashes(list: SspList, creates: readonly Change[], created: ReadonlyMap<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of creates) {
    const p = createPayload(c);
    if (!p) continue;
    const name = p.body.compliance_name;
    const copies = list.filter((e) => e.compliance_name === name);
    const twin = copies.length > 1 ? (copies.find((e) => e.compliance_id !== created.get(name)) ?? copies[1]) : undefined;
    if (twin) {
      out.set(
        c.address,
        overwrittenWords(madeBy(twin), [
          `the service holds ${copies.length} SSP policies named ${JSON.stringify(name)} now (another, compliance_id ${JSON.stringify(twin.compliance_id ?? null)}, came with revsync's create), and a name held twice addresses nothing: which one prices an order line is undefined`,
        ]),
      );
      continue;
    }
    if (!createsActive(p)) continue;
    const holder = hierarchyHolder(list, p.body.compliance_name, p.hierarchy_no);
    if (!holder) continue;
    out.set(
      c.address,
      overwrittenWords(madeBy(holder), [
        `the active policy ${JSON.stringify(holder.compliance_name)} holds hierarchy_no ${p.hierarchy_no} too, so which one prices an order line is undefined`,
      ]),
    );
  }
  return out;
}
