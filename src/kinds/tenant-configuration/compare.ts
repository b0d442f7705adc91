/** A tenant configuration, git against the service: the plan's update (or why there is none), drift,
 *  what the service holds that git does not, and the check of an update's payload against its diff. */
import { sameJson } from "../../canonical-json.js";
import { numberOrNull } from "../../number.js";
import type { TenantConfigurationList, TenantConfigurationUpdateItem } from "../../schema/generated/api.js";
import { keptFields, type Change, type DriftItem, type KeptLive } from "../../shared/entries.js";
import { fieldDiff, pick } from "../../shared/normalize.js";
import { addUnknown, notShown, type Unknown } from "../../shared/unknown.js";
import { apiValidator, describeAjvErrors } from "../../schema/ajv.js";
import { segmentProblem } from "../../api/core.js";
import { targeted } from "../../shared/address.js";
import { envelopeWho, whoWords } from "../../shared/who.js";
import { changedItems, missingItem, shownEntry } from "../entries.js";
import type { HeldTwice, Unmanaged } from "../kind.js";
import { notGits, NOT_IN_GIT_NOW, show } from "../words.js";
import { UPDATABLE_TENANT_FIELDS, type DesiredTenantConfig } from "./files.js";
import { shownUpdate, UPDATE_FIELDS, updatePayload } from "./write.js";

/** Addresses of tenant configurations: tenant-configuration/<name>. */
export const tenantAddress = (name: string): string => `tenant-configuration/${name}`;

export const REASONS = {
  noTenant: "no tenant configuration of this name exists in the service, and the interface cannot create one",
  holes: (holes: string[], file: string) =>
    `the update body (spec 4.2) would not be whole: ${holes.join("; ")}; the service's answer leaves ${holes.length === 1 ? "it" : "them"} out (or null) and git does not set ${holes.length === 1 ? "it" : "them"}, so revsync cannot fill the body from git or a fresh read and sends no update (a service that took a partial body could reset a field, unseen): set ${holes.length === 1 ? "it" : "them"} in ${file}`,
  sentUnseen: (fields: string[]) =>
    `the update also sends ${fields.join(", ")} as git sets ${fields.length === 1 ? "it" : "them"}: the service shows no value (null) to compare, and the update body requires every field`,
  noGuid: (given: unknown) =>
    `the update body (spec 4.2) would not be whole: unique_key is required, and the service's answer gives the tenant configuration's GUID as ${given === undefined ? "nothing (left out)" : JSON.stringify(given)}; only the service can give it, so revsync sends no update (never an empty one)`,
  unaddressed: (id: unknown, problem: string) =>
    `its compliance_id ${JSON.stringify(id ?? null)}, which the update's path (spec 4.2) names it by, does not address it (${problem}), so revsync sends no update`,
  notInGit: "the service holds this tenant configuration and git has no file for it (the interface cannot create or delete one): add its file to manage it",
} as const;

/** The fields git sets that the service does not show (null, or left out): not compared (the one rule of
 *  src/shared/unknown.ts), and git's value is what an update sends for them. */
const unshown = (spec: Record<string, unknown>, item: Record<string, unknown>): string[] => notShown(spec, item).map((u) => u.field);

/** The fields of an update item the body cannot carry as they are ("ui_mode is required"): a field the
 *  spec requires that neither git nor the service's answer fills (docs/decisions.md, "A body is whole"). */
export function updateHoles(item: Record<string, unknown>): string[] {
  const fn = apiValidator("TenantConfigurationUpdateItem");
  return fn(item) ? [] : describeAjvErrors(fn.errors).map((e) => `${e.field} ${e.message}`);
}

/** The plan's entry for one tenant configuration of git: its update, or why there is none (the service
 *  has no configuration of that name, or the update body would have a hole), or nothing when the service
 *  holds git's values. A field git sets that the service does not show is not compared: said in a note
 *  when nothing else changes, and, when an update goes, sent with git's value and said in its note. */
export function tenantChange(d: DesiredTenantConfig, live: TenantConfigurationList, unknown?: Unknown): Change | undefined {
  const addr = tenantAddress(d.name);
  const env = live.find((e) => e.compliance_name === d.name);
  const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
  const source = `${d.source.file}:${d.source.line}`;
  if (!env || !item) return shownEntry("unsupported", addr, REASONS.noTenant, { after: d.spec, source });
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
  // The 13 fields git leaves alone are the live values the plan read: apply re-reads them right before
  // the PATCH and sends nothing when one of them changed since (README, Reliability).
  const merged = { ...pick(item, UPDATE_FIELDS), ...d.spec, guid: item.guid } as TenantConfigurationUpdateItem;
  const version = { version_id: env.version_id ?? null, last_modified_on: numberOrNull(env.last_modified_on), ...envelopeWho(env), source };
  const astray = segmentProblem(env.compliance_id ?? "");
  if (astray) return shownEntry("blocked", addr, REASONS.unaddressed(env.compliance_id, astray), { before, after: d.spec, diff, ...version });
  // The body's unique_key is the envelope's GUID, which only the service's answer can give (never "").
  const guid = typeof env.unique_key === "string" && env.unique_key.trim() ? env.unique_key : undefined;
  if (!guid) return shownEntry("blocked", addr, REASONS.noGuid(env.unique_key), { before, after: d.spec, diff, ...version });
  const holes = updateHoles(merged as unknown as Record<string, unknown>);
  if (holes.length) return shownEntry("blocked", addr, REASONS.holes(holes, d.source.file), { before, after: d.spec, diff, ...version });
  return {
    address: addr,
    action: "update",
    before,
    after: d.spec,
    diff,
    ...version,
    ...(notCompared.length ? { reason: REASONS.sentUnseen(notCompared.map((k) => `${k} ${JSON.stringify(d.spec[k])}`)) } : {}),
    payload: { kind: "update", compliance_id: env.compliance_id ?? "", compliance_name: d.name, unique_key: guid, item: merged },
  };
}

/** Drift of one tenant configuration of git: missing from the service, or the fields that differ (a field
 *  the service does not show is not compared, and said in a note). */
export function tenantDrift(d: DesiredTenantConfig, live: TenantConfigurationList, unknown?: Unknown): DriftItem[] {
  const addr = tenantAddress(d.name);
  const env = live.find((e) => e.compliance_name === d.name);
  const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
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

/** The tenant configurations the service holds under one name more than once, each copy named by its id
 *  and who changed it last: none of them is git's, and none is written (src/plan/held-twice.ts). */
export function tenantsHeldTwice(live: TenantConfigurationList): HeldTwice[] {
  const byName = new Map<string, TenantConfigurationList>();
  for (const e of live) byName.set(e.compliance_name ?? "", [...(byName.get(e.compliance_name ?? "") ?? []), e]);
  return [...byName]
    .filter(([, copies]) => copies.length > 1)
    .map(([name, copies]) => ({
      address: tenantAddress(name),
      what: "tenant configurations",
      copies: copies.map(
        (e) =>
          `compliance_id ${JSON.stringify(e.compliance_id ?? null)}, version_id ${JSON.stringify(e.version_id ?? null)}${whoWords(envelopeWho(e), "last modified")}`,
      ),
    }));
}

/** Of git's tenant configurations, the updatable fields their files leave out that the service holds a
 *  value of: each keeps its live value, and plan and drift show it. */
export function keptTenantFields(desired: readonly DesiredTenantConfig[], live: TenantConfigurationList, targets: string[]): KeptLive[] {
  const out: KeptLive[] = [];
  for (const d of desired) {
    const addr = tenantAddress(d.name);
    const env = live.find((e) => e.compliance_name === d.name);
    const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
    if (!targeted(addr, targets) || !env || !item) continue;
    const fields = keptFields(d.spec, item, UPDATABLE_TENANT_FIELDS);
    if (Object.keys(fields).length) out.push({ address: addr, fields, ...envelopeWho(env) });
  }
  return out;
}

/** Tenant configurations the service holds and git does not: they count when git manages tenant
 *  configurations at all. */
export function unmanagedTenants(desired: readonly DesiredTenantConfig[], live: TenantConfigurationList, targets: string[]): Unmanaged[] {
  if (!desired.length) return [];
  return live
    .filter((env) => targeted(tenantAddress(env.compliance_name ?? ""), targets) && !desired.some((d) => d.name === (env.compliance_name ?? "")))
    .map((env) => ({
      address: tenantAddress(env.compliance_name ?? ""),
      class: "unmanaged" as const,
      reason: REASONS.notInGit,
      before: {},
      version_id: env.version_id ?? null,
      last_modified_on: numberOrNull(env.last_modified_on),
      ...envelopeWho(env),
    }));
}

/** What is sent is what was shown: an update's payload names its configuration, carries the reviewed
 *  diff's values, and no field the update does not have. */
export function updateProblems(c: Change): string[] {
  const p = updatePayload(c);
  if (c.action !== "update") return [`a tenant configuration has no ${c.action}`];
  if (!p) return [`a ${c.payload?.kind} payload`];
  const out: string[] = [];
  if (c.address !== tenantAddress(p.compliance_name)) out.push(`the payload names ${JSON.stringify(p.compliance_name)}`);
  const after = (c.after ?? {}) as Record<string, unknown>;
  for (const d of c.diff) if (!(d.path in after) || !sameJson(after[d.path], d.after)) out.push(`the diff of ${d.path} is not git's value`);
  const item = p.item as unknown as Record<string, unknown>;
  const fields: readonly string[] = UPDATE_FIELDS;
  for (const [k, v] of Object.entries(shownUpdate(c))) {
    if (!fields.includes(k)) out.push(`${k} is not a field of the update`);
    else if (!sameJson(item[k], v)) out.push(`the payload's ${k} ${show(item[k])} is not the reviewed ${show(v)}`);
  }
  for (const k of Object.keys(item)) if (!fields.includes(k)) out.push(`the payload's ${k} is not a field of the update`);
  return out;
}

/** A saved plan's update against git's file now: every field git sets is sent (and shown) with git's
 *  value, and every field the update changes is one git sets. */
export function updateAgainstGit(c: Change, desired: readonly DesiredTenantConfig[]): string[] {
  const d = desired.find((x) => tenantAddress(x.name) === c.address);
  if (!d) return [NOT_IN_GIT_NOW];
  const item = (updatePayload(c)?.item ?? {}) as unknown as Record<string, unknown>;
  const after = (c.after ?? {}) as Record<string, unknown>;
  const spec = d.spec as Record<string, unknown>;
  const out: string[] = [];
  for (const [k, v] of Object.entries(spec)) {
    if (!sameJson(item[k], v)) out.push(notGits(k, item[k], v));
    else if (k in after && !sameJson(after[k], v)) out.push(`${k}: the plan shows ${show(after[k])}, git asks for ${show(v)}`);
  }
  for (const x of c.diff) if (!(x.path in spec)) out.push(`${x.path}: the plan writes ${show(x.after)}, git no longer sets it`);
  return out;
}
