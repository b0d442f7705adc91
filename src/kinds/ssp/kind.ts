/** The SSP policy with its batches: one kind of the registry. Its policy files (kind: SspPolicy) hold a
 *  policy's fields and the desired status (and values) of its batches; the interface creates a policy
 *  (with the batches that go up with it) and moves a batch forward (review, approve), and can neither
 *  update nor delete a policy. Addresses: ssp/<policy>, ssp/<policy>/batch/<batch>. */
import type { ApiCore } from "../../api/core.js";
import { ssp } from "../../api/resources.js";
import { sameJson } from "../../canonical-json.js";
import type { SspEnvelope } from "../../schema/generated/api.js";
import { batchNameOf } from "../../shared/address.js";
import { normalizeSspFields, valueAt } from "../../shared/normalize.js";
import { batchWho, envelopeWho } from "../../shared/who.js";
import type { AppliedChange, Kind, LiveFinding } from "../kind.js";
import { SspApply } from "./apply.js";
import { keptSspFields, unmanagedSsp } from "./compare.js";
import { sspDrift } from "./drift.js";
import { exportSsp } from "./export.js";
import { sspHeldTwice } from "./held-twice.js";
import { sspEntry, sspRules, type DesiredSsp } from "./files.js";
import { planPreparers } from "./four-eyes.js";
import { sspGitProblems } from "./git-check.js";
import { batchPayload, createPayload, SSP_PAYLOADS, sspPayloadProblems } from "./payload.js";
import { sspPlan } from "./plan.js";
import { readSsp, sspAddress, type SspLive } from "./read.js";
import { sspPromotion } from "./promotion.js";
import { valuesChecksum } from "./values.js";
import { SSP_FACT_FIELDS, SSP_FACTS, sspConcerns, sspFacts } from "./facts.js";
import { liveWithGitsUnknowns, modelsFromGit, modelsFromGitOnly, modelsFromLive } from "./tests.js";

/** A change an evidence record applied, against the policy the service holds now: a batch's status, or a
 *  created policy's fields, compared as plan compares them. */
function evidenceCheck(core: ApiCore): (c: AppliedChange) => Promise<Omit<LiveFinding, "later">> {
  const policies = new Map<string, Promise<SspEnvelope | undefined>>();
  const policy = (name: string): Promise<SspEnvelope | undefined> => {
    let p = policies.get(name);
    if (!p) policies.set(name, (p = ssp.get(core, name)));
    return p;
  };
  return async (c) => {
    const base = { address: c.address, action: c.action, differs: [] as LiveFinding["differs"], modified_by: null, modified_on: null };
    const rest = c.address.slice(sspAddress.policy("").length);
    const cut = rest.lastIndexOf("/batch/");
    const env = await policy(cut < 0 ? rest : rest.slice(0, cut));
    if (!env) return { ...base, holds: false, note: "it is no longer in the service" };
    const who = envelopeWho(env);
    const item = env.compliance_spec?.[0];
    if (cut >= 0) {
      const batch = item?.batches?.find((b) => batchNameOf(b) === rest.slice(cut + "/batch/".length));
      if (!batch) return { ...base, ...who, holds: false, note: "the batch is no longer in the service" };
      const byBatch = batchWho(batch);
      const differs = c.diff
        .filter((d) => !sameJson(valueAt(batch, d.path), d.after))
        .map((d) => ({ path: d.path, applied: d.after, now: valueAt(batch, d.path) }));
      return {
        ...base,
        modified_by: byBatch.modified_by ?? who.modified_by,
        modified_on: byBatch.modified_on ?? who.modified_on,
        holds: !differs.length,
        differs,
      };
    }
    const fields = c.diff.map((d) => d.path.split(".")[0] as string).filter((k) => k !== "batches");
    const now = normalizeSspFields(item ?? {}, fields);
    const applied = normalizeSspFields(Object.fromEntries(c.diff.map((d) => [d.path.split(".")[0], d.after])), fields);
    const differs = Object.keys(applied)
      .filter((k) => !sameJson(now[k], applied[k]))
      .map((k) => ({ path: k, applied: applied[k], now: now[k] }));
    return { ...base, ...who, holds: !differs.length, differs };
  };
}

export const sspPolicy: Kind<DesiredSsp, SspLive> = {
  name: "ssp",
  fileKind: "SspPolicy",
  schema: "policy/ssp-policy.schema.json",
  // A batch may be of some environments only (environments:).
  scopedLists: ["batches"],
  rules: sspRules,
  entry: sspEntry,
  addressesIn: (entries) => entries.flatMap((d) => [sspAddress.policy(d.name), ...d.batches.map((b) => sspAddress.batch(d.name, b.name))]),
  address: sspAddress.policy,
  addressForms: ["ssp/<policy name>", "ssp/<policy name>/batch/<batch name>"],

  read: readSsp,
  addressesLive: (live) =>
    [...live.ssp].flatMap(([name, lp]) => [sspAddress.policy(name), ...(lp.batches ?? []).map((b) => sspAddress.batch(name, batchNameOf(b)))]),
  // A policy selected only through some of its batches keeps its live fields and takes git's word for
  // those batches; a policy the service does not hold is kept only when its own address is selected.
  targeted: (desired, live, on) =>
    desired.flatMap((d) => {
      if (on(sspAddress.policy(d.name))) return [d];
      const batches = d.batches.filter((b) => on(sspAddress.batch(d.name, b.name)));
      if (!batches.length || !live.ssp.has(d.name)) return [];
      return [{ ...d, spec: {} as DesiredSsp["spec"], batches }];
    }),

  plan: sspPlan,
  // Creates in hierarchy_no order.
  rank: (c) => createPayload(c)?.hierarchy_no ?? 0,
  drift: (desired, live, findings) => sspDrift(desired, live, findings.targets, findings.unknown),
  unmanaged: (desired, live, targets) => unmanagedSsp(desired, live.ssp, targets),
  heldTwice: sspHeldTwice,
  kept: (desired, live, targets) => keptSspFields(desired, live.ssp, targets),
  preparers: planPreparers,

  payloads: SSP_PAYLOADS,
  payloadProblems: sspPayloadProblems,
  gitProblems: (c, desired) => sspGitProblems(c, desired),
  // A batch's review after its policy exists (a policy this run creates: after every create of the run);
  // approve after review; the batch steps of one policy one after another: each moves the policy's
  // version, which the next one's If-Match names (sent at once, they would turn each other away with 412).
  order(changes) {
    const index = (action: string): Map<string, number> => new Map(changes.flatMap((c, i) => (c.action === action ? [[c.address, i] as const] : [])));
    const createOf = index("create");
    const reviewOf = index("review");
    const creates = [...createOf.values()];
    const lastOfPolicy = new Map<string, number>();
    return changes.map((c, i) => {
      const o = { needs: [] as number[], after: [] as number[] };
      const p = batchPayload(c);
      if (!p) return o;
      const policy = sspAddress.policy(p.policy);
      const prev = lastOfPolicy.get(policy);
      if (prev !== undefined) o.after.push(prev);
      lastOfPolicy.set(policy, i);
      const create = createOf.get(policy);
      if (create !== undefined) {
        o.needs.push(create);
        o.after.push(...creates.filter((id) => id !== create));
      }
      const review = c.action === "approve" ? reviewOf.get(c.address) : undefined;
      if (review !== undefined) o.needs.push(review);
      return o;
    });
  },
  apply: (run) => new SspApply(run),

  export(live, ctx) {
    return exportSsp(live, ctx, this.schema);
  },
  compared: (field, value) => normalizeSspFields({ [field]: value }, [field])[field],
  sameValues: (a, b) => {
    try {
      return valuesChecksum({ csv: a }) === valuesChecksum({ csv: b });
    } catch {
      return false;
    }
  },
  evidence: evidenceCheck,
  promotion: sspPromotion,

  guardrails: { facts: SSP_FACTS, fields: SSP_FACT_FIELDS, of: sspFacts, concerns: sspConcerns },

  tests: {
    live: (live) => ({ policies: modelsFromLive(live) }),
    git: (desired, live) => {
      if (live) return { policies: modelsFromGit(desired, live) };
      const { models, skipped } = modelsFromGitOnly(desired);
      return { policies: models, skipped };
    },
    known: liveWithGitsUnknowns,
  },
};
