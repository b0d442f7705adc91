/** The create of an SSP policy, whole: the guard that reads the SSP list before every send, the POST, the
 *  read-back by exact name, and what a first 409 means, given to the write unit (src/api/write.ts). */
import type { ApiCore } from "../../api/core.js";
import { ssp } from "../../api/resources.js";
import { runWrite, type GuardOf, type WriteOutcome } from "../../api/write.js";
import { ApiError } from "../../errors.js";
import type { SspCreateBody, SspEnvelope, SspUpdateResult } from "../../schema/generated/api.js";
import type { Change } from "../../shared/entries.js";
import { envelopeWho, isoOf, whoWords } from "../../shared/who.js";
import { blocked } from "../words.js";
import { createMismatch } from "./compare.js";
import type { CreatePayload } from "./payload.js";
import { hierarchyHolder, type SspRun } from "./state.js";

/** The guard of a create: the policy must not exist (unless it is git's policy already, values and all)
 *  and no active policy may hold its place in the hierarchy. */
export function createGuard(run: SspRun, c: Change, p: CreatePayload, core: ApiCore): GuardOf<null> {
  return async () => {
    const name = p.body.compliance_name;
    const list = await run.list(core);
    const holder = hierarchyHolder(list, name, p.hierarchy_no);
    const clash = (h: SspEnvelope): string =>
      `hierarchy_no ${p.hierarchy_no} is held now by the active policy ${JSON.stringify(h.compliance_name)}${whoWords(envelopeWho(h))}; two policies in one place of the hierarchy make it undefined which one prices an order line`;
    // The list carries no batches: what is compared with git's is the policy's own read, batches and all
    // (a retry of a create that landed finds it so, and goes on as "already").
    const existing = list.some((e) => e.compliance_name === name) ? await ssp.get(core, name) : undefined;
    if (existing) {
      const sent = p.body.compliance_spec[0];
      const differs = [...(sent ? createMismatch(sent, existing.compliance_spec?.[0]) : []), ...(await run.createValues(p, existing, core))];
      if (differs.length)
        return blocked(
          `${c.address} exists in the service now${whoWords(envelopeWho(existing))}, and differs from git's (${differs.join(", ")}); the plan was to create it`,
        );
      // git's policy, but not alone in its place of the hierarchy: never "already applied".
      if (holder) return blocked(`${c.address} is in the service as git has it, but ${clash(holder)}`);
      return { already: "the service holds git's policy and values" };
    }
    if (holder) return blocked(clash(holder));
    run.run.log(`${c.address}: read again just now, not in the service; sending the create`);
    return { go: null };
  };
}

/** An SSP create, through the write unit. After a send that may have landed, the policy is read back by
 *  exact name: landed only when it equals what was sent on every field the create sets and `verify` (the
 *  values of its batches) finds nothing amiss; another policy of that name is someone else's. A 409 to a
 *  send no earlier send of which may have landed is a conflict: someone else's policy, never "created". */
export function createWrite(
  core: ApiCore,
  body: SspCreateBody,
  guard: GuardOf<null> = async () => ({ go: null }),
  verify: (live: SspEnvelope) => Promise<string[]> = async () => [],
): Promise<WriteOutcome<SspUpdateResult>> {
  const name = body.compliance_name;
  const sent = body.compliance_spec[0];
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
      const differs = [...(sent ? createMismatch(sent, live.compliance_spec?.[0]) : []), ...(await verify(live))];
      if (!differs.length) return { landed: true, result: found(live) };
      return {
        other: `an SSP policy named ${JSON.stringify(name)} exists in the service${whoWords(envelopeWho(live), "created")} but differs from the one revsync sent (${differs.join(", ")}): it is not ours to count as created`,
      };
    },
    firstRefusal: async (err) => {
      if (err.status !== 409) return undefined;
      const live = await ssp.get(core, name).catch(() => undefined);
      const who = live
        ? whoWords({ modified_by: live.created_by ?? live.last_modified_by ?? null, modified_on: isoOf(live.created_on ?? live.last_modified_on) }, "created")
        : "";
      const message = `ssp/${name} exists in the service now${who}: someone else's policy, not created by this run; its batches are left alone`;
      return { kind: "refused", error: new ApiError({ method: err.method, path: err.path, status: 409, message, conflict: true }) };
    },
  });
}

/** One step: the create of `c`, guarded before every send; a create that landed is the run's own. */
export async function writeCreate(run: SspRun, c: Change, p: CreatePayload, core: ApiCore): Promise<WriteOutcome<SspUpdateResult>> {
  const o = await createWrite(core, p.body, createGuard(run, c, p, core), (live) => run.createValues(p, live, core));
  if (o.kind === "done" || o.kind === "confirmed") run.created(c, o.result.compliance_id);
  return o;
}
