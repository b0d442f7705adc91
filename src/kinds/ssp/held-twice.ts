/** SSP names the service holds more than once: a policy name in the list, and a batch name within one
 *  policy (the spec promises neither unique). The interface reviews and approves a batch by its name
 *  alone, and reads a policy's details by its name: such a name addresses nothing (src/plan/held-twice.ts). */
import type { SspItem } from "../../schema/generated/api.js";
import { batchNameOf } from "../../shared/address.js";
import { batchWho, envelopeWho, whoWords } from "../../shared/who.js";
import type { HeldTwice } from "../kind.js";
import { sspAddress, type LivePolicy, type SspLive } from "./read.js";

const show = (v: unknown): string => JSON.stringify(v ?? null);

/** One copy of a policy, in words: its id and what decides which order lines it prices. */
function policyCopy(lp: LivePolicy): string {
  const i = lp.item;
  const active = i.active === false ? "inactive" : "active";
  return `compliance_id ${show(lp.envelope.compliance_id)}, ${active}, hierarchy_no ${show(i.hierarchy_no)}, method ${show(i.method)}${i.expression ? `, expression ${show(i.expression)}` : ""}${whoWords(envelopeWho(lp.envelope), "last modified")}`;
}

/** One copy of a batch, in words: its file, status and dates, who changed it last. */
function batchCopy(b: SspItem): string {
  return `file_id ${show(b.file_id)}, status ${show(b.status)}, ${show(b.effective_start_date)} to ${show(b.effective_end_date)}${whoWords(batchWho(b), "last changed")}`;
}

/** The batches of one policy that share a name, by name (only names held more than once). */
export function batchesHeldTwice(batches: readonly SspItem[]): Map<string, SspItem[]> {
  const byName = new Map<string, SspItem[]>();
  for (const b of batches) byName.set(batchNameOf(b), [...(byName.get(batchNameOf(b)) ?? []), b]);
  return new Map([...byName].filter(([, copies]) => copies.length > 1));
}

/** Every SSP name the service holds more than once: policies, and batches of one policy. */
export function sspHeldTwice(live: SspLive): HeldTwice[] {
  const out: HeldTwice[] = [];
  for (const [name, copies] of live.copies ?? []) out.push({ address: sspAddress.policy(name), what: "SSP policies", copies: copies.map(policyCopy) });
  for (const [name, lp] of live.ssp) {
    if (live.copies?.has(name)) continue;
    for (const [batch, copies] of batchesHeldTwice(lp.batches ?? []))
      out.push({ address: sspAddress.batch(name, batch), what: `batches of ${JSON.stringify(name)}`, copies: copies.map(batchCopy) });
  }
  return out;
}
