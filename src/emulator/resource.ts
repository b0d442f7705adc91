/** A resource of the service's API, as the emulator serves it: each one module (the tenant
 *  configurations, the SSP policies and their batches, the approvals, the error transactions), asked in
 *  turn by the server for each signed-in request under /apis/, and the resources a kind written outside
 *  the tree brings beside them (EmulatorResource). */
import { Reply } from "./reply.js";
import { EmuError, type Caller } from "./service.js";
import type { EmulatorSettings } from "./settings.js";
import type { EmulatorState, TenantState } from "./state.js";

/** One signed-in request to a tenant's API. */
export interface ApiRequest {
  state: EmulatorState;
  /** The tenant it is sent to. */
  t: TenantState;
  caller: Caller;
  method: string;
  /** Its path within the tenant (/apis/...), and the path's segments, decoded. */
  path: string;
  seg: string[];
  /** A query parameter. */
  query(k: string): string | undefined;
  /** The body as JSON (400 when it is none). */
  body(): unknown;
  /** The If-Match header, where the emulator honours it (the if_match setting). */
  ifMatch: string | undefined;
  settings: EmulatorSettings;
}

export interface ApiResource {
  /** Its answer to a request, or undefined when the path is not its own; throws EmuError to refuse. */
  answer(req: ApiRequest): Reply | undefined;
  /** Whether a request of this method to this path only reads, whatever its method (a search sent as a
   *  POST): it changes nothing, so it is not saved, and the literal profile answers its refusals as they
   *  are. Any method but GET writes, unless its resource says so. */
  readsOnly?(method: string, path: string): boolean;
}

/** A resource served beside the spec's, as a resource kind written outside the tree brings its own (the
 *  toy kind of test/toy-kind.e2e.test.ts): asked, after the spec's endpoints, for each signed-in request
 *  under /apis/ that none of them answers; it answers a JSON body, or undefined when the path is not its
 *  own, and throws EmuError to refuse. It keeps its own state (a reset leaves it as it is). */
export interface EmulatorResource {
  answer(req: { method: string; path: string; body: () => unknown; ifMatch: string | undefined; caller: Caller }): unknown;
}

/** A resource brought beside the spec's, as the server asks its own. */
export const brought = (r: EmulatorResource): ApiResource => ({
  answer(req) {
    const out = r.answer({ method: req.method, path: req.path, body: req.body, ifMatch: req.ifMatch, caller: req.caller });
    return out === undefined ? undefined : new Reply(200, out);
  },
});

/** Refuses (405) a request of another method than the endpoint's. */
export function only(req: Pick<ApiRequest, "method" | "path">, method: string): void {
  if (req.method !== method) throw new EmuError(405, `${req.method} is not allowed on ${req.path}`);
}

/** A JSON answer. */
export const json = (body: unknown): Reply => new Reply(200, body);
