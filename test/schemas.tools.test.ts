import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ajv, examples, oneDocumentEach, outputs, typos, yamlLanguageServer, type Check } from "../scripts/schema-validators.mjs";
import { KINDS } from "../src/kinds/registry.js";
import { REPO_SCHEMA_FILES, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../src/repo/schemas.js";
import { datedExport } from "../src/testing/dated-export.js";
import { cli, DEMO_ENV, removeDir, ROOT, startEmu, tempRepo, type Emu } from "../src/testing/helpers.js";

// The JSON Schemas of schemas/ as standard tools read them, not as revsync registers them: each stands
// alone (an absolute $id that names it and is never fetched, every $ref within the file), and a policy
// file's schema takes a ${VAR} wherever revsync does. Each real validator, run as a user runs it,
// passes every example and every file revsync writes, and finds a typo in each kind.
// (Python's jsonschema, read as check-jsonschema reads, needs a venv: npm run test:install runs it.)
const SCHEMAS = join(ROOT, "schemas");
/** The schemas of schemas/ that are no kind's. */
const OWN_SCHEMAS = [
  "api.schema.json",
  "apply-report.schema.json",
  "evidence-record.schema.json",
  "plan.schema.json",
  "policy-file.schema.json",
  "policy/guardrail-test.schema.json",
  "policy/ssp-policy-test.schema.json",
  "revsync-config.schema.json",
];
const schemaFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return n === "generated" ? [] : schemaFiles(p);
    return n.endsWith(".schema.json") ? [p] : [];
  });

/** Every "$ref" of a schema, wherever it sits. */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const v of node) refs(v, out);
  else if (node && typeof node === "object")
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refs(v, out);
    }
  return out;
}

describe("schemas/ for standard tools", () => {
  let emu: Emu;
  let repo: string;
  let work: string;
  let checks: Check[];
  beforeAll(async () => {
    emu = await startEmu();
    repo = tempRepo(emu.url);
    work = mkdtempSync(join(tmpdir(), "revsync-validators-"));
    // What revsync writes that a schema describes: a saved plan (creates, updates, batch moves), the
    // evidence record of its apply and apply's JSON report.
    const plan = await cli(["plan", "--out", "plan.json", "--env", "demo"], { cwd: repo, env: DEMO_ENV });
    expect(plan.code, plan.stderr).toBe(0);
    const applied = await cli(["apply", "plan.json", "--auto-approve", "--evidence", "evidence", "--format", "json"], { cwd: repo, env: DEMO_ENV });
    expect(applied.code, applied.stderr).toBe(0);
    writeFileSync(join(work, "apply-report.json"), applied.stdout);
    const record = readdirSync(join(repo, "evidence")).find((n) => n.endsWith(".json")) ?? "none";
    // Policy files revsync writes with dates in them, which a reader of YAML 1.1 (ajv-cli) must read as
    // text: export's, new and edited in place (export-edges.e2e.test.ts), and the cases test record
    // writes from the service's order lines (policy-tests.e2e.test.ts).
    const exported = join(work, "exported");
    mkdirSync(exported);
    const { files: exportedFiles } = await datedExport(exported, emu.url);
    const recorded = await cli(["test", "record", "--from-errors", "--out", "recorded.yaml"], { cwd: repo, env: DEMO_ENV });
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(readFileSync(join(repo, "recorded.yaml"), "utf8")).toMatch(/^ {6}ssp_date: '\d{4}-\d\d-\d\d'$/m);
    const policyFile = join(SCHEMAS, "policy-file.schema.json");
    const written = [...exportedFiles, join(repo, "recorded.yaml")].map((file) => ({ file, schema: policyFile, valid: true }));
    checks = [
      ...examples(),
      ...typos(work),
      ...outputs(join(repo, "plan.json"), join(repo, "evidence", record), work, join(work, "apply-report.json")),
      ...written,
    ];
  });
  afterAll(async () => {
    removeDir(repo);
    removeDir(work);
    await emu.close();
  });

  it("each schema stands alone: an absolute $id of its own, every $ref within the file and found there; in schemas/ and in the copy init writes", () => {
    const copy = mkdtempSync(join(tmpdir(), "revsync-schemas-"));
    try {
      expect(writeRepoSchemas(copy, false).written).toEqual(REPO_SCHEMA_FILES.map((f) => `${REPO_SCHEMAS_DIR}/${f}`));
      const files = [...schemaFiles(SCHEMAS), ...schemaFiles(join(copy, REPO_SCHEMAS_DIR))];
      // schemas/ holds revsync's own formats and each kind's policy file schema, as the registry names it.
      const kinds = KINDS.flatMap((k) => (typeof k.schema === "string" ? [k.schema] : []));
      expect(
        schemaFiles(SCHEMAS)
          .map((f) => relative(SCHEMAS, f))
          .sort(),
      ).toEqual([...OWN_SCHEMAS, ...kinds].sort());
      expect(files.length).toBe(OWN_SCHEMAS.length + kinds.length + REPO_SCHEMA_FILES.length);
      for (const file of files) {
        const schema = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
        const name = relative(SCHEMAS, file)
          .replace(/^.*\.revsync\/schemas\//, "")
          .replace(/\.schema\.json$/, "")
          .replace("/", ":");
        expect(schema.$id, relative(ROOT, file)).toBe(`urn:revsync:schema:${name}`);
        for (const ref of refs(schema)) {
          expect(ref, relative(ROOT, file)).toMatch(/^#\//);
          let node: unknown = schema;
          for (const part of ref.slice(2).split("/")) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
          expect(node, `${relative(ROOT, file)}: ${ref}`).toBeTypeOf("object");
        }
      }
    } finally {
      removeDir(copy);
    }
  });

  it("ajv-cli, given only the schema and the files: no strict-mode warning; every example and every file revsync wrote passes, each typo fails", () => {
    const { results, schemaNotes } = ajv(oneDocumentEach(checks, join(work, "documents")));
    expect(schemaNotes).toEqual([]);
    expect(results.filter((r) => r.valid).length).toBeGreaterThan(30);
    for (const r of results)
      expect({ file: relative(ROOT, r.file), passed: r.passed, said: r.passed === r.valid ? "" : r.said }).toEqual({
        file: relative(ROOT, r.file),
        passed: r.valid,
        said: "",
      });
    // ${VAR} where a number goes: the example among the passing.
    expect(readFileSync(join(ROOT, "examples/multi-env/policies/ssp/edge-devices.yaml"), "utf8")).toContain("floor_percentage: ${hardware_floor}");
    expect(results.find((r) => r.file.endsWith("edge-devices.yaml"))?.passed).toBe(true);
    // The schemas of each kind given too, as users gave them when policy-file.schema.json referred to them.
    const r = spawnSync(
      process.execPath,
      [
        join(ROOT, "node_modules", "ajv-cli", "dist", "index.js"),
        "validate",
        "-s",
        "schemas/policy-file.schema.json",
        "-r",
        "schemas/policy/*.json",
        "-d",
        "examples/multi-env/policies/ssp/edge-devices.yaml",
      ],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(`${r.stdout}${r.stderr}`).toBe("examples/multi-env/policies/ssp/edge-devices.yaml valid\n");
  });

  it("the ajv-cli command of docs/concepts.md runs as written, in a repo init made holding one of policies/ (no node_modules/.bin on the PATH, as a user's shell has)", async () => {
    const page = readFileSync(join(ROOT, "docs", "concepts.md"), "utf8");
    const commands = [...page.matchAll(/`([^`]*\bajv\b[^`]*\bvalidate\b[^`]*)`/g)].map((m) => (m[1] ?? "").replace(/\s+/g, " "));
    expect(commands).toHaveLength(1);
    expect(commands[0]).toContain("-d policies/tenant-configuration.yaml");
    // Inside the project's folder, so npx finds the pinned devDependency and needs no network.
    const dir = join(ROOT, ".revsync-tmp", `ajv-doc-${process.pid}`);
    mkdirSync(join(dir, "policies"), { recursive: true });
    try {
      const init = await cli(["init"], { cwd: dir, env: DEMO_ENV });
      expect(init.code, init.stderr).toBe(0);
      cpSync(join(ROOT, "policies", "tenant-configuration.yaml"), join(dir, "policies", "tenant-configuration.yaml"));
      const PATH = (process.env.PATH ?? "")
        .split(":")
        .filter((p) => !p.endsWith(join("node_modules", ".bin")))
        .join(":");
      const r = spawnSync("bash", ["--norc", "-c", commands[0] ?? ""], { cwd: dir, encoding: "utf8", env: { ...process.env, PATH } });
      expect({ code: r.status, said: `${r.stdout}${r.stderr}` }).toEqual({ code: 0, said: "policies/tenant-configuration.yaml valid\n" });
    } finally {
      removeDir(dir);
    }
  });

  it("yaml-language-server, as an editor drives it: the files' first lines and the editor settings init writes find the schemas; no diagnostic but on a typo", async () => {
    // A repo made by init: its .revsync/schemas/ and .vscode/settings.json, a policy file with ${VAR}s
    // (and no first line: the settings map policies/** to the schema), and a typo.
    const made = join(work, "made");
    expect((await cli(["init", made, "--realm", "demo"], { cwd: work })).code).toBe(0);
    const settings = JSON.parse(readFileSync(join(made, ".vscode", "settings.json"), "utf8"))["yaml.schemas"] as Record<string, string[]>;
    // VS Code resolves a ./ path against the workspace folder, as yaml-language-server then gets it.
    const mapped = Object.fromEntries(Object.entries(settings).map(([schema, globs]) => [pathToFileURL(join(made, schema)).href, globs]));
    const withVars = readFileSync(join(ROOT, "examples/multi-env/policies/ssp/edge-devices.yaml"), "utf8").replace(/^# yaml-language-server:.*\n/, "");
    writeFileSync(join(made, "policies", "edge.yaml"), withVars);
    // What revsync writes, mapped as a user maps them (JSON is YAML).
    mapped[pathToFileURL(join(SCHEMAS, "plan.schema.json")).href] = ["**/plan.json", "**/typo-plan.json"];
    mapped[pathToFileURL(join(SCHEMAS, "evidence-record.schema.json")).href] = ["**/evidence/*.json", "**/typo-evidence.json"];
    mapped[pathToFileURL(join(SCHEMAS, "apply-report.schema.json")).href] = ["**/apply-report.json", "**/typo-report.json"];
    const server = await yamlLanguageServer(ROOT, mapped);
    try {
      const files: { file: string; text?: string; valid: boolean }[] = [
        ...checks,
        { file: join(made, "revsync.yaml"), valid: true },
        { file: join(made, "policies", "edge.yaml"), valid: true },
        { file: join(made, "policies", "typo.yaml"), text: withVars.replace("spec:", "spec:\n  colour: blue"), valid: false },
        // A typo in place: the example's first line names the schema, relative to where it stands.
        {
          file: join(ROOT, "examples/multi-env/policies/ssp/typo.yaml"),
          text: readFileSync(join(ROOT, "examples/multi-env/policies/ssp/edge-devices.yaml"), "utf8").replace("floor_percentage:", "floor_percentge:"),
          valid: false,
        },
      ];
      // Every document at once: the server validates them as an editor with many files open.
      const said = await Promise.all(files.map((f) => server.open(f.file, f.text)));
      files.forEach((f, i) => {
        const messages = (said[i] ?? []).map((d) => `${d.range.start.line + 1}: ${d.message}`);
        if (f.valid) expect({ file: relative(ROOT, f.file), messages }).toEqual({ file: relative(ROOT, f.file), messages: [] });
        else expect(messages.length, relative(ROOT, f.file)).toBeGreaterThan(0);
      });
      expect(said[files.length - 2]?.map((d) => d.message)).toContain("Property colour is not allowed.");
      expect(said[files.length - 1]?.map((d) => d.message)).toContain("Property floor_percentge is not allowed.");
    } finally {
      await server.close();
    }
  });
});
