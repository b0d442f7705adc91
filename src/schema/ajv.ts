import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";

// schemas/ sits two levels above both src/schema/ and dist/schema/.
export const schemasDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "schemas");

export type SchemaFile =
  | "api.schema.json"
  | "revsync-config.schema.json"
  | "policy/tenant-configuration.schema.json"
  | "policy/ssp-policy.schema.json";

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function instance(): Ajv {
  if (!ajv) {
    ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
    const api = JSON.parse(readFileSync(join(schemasDir, "api.schema.json"), "utf8")) as object;
    ajv.addSchema(api, "api");
  }
  return ajv;
}

/** A validator for a definition of schemas/api.schema.json, compiled once. */
export function apiValidator(definition: string): ValidateFunction {
  const key = `api#/definitions/${definition}`;
  let fn = compiled.get(key);
  if (!fn) {
    const found = instance().getSchema(key);
    if (!found) throw new Error(`no schema definition ${definition}`);
    fn = found;
    compiled.set(key, fn);
  }
  return fn;
}

/** A validator for a whole schema file (policy and config formats). */
export function fileValidator(file: SchemaFile): ValidateFunction {
  let fn = compiled.get(file);
  if (!fn) {
    const schema = JSON.parse(readFileSync(join(schemasDir, file), "utf8")) as object;
    fn = instance().compile(schema);
    compiled.set(file, fn);
  }
  return fn;
}

/** One line per ajv error, in words, for places where no source position exists (HTTP bodies). */
export function describeAjvErrors(errors: ErrorObject[] | null | undefined): { field: string; message: string }[] {
  return (errors ?? []).map((e) => {
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
