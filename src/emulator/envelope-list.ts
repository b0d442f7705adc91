/** An envelope list as the service holds one (the shape of spec 4.1 and 4.2): the list, and the PATCH of
 *  one envelope's whole body, checked against its schema, its If-Match, its names and its item's keys.
 *  The tenant configurations are one (./tenant-configurations.ts); a kind of this shape written outside
 *  the tree serves its own over the envelopes it keeps (`envelopeListBrought`). */
import { validatorOf, describeAjvErrors } from "../schema/ajv.js";
import { json, only, type ApiResource, type EmulatorResource } from "./resource.js";
import { bump, checkIfMatch, EmuError, epoch, type Caller } from "./service.js";
import type { TenantState } from "./state.js";

/** One envelope list's endpoints. */
export interface ServedEnvelopeList {
  /** The list's path; an envelope's PATCH is `<path>/<compliance_id>`. */
  path: string;
  /** The PATCH's body schema: a definition of schemas/api.schema.json, or the schema document. */
  bodySchema: string | object;
  /** What one is called in a refusal ("tenant configuration"). */
  what: string;
  /** The item's fields that must match the live item's (its guid). */
  keys: readonly string[];
}

/** An envelope as stored. */
export interface StoredEnvelope {
  compliance_id?: string;
  compliance_name?: string;
  unique_key?: string;
  version_id?: string;
  last_modified_on?: number;
  last_modified_by?: string;
  compliance_spec?: object[];
}

interface UpdateBody {
  compliance_name: string;
  unique_key: string;
  compliance_spec: Record<string, unknown>[];
}

/** The PATCH of envelope `id` of `list`: the whole item, as the body gives it. */
export function patchEnvelope(
  l: ServedEnvelopeList,
  list: StoredEnvelope[],
  caller: Caller,
  id: string,
  raw: unknown,
  ifMatch: string | undefined,
  versionStep = 1,
): unknown {
  const fn = validatorOf(l.bodySchema);
  if (!fn(raw)) throw new EmuError(400, "invalid request body", describeAjvErrors(fn.errors));
  const body = raw as UpdateBody;
  const env = list.find((e) => e.compliance_id === id);
  if (!env) throw new EmuError(404, `no ${l.what} with compliance_id ${id}`);
  checkIfMatch(ifMatch, env.version_id ?? "1");
  const live = env.compliance_spec?.[0] as Record<string, unknown> | undefined;
  if (!live) throw new EmuError(409, `${l.what} has no policy item`);
  const problems: { field: string; message: string }[] = [];
  if (body.unique_key !== env.unique_key) problems.push({ field: "unique_key", message: "does not match the policy's unique_key" });
  if (body.compliance_name !== env.compliance_name) problems.push({ field: "compliance_name", message: "does not match the policy's name" });
  if (body.compliance_spec.length !== 1) problems.push({ field: "compliance_spec", message: "must hold exactly one item" });
  const item = body.compliance_spec[0];
  for (const k of l.keys) if (item && item[k] !== live[k]) problems.push({ field: `compliance_spec.0.${k}`, message: `does not match the live ${k}` });
  if (problems.length) throw new EmuError(400, "invalid request body", problems);
  if (!item) throw new EmuError(400, "invalid request body");
  Object.assign(live, item, { updated_at: epoch(), updated_by: caller.user });
  bump(env as { version_id: string; last_modified_on: number; last_modified_by: string }, caller.user, versionStep);
  return {
    compliance_id: env.compliance_id,
    compliance_details: [{ error: [], message: `${l.what.charAt(0).toUpperCase()}${l.what.slice(1)} updated`, unique_key: env.unique_key }],
    error: [],
  };
}

/** The answer of an envelope list's endpoints to a request, over `list`; undefined for another path. */
export function envelopeListAnswer(l: ServedEnvelopeList, list: StoredEnvelope[], req: Parameters<EmulatorResource["answer"]>[0], versionStep = 1): unknown {
  if (req.path === l.path) {
    only(req, "GET");
    return list;
  }
  const seg = req.path.split("/");
  if (!req.path.startsWith(`${l.path}/`) || seg.length !== l.path.split("/").length + 1) return undefined;
  only(req, "PATCH");
  return patchEnvelope(l, list, req.caller, decodeURIComponent(seg.at(-1) ?? ""), req.body(), req.ifMatch, versionStep);
}

/** The resource of an envelope list each tenant holds (`of`). */
export const envelopeListResource = (l: ServedEnvelopeList, of: (t: TenantState) => StoredEnvelope[]): ApiResource => ({
  answer(req) {
    const out = envelopeListAnswer(l, of(req.t), req, req.settings.version_step);
    return out === undefined ? undefined : json(out);
  },
});

/** The resource of an envelope list kept beside the spec's (a kind written outside the tree brings it to
 *  startEmulator): the same endpoints over `list`. */
export const envelopeListBrought = (l: ServedEnvelopeList, list: StoredEnvelope[]): EmulatorResource => ({
  answer: (req) => envelopeListAnswer(l, list, req),
});
