import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { expect } from "vitest";
import { ROOT } from "./helpers.js";

// The evidence records of a folder as the tests read them: each checked against
// schemas/evidence-record.schema.json with ajv (a standard JSON Schema validator, not the one revsync
// registers its schemas with), in the order of their file names.
const validate = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true }).compile(
  JSON.parse(readFileSync(join(ROOT, "schemas", "evidence-record.schema.json"), "utf8")) as object,
);

/** Each record of `dir` with its file name, each one valid by the schema (else the test fails naming it). */
export function evidenceRecords(dir: string): { file: string; record: any }[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort()
    .map((file) => {
      const record = JSON.parse(readFileSync(join(dir, file), "utf8"));
      expect({ file, errors: validate(record) ? null : validate.errors }).toEqual({ file, errors: null });
      return { file, record };
    });
}
