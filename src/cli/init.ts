import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { UserError } from "../errors.js";
import { CONFIG_SCHEMA, POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, repoSchemaClashes, writeRepoSchemas } from "../repo/schemas.js";
import { schemasDir } from "../schema/ajv.js";
import { writeUserFile } from "../user-files.js";
import type { Output } from "./output.js";

export interface InitFlags {
  env?: string;
  baseUrl?: string;
  realm?: string;
  ci?: string;
  force?: boolean;
}

/** The CI recipes of examples/ci, shipped with revsync. */
const CI_DIR = join(schemasDir, "..", "examples", "ci");

const CI_FILES: Record<string, [string, string][]> = {
  github: [
    ["github/revsync-plan.yml", ".github/workflows/revsync-plan.yml"],
    ["github/revsync-apply.yml", ".github/workflows/revsync-apply.yml"],
    ["github/revsync-drift.yml", ".github/workflows/revsync-drift.yml"],
  ],
  gitlab: [["gitlab/.gitlab-ci.yml", ".gitlab-ci.yml"]],
};

/** A CI recipe (written for two environments, sandbox and production) for this repo's one environment. */
export function adaptRecipe(text: string, env: string, prefix: string): string {
  return text
    .replace(/\[sandbox, production\]/g, `[${env}]`)
    .replace(/^\s*PRODUCTION_(BASE|AUTH)_URL: .*\n/gm, "")
    .replace(/SANDBOX_BASE_URL, SANDBOX_AUTH_URL,\n# PRODUCTION_BASE_URL, PRODUCTION_AUTH_URL\./, `${prefix}_BASE_URL, ${prefix}_AUTH_URL.\n#`)
    .replace(/SANDBOX_(BASE|AUTH)_URL/g, `${prefix}_$1_URL`);
}

/** Scaffolds a policy repo: revsync.yaml, policies/, a .gitignore for plan files, the JSON Schemas in
 *  .revsync/schemas/, editor settings, and with --ci the CI recipes. Never overwrites without --force. */
export async function runInit(flags: InitFlags, out: Output, args: string[]): Promise<number> {
  const dir = resolve(args[0] ?? ".");
  const env = flags.env ?? "sandbox";
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(env))
    throw new UserError(`--env must be a name of letters, digits, - and _, starting with a letter; got ${JSON.stringify(env)}`);
  if (flags.ci && !CI_FILES[flags.ci]) throw new UserError(`--ci must be github or gitlab, got ${JSON.stringify(flags.ci)}`);
  if (flags.baseUrl && !/^https?:\/\//.test(flags.baseUrl)) throw new UserError(`--base-url must be an http(s) URL, got ${JSON.stringify(flags.baseUrl)}`);
  const prefix = env.toUpperCase().replace(/[^A-Z0-9]/g, "_");
  const variables = [...(flags.baseUrl ? [] : [`${prefix}_BASE_URL`]), ...(flags.realm ? [] : [`${prefix}_REALM`])];

  const files = new Map<string, string>();
  files.set(
    "revsync.yaml",
    [
      `# yaml-language-server: $schema=${REPO_SCHEMAS_DIR}/${CONFIG_SCHEMA}`,
      "# Written by revsync init. URLs may come from the environment (CI variables); credentials only from",
      "# REVSYNC_CLIENT_ID, REVSYNC_CLIENT_SECRET, REVSYNC_USERNAME and REVSYNC_PASSWORD (or REVSYNC_TOKEN).",
      "version: 1",
      "policies: policies",
      "environments:",
      `  ${env}:`,
      `    base_url: ${flags.baseUrl ?? `\${${prefix}_BASE_URL}`}`,
      `    # auth_url: \${${prefix}_AUTH_URL}   # when the token endpoint is on another host (default: base_url)`,
      `    realm: ${flags.realm ? JSON.stringify(flags.realm) : `\${${prefix}_REALM}`}`,
      "    vars: {}                      # ${NAME} values for policy files",
      "",
    ].join("\n"),
  );
  files.set("policies/.gitkeep", "");
  files.set(".gitignore", "# Saved plans: review them in CI, do not commit them.\n*.plan.json\n");
  files.set(
    ".vscode/settings.json",
    `${JSON.stringify(
      {
        "yaml.schemas": {
          [`./${REPO_SCHEMAS_DIR}/${POLICY_FILE_SCHEMA}`]: ["policies/**/*.yaml", "policies/**/*.yml", "tests/**/*.yaml", "tests/**/*.yml"],
          [`./${REPO_SCHEMAS_DIR}/${CONFIG_SCHEMA}`]: ["revsync.yaml"],
        },
      },
      null,
      2,
    )}\n`,
  );
  for (const [from, to] of flags.ci ? (CI_FILES[flags.ci] ?? []) : []) files.set(to, adaptRecipe(readFileSync(join(CI_DIR, from), "utf8"), env, prefix));

  const clashes = [...files].filter(([name, text]) => existsSync(join(dir, name)) && readFileSync(join(dir, name), "utf8") !== text).map(([name]) => name);
  const schemaClashes = flags.force ? [] : repoSchemaClashes(dir);
  if ((clashes.length || schemaClashes.length) && !flags.force) {
    throw new UserError(
      `init would overwrite files in ${relative(process.cwd(), dir) || "."}, so nothing was written: ${[...clashes, ...schemaClashes].join(", ")}`,
      "run it in an empty folder, or add --force to overwrite them",
    );
  }
  const written: string[] = [];
  for (const [name, text] of files) {
    const path = join(dir, name);
    if (existsSync(path) && readFileSync(path, "utf8") === text) continue;
    writeUserFile(path, text);
    written.push(name);
  }
  written.push(...writeRepoSchemas(dir, !!flags.force).written);
  const where = relative(process.cwd(), dir) || ".";
  out.out(`Initialised a revsync policy repo in ${where}:`);
  for (const w of written) out.out(`  wrote ${w}`);
  out.out("");
  out.out("Next:");
  const setVars = [...variables.map((v) => `${v}=…`), "REVSYNC_CLIENT_ID=…", "REVSYNC_CLIENT_SECRET=…", "REVSYNC_USERNAME=…", "REVSYNC_PASSWORD=…"];
  out.out(`  export ${setVars.join(" ")}`);
  if (where !== ".") out.out(`  cd ${where}`);
  out.out("  npx revsync export                      # the tenant's current policies, as files in policies/");
  out.out("  npx revsync validate");
  out.out("  npx revsync plan --detailed-exitcode    # exit 0: git matches the service");
  if (flags.ci)
    out.out(
      `The CI recipes run npm ci, then npx --no -- revsync, which never downloads a package: pin revsync in the repo's package.json, and set ${variables.length ? `${variables.join(", ")} and ` : ""}the credentials as CI variables.`,
    );
  return 0;
}
