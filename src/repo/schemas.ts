import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeUserFile } from "../user-files.js";
import { schemasDir } from "../schema/ajv.js";

/** Where a policy repo keeps the JSON Schemas its editors and the exported files refer to. */
export const REPO_SCHEMAS_DIR = ".revsync/schemas";

/** The schema editors map to every policy file, a document of any kind as written, ${VAR}s and all. It
 *  stands alone, as the config's does: each file is whole, with no reference to another. */
export const POLICY_FILE_SCHEMA = "policy-file.schema.json";
export const CONFIG_SCHEMA = "revsync-config.schema.json";

export const REPO_SCHEMA_FILES = [POLICY_FILE_SCHEMA, CONFIG_SCHEMA];

export interface WrittenSchemas {
  written: string[];
  kept: string[];
}

/** Each repo schema file: where it goes, revsync's text, and what the repo holds there now. */
function schemaFiles(root: string): { rel: string; target: string; text: string; current: string | undefined }[] {
  return REPO_SCHEMA_FILES.map((f) => {
    const target = join(root, REPO_SCHEMAS_DIR, f);
    return {
      rel: `${REPO_SCHEMAS_DIR}/${f}`,
      target,
      text: readFileSync(join(schemasDir, f), "utf8"),
      current: existsSync(target) ? readFileSync(target, "utf8") : undefined,
    };
  });
}

/** The repo's schema files that hold other content than revsync's (init refuses them without --force). */
export function repoSchemaClashes(root: string): string[] {
  return schemaFiles(root)
    .filter((f) => f.current !== undefined && f.current !== f.text)
    .map((f) => f.rel);
}

/** Copies revsync's schemas into the repo's .revsync/schemas/. A file that exists with other content is
 *  kept unless `overwrite` (init --force; export keeps what a team may have pinned). With `dryRun`,
 *  says what it would write and writes nothing. */
export function writeRepoSchemas(root: string, overwrite: boolean, dryRun = false): WrittenSchemas {
  const out: WrittenSchemas = { written: [], kept: [] };
  for (const f of schemaFiles(root)) {
    if (f.current === f.text) continue;
    if (f.current !== undefined && !overwrite) {
      out.kept.push(f.rel);
      continue;
    }
    // Inside the repo only: a .revsync that is a link out of it is refused, named (realPathInside).
    if (!dryRun) writeUserFile(f.target, f.text, root, { folderName: "the policy repo" });
    out.written.push(f.rel);
  }
  return out;
}
