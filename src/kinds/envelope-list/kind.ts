/** The kind an envelope list makes (./list.ts): everything of the Kind interface, from its definition
 *  alone. A kind of this shape is `envelopeListKind(definition)`, and whatever it has of its own (rules
 *  beyond its schema, what guardrails and the policy tests read of it) spread over it. */
import type { ApiCore } from "../../api/core.js";
import { sameJson } from "../../canonical-json.js";
import { unsafeName } from "../../config/rules.js";
import { at } from "../../config/schema-diagnostics.js";
import { slug, targeted } from "../../shared/address.js";
import { valueAt } from "../../shared/normalize.js";
import { envelopeWho } from "../../shared/who.js";
import { fitSpec, heldTwiceRefusal, newFile, type ExportedFile } from "../export-file.js";
import type { AppliedChange, ExportContext, Kind, LiveFinding } from "../kind.js";
import { envelopeChange, envelopeDrift, envelopesHeldTwice, keptEnvelopeFields, unmanagedEnvelopes, updateAgainstGit, updateProblems } from "./compare.js";
import { addressOf, type DesiredEnvelope, type Envelope, type EnvelopeList } from "./list.js";
import { envelopePromotion } from "./promotion.js";
import { envelopeService } from "./service.js";
import { EnvelopeApply, requireUser, updatePayloads } from "./write.js";

/** A change an evidence record applied, against the envelope the service holds now (one read for all). */
function evidenceCheck(l: EnvelopeList, core: ApiCore): (c: AppliedChange) => Promise<Omit<LiveFinding, "later">> {
  let list: Promise<Envelope[]> | undefined;
  return async (c) => {
    const base = { address: c.address, action: c.action, differs: [] as LiveFinding["differs"], modified_by: null, modified_on: null };
    const name = c.address.slice(addressOf(l, "").length);
    const env = (await (list ??= envelopeService(l).list(core))).find((e) => e.compliance_name === name);
    if (!env) return { ...base, holds: false, note: "it is no longer in the service" };
    const item = env.compliance_spec?.[0] ?? {};
    const differs = c.diff
      .filter((d) => !sameJson(valueAt(item, d.path), d.after))
      .map((d) => ({ path: d.path, applied: d.after, now: valueAt(item, d.path) }));
    return { ...base, holds: !differs.length, differs, ...envelopeWho(env) };
  };
}

/** The service's envelopes as policy files: one each, its item's fields a file may set (a field the
 *  service shows as null is compared as it is: left out, it keeps its live value). A name held twice
 *  refuses the export; a name no file can carry is left out, said. */
function exportEnvelopes(l: EnvelopeList, live: readonly Envelope[], ctx: ExportContext): ExportedFile[] {
  const twice = new Set(envelopesHeldTwice(l, live).map((h) => h.address));
  return live.flatMap((e) => {
    const name = e.compliance_name ?? "";
    const addr = addressOf(l, name);
    if (!targeted(addr, ctx.targets)) return [];
    if (twice.has(addr)) {
      ctx.refused.push(heldTwiceRefusal(`${l.what} ${JSON.stringify(name)} (compliance_id ${JSON.stringify(e.compliance_id ?? null)})`));
      return [];
    }
    const bad = unsafeName(name);
    if (bad) {
      ctx.unnamed.push(`${l.what} ${JSON.stringify(name)} (its name cannot be used in a policy file: ${bad})`);
      return [];
    }
    const f = newFile(ctx.unique(`${l.folder ? `${l.folder}/` : ""}${slug(name || l.name)}.yaml`), addr, l.schema, l.fileKind, name);
    fitSpec(f, (e.compliance_spec?.[0] ?? {}) as Record<string, unknown>, l.fields, false);
    return [f];
  });
}

/** The kind of an envelope list. */
export function envelopeListKind<E extends Envelope = Envelope>(l: EnvelopeList): Kind<DesiredEnvelope, E[]> {
  const address = (name: string): string => addressOf(l, name);
  return {
    name: l.name,
    fileKind: l.fileKind,
    schema: l.schema,
    entry: (doc) => {
      const v = doc.src.value as { metadata: { name: string }; spec: Record<string, unknown> };
      return { name: v.metadata.name, spec: v.spec, source: { file: doc.src.file, ...at(doc.src, "/metadata/name") } };
    },
    addressesIn: (entries) => entries.map((d) => address(d.name)),
    address,
    addressForms: [address("<name>")],

    read: async (core, _desired, _opts, progress) => {
      const list = await envelopeService<E>(l).list(core);
      progress.done(l.whats);
      return list;
    },
    addressesLive: (live) => live.map((e) => address(e.compliance_name ?? "")),
    targeted: (desired, _live, on) => desired.filter((d) => on(address(d.name))),

    plan: (desired, live, findings) =>
      desired.flatMap((d) => (targeted(address(d.name), findings.targets) ? (envelopeChange(l, d, live, findings.unknown) ?? []) : [])),
    drift: (desired, live, findings) =>
      desired.filter((d) => targeted(address(d.name), findings.targets)).flatMap((d) => envelopeDrift(l, d, live, findings.unknown)),
    unmanaged: (desired, live, targets) => unmanagedEnvelopes(l, desired, live, targets),
    kept: (desired, live, targets) => keptEnvelopeFields(l, desired, live, targets),
    heldTwice: (live) => envelopesHeldTwice(l, live),

    payloads: updatePayloads(l),
    payloadProblems: (c) => updateProblems(l, c),
    gitProblems: (c, desired) => updateAgainstGit(l, c, desired),
    ready: (changes, core) => requireUser(l, changes, core),
    apply: (run) => new EnvelopeApply(l, run),

    export: (live, ctx) => exportEnvelopes(l, live, ctx),
    evidence: (core) => evidenceCheck(l, core),
    promotion: (c, desired, live, here) => envelopePromotion(l, c, desired, live, here),
  };
}
