import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_SCHEMA_FILES, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../src/repo/schemas.js";
import { cli, DEMO_ENV, removeDir, ROOT, startEmu, tempRepo, type Emu } from "../src/testing/helpers.js";

// The JSON Schemas of schemas/ as standard tools read them, not as revsync registers them: every
// schema's $id is its file name, so a $ref resolves relative to the file that holds it (as editors,
// check-jsonschema and ajv-cli resolve it), whether read from schemas/ or from the copy init writes.
const SCHEMAS = join(ROOT, "schemas");
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
  it("every schema's $id is its file name, and every $ref resolves relative to the file that holds it: in schemas/ and in the copy init writes", () => {
    const copy = mkdtempSync(join(tmpdir(), "revsync-schemas-"));
    try {
      expect(writeRepoSchemas(copy, false).written.length).toBeGreaterThanOrEqual(5);
      const copied = schemaFiles(join(copy, REPO_SCHEMAS_DIR));
      expect(copied.map((f) => relative(join(copy, REPO_SCHEMAS_DIR), f)).sort()).toEqual([...REPO_SCHEMA_FILES].sort());
      resolvesAll([...schemaFiles(SCHEMAS), ...copied]);
    } finally {
      removeDir(copy);
    }
  });

  function resolvesAll(files: string[]): void {
    expect(files.length).toBeGreaterThanOrEqual(12);
    for (const file of files) {
      const schema = JSON.parse(readFileSync(file, "utf8")) as { $id?: string };
      expect(schema.$id, relative(ROOT, file)).toBe(file.split("/").pop());
      // The base a reader uses: the $id resolved against where the file was read from.
      const base = new URL(schema.$id!, pathToFileURL(file));
      expect(base.href).toBe(pathToFileURL(file).href);
      for (const ref of refs(schema)) {
        const target = new URL(ref, base);
        const doc = JSON.parse(readFileSync(fileURLToPath(target), "utf8")) as unknown;
        const pointer = decodeURIComponent(target.hash.replace(/^#/, ""));
        let node: unknown = doc;
        for (const part of pointer.split("/").slice(1)) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
        expect(node, `${relative(ROOT, file)}: ${ref}`).toBeTypeOf("object");
      }
    }
  }

  describe("a real plan", () => {
    let emu: Emu;
    let repo: string;
    beforeAll(async () => {
      emu = await startEmu();
      repo = tempRepo(emu.url);
    });
    afterAll(async () => {
      removeDir(repo);
      await emu.close();
    });

    it("validates against plan.schema.json with ajv-cli, api.schema.json given with -r as any user gives it; a broken one does not", async () => {
      // A plan with both kinds of change, whose items are checked against api.schema.json's definitions.
      const plan = await cli(["plan", "--out", "plan.json", "--env", "demo"], { cwd: repo, env: DEMO_ENV });
      expect(plan.stderr).not.toMatch(/error/i);
      const saved = JSON.parse(readFileSync(join(repo, "plan.json"), "utf8")) as { changes?: unknown[] };
      expect(JSON.stringify(saved)).toMatch(/"compliance_spec"/);
      const ajv = (data: string) =>
        promisify(execFile)(
          process.execPath,
          [
            join(ROOT, "node_modules", "ajv-cli", "dist", "index.js"),
            "validate",
            "--spec=draft7",
            "--strict=false",
            "--allow-union-types",
            "-s",
            join(SCHEMAS, "plan.schema.json"),
            "-r",
            join(SCHEMAS, "api.schema.json"),
            "-d",
            data,
          ],
          { cwd: repo },
        ).then(
          (r) => ({ code: 0, out: r.stdout + r.stderr }),
          (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
        );
      const good = await ajv("plan.json");
      expect(good.out).toContain("plan.json valid");
      expect(good.code).toBe(0);
      // The same plan with an SSP create body that api.schema.json refuses (reached through the $ref).
      const text = readFileSync(join(repo, "plan.json"), "utf8");
      const body = /"body": \{\n\s*"compliance_name": /;
      expect(text).toMatch(body);
      writeFileSync(
        join(repo, "broken.json"),
        text.replace(body, (m) => m.replace('"compliance_name": ', '"compliance_name": 42, "x_compliance_name": ')),
      );
      const bad = await ajv("broken.json");
      expect(bad.out).toContain("broken.json invalid");
      expect(bad.out).toMatch(/compliance_name.*must be string|must be string/s);
      expect(bad.code).toBe(1);
    });
  });
});
