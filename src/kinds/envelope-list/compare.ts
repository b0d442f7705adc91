/** An envelope list, git against the service: the plan's update (or why there is none), drift, what the
 *  service holds that git does not, and a saved plan's update held to its diff and to git. */
import { sameJson } from "../../canonical-json.js";
import { numberOrNull } from "../../number.js";
import { describeAjvErrors, validatorOf } from "../../schema/ajv.js";
import { segmentProblem } from "../../api/core.js";
import { targeted } from "../../shared/address.js";
import { keptFields, type Change, type DriftItem, type KeptLive } from "../../shared/entries.js";
import { fieldDiff, pick } from "../../shared/normalize.js";
import { addUnknown, notShown, type Unknown } from "../../shared/unknown.js";
import { envelopeWho, whoWords } from "../../shared/who.js";
import { changedItems, missingItem, shownEntry } from "../entries.js";
import type { HeldTwice, Unmanaged } from "../kind.js";
import { notGits, NOT_IN_GIT_NOW, show } from "../words.js";
import { addressOf, bodyFields, heldAs, type DesiredEnvelope, type Envelope, type EnvelopeList } from "./list.js";
import { shownUpdate, updatePayload } from "./write.js";

/** The words of what the plan cannot write, and why. */
export const reasons = (l: Pick<EnvelopeList, "what" | "specRef">) =>
  ({
    missing: `no ${l.what} of this name exists in the service, and the interface cannot create one`,
    holes: (holes: string[], file: string) =>
      `the update body${l.specRef ? ` (${l.specRef})` : ""} would not be whole: ${holes.join("; ")}; the service's answer leaves ${holes.length === 1 ? "it" : "them"} out (or null) and git does not set ${holes.length === 1 ? "it" : "them"}, so revsync cannot fill the body from git or a fresh read and sends no update (a service that took a partial body could reset a field, unseen): set ${holes.length === 1 ? "it" : "them"} in ${file}`,
    sentUnseen: (fields: string[]) =>
      `the update also sends ${fields.join(", ")} as git sets ${fields.length === 1 ? "it" : "them"}: the service shows no value (null) to compare, and the update body requires every field`,
    noGuid: (given: unknown) =>
      `the update body${l.specRef ? ` (${l.specRef})` : ""} would not be whole: unique_key is required, and the service's answer gives the ${l.what}'s GUID as ${given === undefined ? "nothing (left out)" : JSON.stringify(given)}; only the service can give it, so revsync sends no update (never an empty one)`,
    unaddressed: (id: unknown, problem: string) =>
      `its compliance_id ${JSON.stringify(id ?? null)}, which the update's path${l.specRef ? ` (${l.specRef})` : ""} names it by, does not address it (${problem}), so revsync sends no update`,
    notInGit: `the service holds this ${l.what} and git has no file for it (the interface cannot create or delete one): add its file to manage it`,
  }) as const;

/** The fields git sets that the service does not show (null, or left out): not compared (the one rule of
 *  src/shared/unknown.ts), and git's value is what an update sends for them. */
const unshown = (spec: Record<string, unknown>, item: Record<string, unknown>): string[] => notShown(spec, item).map((u) => u.field);

/** The fields of an update item the body cannot carry as they are ("ui_mode is required"): a field the
 *  spec requires that neither git nor the service's answer fills (docs/decisions.md, "A body is whole"). */
export function updateHoles(l: Pick<EnvelopeList, "schemas">, item: Record<string, unknown>): string[] {
  const fn = validatorOf(l.schemas.item);
  return fn(item) ? [] : describeAjvErrors(fn.errors).map((e) => `${e.field} ${e.message}`);
}

/** The plan's entry for one envelope of git: its update, or why there is none (the service has no
 *  envelope of that name, or the update body would have a hole), or nothing when the service holds git's
 *  values. A field git sets that the service does not show is not compared: said in a note when nothing
 *  else changes, and, when an update goes, sent with git's value and said in its note. */
export function envelopeChange(l: EnvelopeList, d: DesiredEnvelope, live: readonly Envelope[], unknown?: Unknown): Change | undefined {
  const addr = addressOf(l, d.name);
  const { env, item } = heldAs(live, d.name);
  const source = `${d.source.file}:${d.source.line}`;
  const words = reasons(l);
  if (!env || !item) return shownEntry("unsupported", addr, words.missing, { after: d.spec, source });
  const keys = Object.keys(d.spec);
  const before = pick(item, keys);
  const notCompared = unshown(d.spec, item);
  const compared = keys.filter((k) => !notCompared.includes(k));
  const diff = fieldDiff(pick(item, compared), pick(d.spec, compared));
  if (!diff.length) {
    addUnknown(
      unknown,
      addr,
      notCompared.map((field) => ({ field })),
    );
    return undefined;
  }
  // The fields git leaves alone are the live values the plan read: apply re-reads them right before the
  // PATCH and sends nothing when one of them changed since (README, Reliability).
  const merged = { ...pick(item, bodyFields(l)), ...d.spec, ...pick(item, l.keys) };
  const version = { version_id: env.version_id ?? null, last_modified_on: numberOrNull(env.last_modified_on), ...envelopeWho(env), source };
  const astray = segmentProblem(env.compliance_id ?? "");
  if (astray) return shownEntry("blocked", addr, words.unaddressed(env.compliance_id, astray), { before, after: d.spec, diff, ...version });
  // The body's unique_key is the envelope's GUID, which only the service's answer can give (never "").
  const guid = typeof env.unique_key === "string" && env.unique_key.trim() ? env.unique_key : undefined;
  if (!guid) return shownEntry("blocked", addr, words.noGuid(env.unique_key), { before, after: d.spec, diff, ...version });
  const holes = updateHoles(l, merged);
  if (holes.length) return shownEntry("blocked", addr, words.holes(holes, d.source.file), { before, after: d.spec, diff, ...version });
  return {
    address: addr,
    action: "update",
    before,
    after: d.spec,
    diff,
    ...version,
    ...(notCompared.length ? { reason: words.sentUnseen(notCompared.map((k) => `${k} ${JSON.stringify(d.spec[k])}`)) } : {}),
    payload: { kind: "update", compliance_id: env.compliance_id ?? "", compliance_name: d.name, unique_key: guid, item: merged },
  };
}

/** Drift of one envelope of git: missing from the service, or the fields that differ (a field the service
 *  does not show is not compared, and said in a note). */
export function envelopeDrift(l: EnvelopeList, d: DesiredEnvelope, live: readonly Envelope[], unknown?: Unknown): DriftItem[] {
  const addr = addressOf(l, d.name);
  const { env, item } = heldAs(live, d.name);
  if (!env || !item) return [missingItem(addr)];
  const notCompared = unshown(d.spec, item);
  addUnknown(
    unknown,
    addr,
    notCompared.map((field) => ({ field })),
  );
  const compared = Object.keys(d.spec).filter((k) => !notCompared.includes(k));
  const diff = fieldDiff(pick(d.spec, compared), pick(item, compared)).map((x) => ({ ...x, kind: "changed" as const }));
  return changedItems(addr, diff, envelopeWho(env));
}

/** The envelopes the service holds under one name more than once, each copy named by its id and who
 *  changed it last: none of them is git's, and none is written (src/plan/held-twice.ts). */
export function envelopesHeldTwice(l: EnvelopeList, live: readonly Envelope[]): HeldTwice[] {
  const byName = new Map<string, Envelope[]>();
  for (const e of live) byName.set(e.compliance_name ?? "", [...(byName.get(e.compliance_name ?? "") ?? []), e]);
  return [...byName]
    .filter(([, copies]) => copies.length > 1)
    .map(([name, copies]) => ({
      address: addressOf(l, name),
      what: l.whats,
      copies: copies.map(
        (e) =>
          `compliance_id ${JSON.stringify(e.compliance_id ?? null)}, version_id ${JSON.stringify(e.version_id ?? null)}${whoWords(envelopeWho(e), "last modified")}`,
      ),
    }));
}

/** Of git's envelopes, the fields their files leave out that the service holds a value of: each keeps its
 *  live value, and plan and drift show it. */
export function keptEnvelopeFields(l: EnvelopeList, desired: readonly DesiredEnvelope[], live: readonly Envelope[], targets: string[]): KeptLive[] {
  const out: KeptLive[] = [];
  for (const d of desired) {
    const addr = addressOf(l, d.name);
    const { env, item } = heldAs(live, d.name);
    if (!targeted(addr, targets) || !env || !item) continue;
    const fields = keptFields(d.spec, item, l.fields);
    if (Object.keys(fields).length) out.push({ address: addr, fields, ...envelopeWho(env) });
  }
  return out;
}

/** Envelopes the service holds and git does not: they count when git manages the kind at all. */
export function unmanagedEnvelopes(l: EnvelopeList, desired: readonly DesiredEnvelope[], live: readonly Envelope[], targets: string[]): Unmanaged[] {
  if (!desired.length) return [];
  return live
    .filter((env) => targeted(addressOf(l, env.compliance_name ?? ""), targets) && !desired.some((d) => d.name === (env.compliance_name ?? "")))
    .map((env) => ({
      address: addressOf(l, env.compliance_name ?? ""),
      class: "unmanaged" as const,
      reason: reasons(l).notInGit,
      before: {},
      version_id: env.version_id ?? null,
      last_modified_on: numberOrNull(env.last_modified_on),
      ...envelopeWho(env),
    }));
}

/** What is sent is what was shown: an update's payload names its envelope, carries the reviewed diff's
 *  values, and no field the update does not have. */
export function updateProblems(l: EnvelopeList, c: Change): string[] {
  const p = updatePayload(c);
  if (c.action !== "update") return [`a ${l.what} has no ${c.action}`];
  if (!p) return [`a ${c.payload?.kind} payload`];
  const out: string[] = [];
  if (c.address !== addressOf(l, p.compliance_name)) out.push(`the payload names ${JSON.stringify(p.compliance_name)}`);
  const after = (c.after ?? {}) as Record<string, unknown>;
  for (const d of c.diff) if (!(d.path in after) || !sameJson(after[d.path], d.after)) out.push(`the diff of ${d.path} is not git's value`);
  const item = p.item;
  const fields = bodyFields(l);
  for (const [k, v] of Object.entries(shownUpdate(c))) {
    if (!fields.includes(k)) out.push(`${k} is not a field of the update`);
    else if (!sameJson(item[k], v)) out.push(`the payload's ${k} ${show(item[k])} is not the reviewed ${show(v)}`);
  }
  for (const k of Object.keys(item)) if (!fields.includes(k)) out.push(`the payload's ${k} is not a field of the update`);
  return out;
}

/** A saved plan's update against git's file now: every field git sets is sent (and shown) with git's
 *  value, and every field the update changes is one git sets. */
export function updateAgainstGit(l: EnvelopeList, c: Change, desired: readonly DesiredEnvelope[]): string[] {
  const d = desired.find((x) => addressOf(l, x.name) === c.address);
  if (!d) return [NOT_IN_GIT_NOW];
  const item = updatePayload(c)?.item ?? {};
  const after = (c.after ?? {}) as Record<string, unknown>;
  const spec = d.spec;
  const out: string[] = [];
  for (const [k, v] of Object.entries(spec)) {
    if (!sameJson(item[k], v)) out.push(notGits(k, item[k], v));
    else if (k in after && !sameJson(after[k], v)) out.push(`${k}: the plan shows ${show(after[k])}, git asks for ${show(v)}`);
  }
  for (const x of c.diff) if (!(x.path in spec)) out.push(`${x.path}: the plan writes ${show(x.after)}, git no longer sets it`);
  return out;
}
