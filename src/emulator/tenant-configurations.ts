/** The tenant configurations (spec 4.1, 4.2): the list, and the PATCH of one. */
import type { TenantConfigurationUpdateBody } from "../schema/generated/api.js";
import { json, only, type ApiResource } from "./resource.js";
import { bump, checkIfMatch, EmuError, epoch, validate, type Caller } from "./service.js";
import type { TenantState } from "./state.js";

const TC = "/apis/policy-sets/v1/policy/tenant-configurations";

export function listTenantConfigurations(t: TenantState): unknown {
  return t.tenantConfigurations;
}

export function patchTenantConfiguration(t: TenantState, caller: Caller, id: string, raw: unknown, ifMatch: string | undefined, versionStep = 1): unknown {
  const body = validate<TenantConfigurationUpdateBody>("TenantConfigurationUpdateBody", raw);
  const env = t.tenantConfigurations.find((e) => e.compliance_id === id);
  if (!env) throw new EmuError(404, `no tenant configuration with compliance_id ${id}`);
  checkIfMatch(ifMatch, env.version_id ?? "1");
  const live = env.compliance_spec?.[0];
  if (!live) throw new EmuError(409, "tenant configuration has no policy item");
  const problems: { field: string; message: string }[] = [];
  if (body.unique_key !== env.unique_key) problems.push({ field: "unique_key", message: "does not match the policy's unique_key" });
  if (body.compliance_name !== env.compliance_name) problems.push({ field: "compliance_name", message: "does not match the policy's name" });
  if (body.compliance_spec.length !== 1) problems.push({ field: "compliance_spec", message: "must hold exactly one item" });
  const item = body.compliance_spec[0];
  if (item && item.guid !== live.guid) problems.push({ field: "compliance_spec.0.guid", message: "does not match the live guid" });
  if (problems.length) throw new EmuError(400, "invalid request body", problems);
  if (!item) throw new EmuError(400, "invalid request body");
  Object.assign(live, item, { updated_at: epoch(), updated_by: caller.user });
  bump(env as { version_id: string; last_modified_on: number; last_modified_by: string }, caller.user, versionStep);
  return {
    compliance_id: env.compliance_id,
    compliance_details: [{ error: [], message: "Tenant configuration updated", unique_key: env.unique_key }],
    error: [],
  };
}

export const tenantConfigurations: ApiResource = {
  answer(req) {
    if (req.path === TC) {
      only(req, "GET");
      return json(listTenantConfigurations(req.t));
    }
    if (req.path.startsWith(`${TC}/`) && req.seg.length === 7) {
      only(req, "PATCH");
      return json(patchTenantConfiguration(req.t, req.caller, req.seg[6] ?? "", req.body(), req.ifMatch, req.settings.version_step));
    }
    return undefined;
  },
};
