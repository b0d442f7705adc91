import type { ErrorObject } from "ajv";
import type { Document, Node } from "yaml";
import { fileValidator, schemaJson, type SchemaRef } from "../schema/ajv.js";
import { article, closest, describeValue, type Diagnostic } from "./diagnostics.js";
import { keyAt, nodeAt, position, type SourceDoc } from "./yaml-source.js";
import { MAX_EXACT_WHOLE } from "../number.js";
import { plural } from "../words.js";

function pathOf(pointer: string): string[] {
  return pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function valueAt(root: unknown, path: string[]): unknown {
  let v = root;
  for (const k of path) v = v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function allowedKeys(schemaPath: string, root: object): string[] {
  // schemaPath like "#/properties/spec/additionalProperties": the sibling properties list the allowed keys.
  const parts = schemaPath.replace(/^#\//, "").split("/").slice(0, -1);
  let s: unknown = root;
  for (const p of parts) s = s && typeof s === "object" ? (s as Record<string, unknown>)[p] : undefined;
  const props = (s as { properties?: object } | undefined)?.properties;
  return props ? Object.keys(props) : [];
}

function sentence(e: ErrorObject, value: unknown, schemaRoot: object): { message: string; key?: string } {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "type":
      return { message: `expected ${String(p.type).split(",").map(article).join(" or ")}, got ${describeValue(value)}` };
    case "enum":
      return { message: `expected one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}, got ${describeValue(value)}` };
    case "const":
      return { message: `expected ${JSON.stringify(p.allowedValue)}, got ${describeValue(value)}` };
    case "required":
      return { message: `missing required field ${JSON.stringify(p.missingProperty)}` };
    case "additionalProperties": {
      const key = String(p.additionalProperty);
      const allowed = allowedKeys(e.schemaPath, schemaRoot);
      const hint = closest(key, allowed);
      return { key, message: `unknown field ${JSON.stringify(key)}${hint ? ` (did you mean ${JSON.stringify(hint)}?)` : ""}` };
    }
    case "minLength":
      return { message: "must not be empty" };
    case "minItems":
      return { message: `needs at least ${plural(Number(p.limit), "item")}` };
    case "minProperties":
      return { message: `needs at least ${plural(Number(p.limit), "entry", "entries")}` };
    case "pattern":
      return { message: `${describeValue(value)} does not have the expected form (${String(p.pattern)})` };
    default:
      return { message: e.message ?? "is invalid" };
  }
}

/** ajv reports an anyOf that no branch meets as each branch's errors, then "must match a schema in
 *  anyOf". Where every branch only wants another type (text, a number or true/false), one type error
 *  names them all, as a list of types in one "type" does; otherwise the errors of the branches whose
 *  type the value has stand alone. */
function mergeAnyOf(errors: ErrorObject[]): ErrorObject[] {
  const out: ErrorObject[] = [];
  for (const e of errors) {
    const branches = e.keyword === "anyOf" ? out.filter((b) => b.instancePath === e.instancePath && b.schemaPath.startsWith(`${e.schemaPath}/`)) : [];
    if (!branches.length) {
      out.push(e);
      continue;
    }
    if (!branches.every((b) => b.keyword === "type")) {
      // The value has one branch's type and breaks another rule of it (a number beyond a bound): that
      // rule is the problem, not the other branches' types.
      const wrongType = branches.filter((b) => b.keyword === "type");
      out.splice(0, out.length, ...out.filter((b) => !wrongType.includes(b)));
      continue;
    }
    const at = out.indexOf(branches[0] as ErrorObject);
    const types = branches.map((b) => String((b.params as { type: unknown }).type));
    const rest = out.filter((b) => !branches.includes(b));
    out.splice(0, out.length, ...rest.slice(0, at), { ...e, keyword: "type", params: { type: types.join(",") } }, ...rest.slice(at));
  }
  return out;
}

export function fieldName(pointer: string): string {
  return pathOf(pointer).join(".") || "(document)";
}

/** What a schema error is, for a caller that says it better itself (a semantic rule with its own words). */
export interface SchemaError {
  keyword: string;
  schemaPath: string;
}

/** Validates a YAML document against a schema file; maps each ajv error to the YAML node's line and
 *  column. A bound the number rule said already (a number beyond 2^53 - 1, reported at its place by the
 *  reader of the file) is not said again; `skip` leaves out what a caller's rule says. */
export function schemaDiagnostics(
  src: SourceDoc,
  schema: SchemaRef,
  skip: (pointer: string, key?: string, error?: SchemaError) => boolean = () => false,
): Diagnostic[] {
  const fn = fileValidator(schema);
  if (fn(src.value)) return [];
  const root = schemaJson(schema);
  const out: Diagnostic[] = [];
  // ajv reports a failed "type" and the keywords below it; keep the most useful one per place.
  for (const e of mergeAnyOf(fn.errors ?? [])) {
    const path = pathOf(e.instancePath);
    const value = valueAt(src.value, path);
    const { message, key } = sentence(e, value, root);
    const pointer = key ? `${e.instancePath}/${key}` : e.instancePath;
    if ((e.keyword === "maximum" || e.keyword === "minimum") && typeof value === "number" && !(Math.abs(value) <= MAX_EXACT_WHOLE)) continue;
    if (skip(pointer, key, e)) continue;
    const node: Node | undefined = key ? keyAt(src.doc as Document, path, key) : nodeAt(src.doc as Document, path);
    const p = position(src.lines, node?.range?.[0]);
    const where = e.keyword === "required" ? fieldName(e.instancePath) : fieldName(pointer);
    out.push({
      file: src.file,
      ...p,
      pointer,
      message: e.keyword === "required" && where === "(document)" ? message : `${where}: ${message}`,
      severity: "error",
      // A field that should not be there is its key's problem, never its value's (nor a variable's that filled it).
      rule: key && e.keyword === "additionalProperties" ? "unknown-field" : "schema",
    });
  }
  return out;
}

/** Position of a JSON pointer within a document (for semantic rules). */
export function at(src: SourceDoc, pointer: string, key = false): { line: number; column: number } {
  const path = pathOf(pointer);
  if (key && path.length) {
    const node = keyAt(src.doc as Document, path.slice(0, -1), path[path.length - 1] ?? "");
    return position(src.lines, node?.range?.[0]);
  }
  return position(src.lines, nodeAt(src.doc as Document, path)?.range?.[0]);
}
