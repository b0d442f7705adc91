import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { cli, DEMO_ENV } from "./helpers.js";

/** Every YAML file under `dir`. */
export function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The policy files export writes with dates in them, new and edited in place: `dir` (empty) becomes a
 *  policy repo of one environment aimed at the emulator at `url`, export writes its files, git's batch is
 *  then made to end a year earlier than the service's, and export edits that date back in place. What a
 *  reader of YAML 1.1 (ajv-cli) must read as text, as revsync reads it. */
export async function datedExport(
  dir: string,
  url: string,
): Promise<{ files: string[]; dated: string[]; firstExport: string[]; edited: string; before: string; after: string }> {
  writeFileSync(
    join(dir, "revsync.yaml"),
    `version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: ${url}\n    realm: demo\n    vars: { contra_account: MJ-CONTRA-000 }\n`,
  );
  const e = await cli(["export"], { cwd: dir, env: DEMO_ENV });
  expect(e.code, e.stderr).toBe(0);
  const files = yamlFiles(join(dir, "policies"));
  const dated = files.filter((f) => /_date: /.test(readFileSync(f, "utf8")));
  const firstExport = dated.map((f) => readFileSync(f, "utf8"));
  // An in-place edit of a date: git's batch ends on another day than the service's.
  const edited = dated[0] as string;
  const before = readFileSync(edited, "utf8");
  writeFileSync(
    edited,
    before.replace(/(effective_end_date: )'(\d{4}-\d\d-\d\d)'/, "$1$2").replace(/(effective_end_date: )(\d{4})-/, (_, k, y) => `${k}${Number(y) - 1}-`),
  );
  expect(readFileSync(edited, "utf8")).not.toBe(before);
  expect((await cli(["export"], { cwd: dir, env: DEMO_ENV })).code).toBe(0);
  return { files, dated, firstExport, edited, before, after: readFileSync(edited, "utf8") };
}
