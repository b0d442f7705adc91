/** The tenant configurations (spec 4.1, 4.2): an envelope list, the list and the PATCH of one. */
import { envelopeListResource, type ServedEnvelopeList } from "./envelope-list.js";

export const TENANT_CONFIGURATIONS: ServedEnvelopeList = {
  path: "/apis/policy-sets/v1/policy/tenant-configurations",
  bodySchema: "TenantConfigurationUpdateBody",
  what: "tenant configuration",
  keys: ["guid"],
};

export const tenantConfigurations = envelopeListResource(TENANT_CONFIGURATIONS, (t) => t.tenantConfigurations);
