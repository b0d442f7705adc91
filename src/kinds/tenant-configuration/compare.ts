/** A tenant configuration, git against the service: the plan's update (or why there is none), drift,
 *  what the service holds that git does not, and the check of an update's payload against its diff. */
import { sameJson } from "../../canonical-json.js";
import { numberOrNull } from "../../number.js";
import type { TenantConfigurationList, TenantConfigurationUpdateItem } from "../../schema/generated/api.js";
import { keptFields, type Change, type DriftItem, type KeptLive } from "../../shared/entries.js";
import { fieldDiff, pick } from "../../shared/normalize.js";
import { targeted } from "../../shared/address.js";
import { envelopeWho } from "../../shared/who.js";
import { changedItems, missingItem, shownEntry } from "../entries.js";
import type { Unmanaged } from "../kind.js";
import { notGits, NOT_IN_GIT_NOW, show } from "../words.js";
import { UPDATABLE_TENANT_FIELDS, type DesiredTenantConfig } from "./files.js";
import { shownUpdate, UPDATE_FIELDS, updatePayload } from "./write.js";

/** Addresses of tenant configurations: tenant-configuration/<name>. */
export const tenantAddress = (name: string): string => `tenant-configuration/${name}`;

export const REASONS = {
  noTenant: "no tenant configuration of this name exists in the service, and the interface cannot create one",
  notInGit: "the service holds this tenant configuration and git has no file for it (the interface cannot create or delete one): add its file to manage it",
} as const;

/** The plan's entry for one tenant configuration of git: its update, or why there is none (the service
 *  has no configuration of that name), or nothing when the service holds git's values. */
export function tenantChange(d: DesiredTenantConfig, live: TenantConfigurationList): Change | undefined {
  const addr = tenantAddress(d.name);
  const env = live.find((e) => e.compliance_name === d.name);
  const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
  if (!env || !item) {
    return shownEntry("unsupported", addr, REASONS.noTenant, { after: d.spec, source: `${d.source.file}:${d.source.line}` });
  }
  const keys = Object.keys(d.spec);
  const before = pick(item, keys);
  const diff = fieldDiff(before, d.spec);
  if (!diff.length) return undefined;
  // The 13 fields git leaves alone are the live values the plan read: apply re-reads them right before
  // the PATCH and sends nothing when one of them changed since (README, Reliability).
  const merged = { ...pick(item, UPDATE_FIELDS), ...d.spec, guid: item.guid } as TenantConfigurationUpdateItem;
  return {
    address: addr,
    action: "update",
    before,
    after: d.spec,
    diff,
    version_id: env.version_id ?? null,
    last_modified_on: numberOrNull(env.last_modified_on),
    ...envelopeWho(env),
    source: `${d.source.file}:${d.source.line}`,
    payload: { kind: "update", compliance_id: env.compliance_id ?? "", compliance_name: d.name, unique_key: env.unique_key ?? "", item: merged },
  };
}

/** Drift of one tenant configuration of git: missing from the service, or the fields that differ. */
export function tenantDrift(d: DesiredTenantConfig, live: TenantConfigurationList): DriftItem[] {
  const addr = tenantAddress(d.name);
  const env = live.find((e) => e.compliance_name === d.name);
  const item = env?.compliance_spec?.[0] as Record<string, unknown> | undefined;
  if (!env || !item) return [missingItem(addr)];
  const diff = fieldDiff(d.spec, pick(item, Object.keys(d.spec))).map((x) => ({ ...x, kind: "changed" as const }));
  return changedItems(addr, diff, envelopeWho(env));
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
