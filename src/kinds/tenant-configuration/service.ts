/** The service's interface for tenant configurations: the list, and the PATCH of one. */
import type { ApiCore, RequestSpec } from "../../api/core.js";
import type { TenantConfigurationList, TenantConfigurationUpdateBody } from "../../schema/generated/api.js";

const TC = "/apis/policy-sets/v1/policy/tenant-configurations";

export const tenantConfigurations = {
  list: (core: ApiCore): Promise<TenantConfigurationList> =>
    core.call({ method: "GET", path: TC, kind: "read", schema: "TenantConfigurationList", listed: "tenant configuration" }),
  /** The PATCH of one tenant configuration: sent by the write unit (src/api/write.ts), which guards,
   *  sends and settles it. */
  updateRequest: (id: string, body: TenantConfigurationUpdateBody, ifMatch?: string): RequestSpec => ({
    method: "PATCH",
    path: `${TC}/${encodeURIComponent(id)}`,
    body,
    bodySchema: "TenantConfigurationUpdateBody",
    kind: "write",
    schema: "UpdateResult",
    ...(ifMatch ? { ifMatch } : {}),
    emptyOk: true,
  }),
};
