import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../fs-atomic.js";
import { schemasDir } from "../schema/ajv.js";

/** Where a policy repo keeps the JSON Schemas its editors and the exported files refer to. */
export const REPO_SCHEMAS_DIR = ".revsync/schemas";

/** The schema editors map to every policy file; it refers to the others, copied beside it. */
export const POLICY_FILE_SCHEMA = "policy-file.schema.json";
export const CONFIG_SCHEMA = "revsync-config.schema.json";

export const REPO_SCHEMA_FILES = [
  POLICY_FILE_SCHEMA,
  "policy/tenant-configuration.schema.json",
  "policy/ssp-policy.schema.json",
  "policy/ssp-policy-test.schema.json",
  CONFIG_SCHEMA,
];

export interface WrittenSchemas {
  written: string[];
  kept: string[];
}

/** Copies revsync's schemas into the repo's .revsync/schemas/. A file that exists with other content is
 *  kept unless `overwrite` (init --force; export keeps what a team may have pinned). */
export function writeRepoSchemas(root: string, overwrite: boolean): WrittenSchemas {
  const out: WrittenSchemas = { written: [], kept: [] };
  for (const f of REPO_SCHEMA_FILES) {
    const target = join(root, REPO_SCHEMAS_DIR, f);
    const text = readFileSync(join(schemasDir, f), "utf8");
    const rel = `${REPO_SCHEMAS_DIR}/${f}`;
    if (existsSync(target)) {
      if (readFileSync(target, "utf8") === text) continue;
      if (!overwrite) {
        out.kept.push(rel);
        continue;
      }
    }
    writeFileAtomic(target, text);
    out.written.push(rel);
  }
  return out;
}
