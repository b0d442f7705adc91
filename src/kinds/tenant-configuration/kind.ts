/** The tenant configuration: one kind of the registry, an envelope list (src/kinds/envelope-list/). Its
 *  policy files (kind: TenantConfiguration) set fields of a configuration the service holds; the
 *  interface lists and updates (PATCH, spec 4.1, 4.2) them, and can neither create nor delete one. */
import type { TenantConfigurationEnvelope } from "../../schema/generated/api.js";
import { envelopeListKind } from "../envelope-list/kind.js";
import type { DesiredEnvelope, EnvelopeList } from "../envelope-list/list.js";
import { envelopeService } from "../envelope-list/service.js";
import type { Kind } from "../kind.js";
import { ownWords, tenantFieldsUpdatable, UPDATABLE_TENANT_FIELDS } from "./files.js";

/** What makes it an envelope list: its names, its files' schema, its service's path and answers (its
 *  folder's api.schema.json), the fields a file sets, and the item's guid, sent as the service holds it
 *  (docs/decisions.md, "The tenant configuration update"). */
export const TENANT_CONFIGURATIONS: EnvelopeList = {
  name: "tenant-configuration",
  fileKind: "TenantConfiguration",
  schema: "policy/tenant-configuration.schema.json",
  what: "tenant configuration",
  whats: "tenant configurations",
  specRef: "spec 4.2",
  path: "/apis/policy-sets/v1/policy/tenant-configurations",
  schemas: { list: "TenantConfigurationList", body: "TenantConfigurationUpdateBody", item: "TenantConfigurationUpdateItem", result: "UpdateResult" },
  fields: UPDATABLE_TENANT_FIELDS,
  keys: ["guid"],
};

/** Its service's interface: the list, and the PATCH of one. */
export const tenantConfigurations = envelopeService<TenantConfigurationEnvelope>(TENANT_CONFIGURATIONS);

export const tenantConfiguration: Kind<DesiredEnvelope, TenantConfigurationEnvelope[]> = {
  ...envelopeListKind<TenantConfigurationEnvelope>(TENANT_CONFIGURATIONS),
  ownWords,
  rules: (docs, ctx) => tenantFieldsUpdatable(docs, ctx),

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
