/** A building block, not a kind of its own: a kind whose service holds a list of envelopes, each with one
 *  item of settings (compliance_spec[0]), and changes one by a PATCH of the whole body (the shape of spec
 *  4.1 and 4.2). Such a kind is what it is called, its policy file's schema, its service's path and
 *  schemas, and the fields a file may set (`EnvelopeList`); `envelopeListKind` (./kind.ts) makes the kind
 *  of it: read, compare, the PATCH built from git and a fresh read, its guard and check through the write
 *  unit, export, drift and the evidence's live check. */
import type { SchemaRef } from "../../schema/ajv.js";
import type { SourceRef } from "../../config/repo.js";

/** One envelope-list kind, whole. */
export interface EnvelopeList {
  /** The kind's name: its addresses' first segment ("legal-entity"). */
  name: string;
  /** The `kind:` of its policy files, and their JSON Schema (a file of schemas/policy/, or the document). */
  fileKind: string;
  schema: SchemaRef;
  /** What one of it is called, and more than one ("legal entity", "legal entities"). */
  what: string;
  whats: string;
  /** Where the interface documents its update, for the words of a refusal ("spec 4.2"), if anywhere. */
  specRef?: string;
  /** The folder of the export folder its files go into (none: the export folder itself). */
  folder?: string;
  /** The list's path; an envelope's PATCH goes to `<path>/<compliance_id>`. */
  path: string;
  /** The schemas of its answers and bodies: the list, the PATCH's body, the body's item, the PATCH's
   *  answer. A definition of schemas/api.schema.json by name (a kind revsync ships: its folder's
   *  api.schema.json), or the schema document (a kind written outside the tree). */
  schemas: { list: string | object; body: string | object; item: string | object; result: string | object };
  /** The item's fields a policy file may set (the schema's spec), in the body's order. */
  fields: readonly string[];
  /** The item's fields the body carries as the service holds them, never git's (an item's guid). */
  keys: readonly string[];
}

/** An envelope as revsync reads it (spec 2.2): the fields it compares and writes by. */
export interface Envelope {
  compliance_id?: string;
  compliance_name?: string;
  compliance_spec?: object[];
  unique_key?: string;
  version_id?: string | null;
  last_modified_by?: string | null;
  last_modified_on?: number | null;
}

/** An envelope git asks for: the fields its file sets (a field left out keeps its live value). */
export interface DesiredEnvelope {
  name: string;
  spec: Record<string, unknown>;
  source: SourceRef;
}

/** The address of the envelope named `name`. */
export const addressOf = (l: Pick<EnvelopeList, "name">, name: string): string => `${l.name}/${name}`;

/** The fields of the PATCH's item: those a file may set, and the keys. */
export const bodyFields = (l: Pick<EnvelopeList, "fields" | "keys">): string[] => [...l.fields, ...l.keys];

/** The envelope of that name, and its item. */
export function heldAs(live: readonly Envelope[], name: string): { env?: Envelope; item?: Record<string, unknown> } {
  const env = live.find((e) => e.compliance_name === name);
  return { env, item: env?.compliance_spec?.[0] as Record<string, unknown> | undefined };
}
