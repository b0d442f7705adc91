/** An envelope list's service: the list, and the PATCH of one envelope (sent by the write unit,
 *  src/api/write.ts, which guards, sends and settles it). */
import type { ApiCore, RequestSpec } from "../../api/core.js";
import type { Envelope, EnvelopeList } from "./list.js";

/** The PATCH's body: the whole item, with who sends it and when. */
export interface EnvelopeUpdateBody {
  user_name: string;
  current_timestamp: string;
  format_type: string;
  compliance_name: string;
  unique_key: string;
  compliance_spec: object[];
}

/** The PATCH's answer. */
export interface EnvelopeUpdateResult {
  compliance_id?: string;
  compliance_details?: unknown[];
  error?: unknown[];
}

export interface EnvelopeService<E extends Envelope = Envelope> {
  list(core: ApiCore): Promise<E[]>;
  updateRequest(id: string, body: EnvelopeUpdateBody, ifMatch?: string): RequestSpec;
}

export const envelopeService = <E extends Envelope = Envelope>(l: Pick<EnvelopeList, "path" | "schemas" | "what">): EnvelopeService<E> => ({
  list: (core) => core.call({ method: "GET", path: l.path, kind: "read", schema: l.schemas.list, listed: l.what }),
  updateRequest: (id, body, ifMatch) => ({
    method: "PATCH",
    path: `${l.path}/${encodeURIComponent(id)}`,
    body,
    bodySchema: l.schemas.body,
    kind: "write",
    schema: l.schemas.result,
    ...(ifMatch ? { ifMatch } : {}),
    emptyOk: true,
  }),
});
