/** The saved plan's schema, as the kinds' registry makes it: which addresses a change may carry (one of a
 *  kind's, `<name>/...`), which actions each kind writes and the payload of each. schemas/plan.schema.json
 *  holds them for the shipped registry (npm run gen:types writes these parts of it from here); a run
 *  given another registry (a kind written outside the tree, as test/toy-kind.e2e.test.ts adds one) checks
 *  its saved plans against the same file with these parts made from its own kinds. */
import type { ValidateFunction } from "ajv";
import { canonicalJson } from "../canonical-json.js";
import type { Registry } from "../kinds/kind.js";
import { fileValidator, schemaJson } from "../schema/ajv.js";
import { APPLIED_ACTIONS, type Action } from "../shared/entries.js";

/** The mark of each part of the plan's schema the registry writes. */
export const FROM_KINDS = "Written from the kinds' registry by npm run gen:types (src/plan/schema.ts): edit the kind.";

/** One part of the schema: its place (keys from the root) and what it holds there (undefined: removed). */
export interface SchemaEdit {
  path: string[];
  value: unknown;
}

const NOT_APPLIED: Action[] = ["blocked", "not_in_git", "unsupported"];
const pascal = (s: string): string =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
const regexText = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The definition a kind's payload is written under: "SspPolicyCreatePayload". */
export const payloadDefinition = (fileKind: string, payload: string): string => `${fileKind}${pascal(payload)}Payload`;

/** One kind's rule: the actions its addresses may carry, and each write's payload. */
function kindRule(name: string, fileKind: string, payloads: Registry[number]["payloads"]): object {
  const writes = Object.entries(payloads).map(([p, { actions }]) => ({
    if: { required: ["action"], properties: { action: { enum: [...actions] } } },
    then: { properties: { payload: { $ref: `#/definitions/${payloadDefinition(fileKind, p)}` } } },
  }));
  const actions = [...new Set(Object.values(payloads).flatMap((p) => p.actions)), ...NOT_APPLIED];
  return {
    if: { required: ["address"], properties: { address: { type: "string", pattern: `^${regexText(name)}/` } } },
    then: { properties: { action: { enum: actions } }, ...(writes.length ? { allOf: writes } : {}) },
  };
}

/** The parts of the plan's schema the registry makes, given the schema as it is (`current`: its payload
 *  definitions of kinds no longer in the registry are removed). */
export function planSchemaEdits(current: { definitions?: Record<string, { $comment?: unknown }> }, kinds: Registry): SchemaEdit[] {
  const payloads = kinds.flatMap((k) => Object.entries(k.payloads).map(([p, { schema }]) => ({ name: payloadDefinition(k.fileKind, p), p, schema })));
  const edits: SchemaEdit[] = [
    {
      path: ["definitions", "Change", "properties", "address"],
      value: {
        $comment: FROM_KINDS,
        description: `<kind>/<name>...: an address of one of the kinds (${kinds.map((k) => k.name).join(", ")})`,
        type: "string",
        pattern: `^(${kinds.map((k) => regexText(k.name)).join("|")})/`,
      },
    },
    {
      path: ["definitions", "Change", "allOf"],
      value: [
        { if: { properties: { action: { enum: [...APPLIED_ACTIONS] } } }, then: { required: ["payload"] } },
        ...kinds.map((k) => kindRule(k.name, k.fileKind, k.payloads)),
      ],
    },
    {
      path: ["definitions", "Payload"],
      value: {
        $comment: FROM_KINDS,
        description: "What apply sends for a write, as its kind defines it (its definition: <kind><payload>Payload)",
        type: "object",
        required: ["kind"],
        properties: { kind: { enum: [...new Set(payloads.map((p) => p.p))] } },
      },
    },
    ...payloads.map(({ name, schema }) => ({ path: ["definitions", name], value: { $comment: FROM_KINDS, ...schema } })),
  ];
  const made = new Set(payloads.map((p) => p.name));
  for (const [name, def] of Object.entries(current.definitions ?? {}))
    if (def.$comment === FROM_KINDS && name !== "Payload" && !made.has(name)) edits.push({ path: ["definitions", name], value: undefined });
  return edits;
}

/** A schema with the registry's parts made from `kinds` (a copy; `schema` is left as it is). */
export function withKinds<T extends object>(schema: T, kinds: Registry): T {
  const out = structuredClone(schema) as Record<string, unknown>;
  for (const { path, value } of planSchemaEdits(out, kinds)) {
    let node = out;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    const last = path[path.length - 1] as string;
    if (value === undefined) delete node[last];
    else node[last] = value;
  }
  return out as T;
}

const validators = new WeakMap<Registry, ValidateFunction>();

/** The validator of a saved plan for a run of these kinds: schemas/plan.schema.json, precompiled, when it
 *  is what the registry makes (the shipped kinds); else the file with the parts of these kinds, compiled
 *  once per registry. */
export function planValidator(kinds: Registry): ValidateFunction {
  let fn = validators.get(kinds);
  if (fn) return fn;
  const shipped = schemaJson("plan.schema.json");
  const wanted = withKinds(shipped, kinds);
  if (canonicalJson(wanted) === canonicalJson(shipped)) fn = fileValidator("plan.schema.json");
  else {
    // Compiled beside the shipped schema, so under no $id of its own.
    const { $id: _id, ...own } = wanted as { $id?: string };
    fn = fileValidator(own);
  }
  validators.set(kinds, fn);
  return fn;
}
