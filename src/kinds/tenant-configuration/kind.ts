/** The tenant configuration: one kind of the registry. Its policy files (kind: TenantConfiguration) set
 *  fields of a configuration the service holds; the interface lists and updates (PATCH) them, and can
 *  neither create nor delete one. */
import type { ApiCore } from "../../api/core.js";
import { sameJson } from "../../canonical-json.js";
import { unsafeName } from "../../config/rules.js";
import type { TenantConfigurationList } from "../../schema/generated/api.js";
import { slug, targeted } from "../../shared/address.js";
import { valueAt } from "../../shared/normalize.js";
import { envelopeWho } from "../../shared/who.js";
import { fitSpec, newFile } from "../export-file.js";
import type { AppliedChange, Kind, LiveFinding } from "../kind.js";
import {
  keptTenantFields,
  REASONS,
  tenantAddress,
  tenantChange,
  tenantDrift,
  tenantsHeldTwice,
  unmanagedTenants,
  updateAgainstGit,
  updateProblems,
} from "./compare.js";
import { heldTwiceRefusal } from "../export-file.js";
import { ownWords, tenantEntry, tenantFieldsUpdatable, UPDATABLE_TENANT_FIELDS, type DesiredTenantConfig } from "./files.js";
import { tenantConfigurations } from "./service.js";
import { tenantPromotion } from "./promotion.js";
import { requireUser, TenantApply, UPDATE_PAYLOADS } from "./write.js";

export { REASONS };

/** A change an evidence record applied, against the configuration the service holds now. */
function evidenceCheck(core: ApiCore): (c: AppliedChange) => Promise<Omit<LiveFinding, "later">> {
  let list: Promise<TenantConfigurationList> | undefined;
  return async (c) => {
    const base = { address: c.address, action: c.action, differs: [] as LiveFinding["differs"], modified_by: null, modified_on: null };
    const name = c.address.slice(tenantAddress("").length);
    const env = (await (list ??= tenantConfigurations.list(core))).find((e) => e.compliance_name === name);
    if (!env) return { ...base, holds: false, note: "it is no longer in the service" };
    const item = env.compliance_spec?.[0] ?? {};
    const differs = c.diff
      .filter((d) => !sameJson(valueAt(item, d.path), d.after))
      .map((d) => ({ path: d.path, applied: d.after, now: valueAt(item, d.path) }));
    return { ...base, holds: !differs.length, differs, ...envelopeWho(env) };
  };
}

export const tenantConfiguration: Kind<DesiredTenantConfig, TenantConfigurationList> = {
  name: "tenant-configuration",
  fileKind: "TenantConfiguration",
  schema: "policy/tenant-configuration.schema.json",
  ownWords,
  rules: (docs, ctx) => tenantFieldsUpdatable(docs, ctx),
  entry: (doc) => tenantEntry(doc),
  addressesIn: (entries) => entries.map((d) => tenantAddress(d.name)),
  address: tenantAddress,
  addressForms: [tenantAddress("<name>")],

  read: async (core, _desired, _opts, progress) => {
    const list = await tenantConfigurations.list(core);
    progress.done("tenant configurations");
    return list;
  },
  addressesLive: (live) => live.map((e) => tenantAddress(e.compliance_name ?? "")),
  targeted: (desired, _live, on) => desired.filter((d) => on(tenantAddress(d.name))),

  plan: (desired, live, findings) =>
    desired.flatMap((d) => (targeted(tenantAddress(d.name), findings.targets) ? (tenantChange(d, live, findings.unknown) ?? []) : [])),
  drift: (desired, live, findings) =>
    desired.filter((d) => targeted(tenantAddress(d.name), findings.targets)).flatMap((d) => tenantDrift(d, live, findings.unknown)),
  unmanaged: unmanagedTenants,
  kept: keptTenantFields,

  payloads: UPDATE_PAYLOADS,
  payloadProblems: (c) => updateProblems(c),
  gitProblems: (c, desired) => updateAgainstGit(c, desired),
  ready: requireUser,
  apply: (run) => new TenantApply(run),

  heldTwice: tenantsHeldTwice,

  export(live, ctx) {
    const twice = new Set(tenantsHeldTwice(live).map((h) => h.address));
    return live.flatMap((e) => {
      const name = e.compliance_name ?? "";
      const addr = tenantAddress(name);
      if (!targeted(addr, ctx.targets)) return [];
      if (twice.has(addr)) {
        ctx.refused.push(heldTwiceRefusal(`tenant configuration ${JSON.stringify(name)} (compliance_id ${JSON.stringify(e.compliance_id ?? null)})`));
        return [];
      }
      const bad = unsafeName(name);
      if (bad) {
        ctx.unnamed.push(`tenant configuration ${JSON.stringify(name)} (its name cannot be used in a policy file: ${bad})`);
        return [];
      }
      const f = newFile(ctx.unique(`${slug(name || "tenant-configuration")}.yaml`), addr, this.schema, this.fileKind, name);
      // A field the service shows as null is compared as it is: left out, it keeps its live value.
      fitSpec(f, (e.compliance_spec?.[0] ?? {}) as Record<string, unknown>, UPDATABLE_TENANT_FIELDS, false);
      return [f];
    });
  },
  evidence: evidenceCheck,
  promotion: tenantPromotion,

  // No facts beyond every change's (its fields before and after); a setting of the tenant's concerns
  // every contract of the policy tests (carves_allocation reallocates them all).
  guardrails: { facts: [], of: () => ({}), concerns: () => "all" },

  tests: {
    // carves_allocation: the service reallocates unless a configuration says false; as git asks, each
    // of git's configurations over its live self.
    live: (live) => ({ carves: live.every((e) => carves(e.compliance_spec?.[0])) }),
    git(desired, live) {
      const values = new Map<string, boolean>();
      for (const e of live ?? []) values.set(e.compliance_name ?? "", carves(e.compliance_spec?.[0]));
      for (const d of desired) if (d.spec.carves_allocation !== undefined) values.set(d.name, carves(d.spec));
      return { carves: [...values.values()].every(Boolean) };
    },
  },
};

/** carves_allocation of one configuration item (true unless it says false). */
const carves = (item: object | undefined): boolean => (item as { carves_allocation?: unknown } | undefined)?.carves_allocation !== false;
