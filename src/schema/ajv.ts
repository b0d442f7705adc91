import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { PACKAGE_ROOT } from "../package-root.js";
// The validators precompiled by `npm run gen:types` (ajv standalone code): a plain import, so that the
// bundled CLI holds them and V8's code cache of it covers them (loaded from schemas/ at run time, they
// were a tenth of a `revsync validate`).
import precompiledValidators from "../../schemas/generated/validators.cjs";

export const schemasDir = join(PACKAGE_ROOT, "schemas");

export type SchemaFile = "api.schema.json" | "revsync-config.schema.json" | `policy/${string}.schema.json` | "plan.schema.json" | "evidence-record.schema.json";

/** A JSON Schema: one of revsync's files (schemas/), or a schema document itself, as a resource kind
 *  defined outside schemas/ brings its own (src/kinds/kind.ts). */
export type SchemaRef = SchemaFile | object;

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

const load = createRequire(import.meta.url);

/** Ajv itself is loaded only when something must be compiled: validate uses precompiled code. */
function instance(): Ajv {
  if (!ajv) {
    const { Ajv: AjvClass } = load("ajv") as typeof import("ajv");
    ajv = new AjvClass({ allErrors: true, strict: false, allowUnionTypes: true });
    const api = JSON.parse(readFileSync(join(schemasDir, "api.schema.json"), "utf8")) as object;
    // Under its file name, as apiValidator names its definitions.
    ajv.addSchema(api, "api.schema.json");
  }
  return ajv;
}

/** A validator for a definition of schemas/api.schema.json: precompiled, or compiled once. */
export function apiValidator(definition: string): ValidateFunction {
  const key = `api.schema.json#/definitions/${definition}`;
  let fn = compiled.get(key);
  if (!fn) {
    const found = standalone()[`api_${definition}`] ?? instance().getSchema(key);
    if (!found) throw new Error(`no schema definition ${definition}`);
    fn = found;
    compiled.set(key, fn);
  }
  return fn;
}

/** A validator of a definition of schemas/api.schema.json, by its name, or of a schema document a kind
 *  written outside the tree brings for its answers and bodies. */
export const validatorOf = (ref: string | object): ValidateFunction => (typeof ref === "object" ? fileValidator(ref) : apiValidator(ref));

/** The name the precompiled module gives a schema file's validator (npm run gen:types): its file name in
 *  camel case ("policy/ssp-policy-test.schema.json": sspPolicyTest), revsync.yaml's "config". */
function standaloneName(file: SchemaFile): string {
  const base = file.replace(/^.*\//, "").replace(/\.schema\.json$/, "");
  return base === "revsync-config" ? "config" : base.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The precompiled validators: exported as the schema's name (or api_<Definition>). */
function standalone(): Record<string, ValidateFunction | undefined> {
  return precompiledValidators;
}

function precompiled(file: SchemaFile): ValidateFunction | undefined {
  return file === "api.schema.json" ? undefined : standalone()[standaloneName(file)];
}

const ownCompiled = new WeakMap<object, ValidateFunction>();

/** A validator for a whole schema (policy and config formats, or a kind's own schema document). */
export function fileValidator(file: SchemaRef): ValidateFunction {
  if (typeof file === "object") {
    let own = ownCompiled.get(file);
    if (!own) ownCompiled.set(file, (own = instance().compile(file)));
    return own;
  }
  let fn = compiled.get(file);
  if (!fn) {
    fn = precompiled(file) ?? instance().compile(schemaJson(file));
    compiled.set(file, fn);
  }
  return fn;
}

const schemas = new Map<SchemaFile, object>();

/** The schema document itself (for messages that list the allowed fields). */
export function schemaJson(file: SchemaRef): object {
  if (typeof file === "object") return file;
  let s = schemas.get(file);
  if (!s) {
    s = JSON.parse(readFileSync(join(schemasDir, file), "utf8")) as object;
    schemas.set(file, s);
  }
  return s;
}

/** One line per ajv error, in words, for places where no source position exists (HTTP bodies). */
export function describeAjvErrors(errors: ErrorObject[] | null | undefined): { field: string; message: string }[] {
  // An "if" error only wraps the errors of its "then" branch, which are listed themselves.
  return (errors ?? [])
    .filter((e) => e.keyword !== "if")
    .map((e) => {
      const base = e.instancePath.replace(/^\//, "").replace(/\//g, ".");
      if (e.keyword === "required") {
        const missing = (e.params as { missingProperty: string }).missingProperty;
        return { field: base ? `${base}.${missing}` : missing, message: `is required` };
      }
      if (e.keyword === "additionalProperties") {
        const extra = (e.params as { additionalProperty: string }).additionalProperty;
        return { field: base ? `${base}.${extra}` : extra, message: "is not an allowed field" };
      }
      if (e.keyword === "enum") {
        const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
        return { field: base || "(body)", message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}` };
      }
      return { field: base || "(body)", message: e.message ?? "is invalid" };
    });
}
