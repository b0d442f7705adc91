import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import type * as JsYaml from "js-yaml";
import { fileValidator } from "../schema/ajv.js";
import { relative, resolve } from "node:path";
import type { Diagnostic } from "./diagnostics.js";
import type { VarSource } from "./interpolate.js";
import type { Repo } from "./repo.js";
import { at, schemaDiagnostics } from "./schema-diagnostics.js";
import { listYamlFiles } from "./walk.js";
import { MAX_FILE_BYTES, readYamlFile } from "./yaml-source.js";
import type { SspPolicyTestFile } from "../schema/generated/policy.js";
import { lineProblems, type Line } from "../policy-test/line.js";
import type { TestCase } from "../policy-test/run.js";

/** A case of a file as run. */
function testCase(file: SspPolicyTestFile, c: SspPolicyTestFile["cases"][number], shown: string, where: { line: number; column: number }): TestCase {
  return {
    name: c.name,
    file: shown,
    ...where,
    input: c.line as Line,
    expect: { policy: c.expect.policy ?? null, ...(c.expect.ssp !== undefined ? { ssp: c.expect.ssp } : {}) },
    ...(file.date_field ? { dateField: file.date_field } : {}),
  };
}

/** Large test files: the `yaml` library (positions for every node) takes about 1 s per MB; js-yaml
 *  (well-kept, no positions but a listener) about 50 ms. A plain file (one document; no tags, aliases,
 *  ${VAR}s or prototype keys) that js-yaml reads and the schema accepts is taken from it, each case's
 *  line from the listener. Anything else, and any file with a problem, goes the full way, which reports
 *  every problem at its line. */
function fastCases(abs: string, shown: string): TestCase[] | undefined {
  let text: string;
  try {
    // Small files go the full way at once: no second read of them.
    const size = statSync(abs).size;
    if (size > MAX_FILE_BYTES || size < 64 * 1024) return undefined;
    text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(abs));
  } catch {
    return undefined;
  }
  if (/\$|!|&|\*|__proto__|constructor|prototype|\n---|\n\.\.\./.test(text)) return undefined;
  // Loaded only for such a file: every command that reads policy tests would pay for it otherwise.
  const jsYaml = createRequire(import.meta.url)("js-yaml") as typeof JsYaml;
  const starts: { line: number; column: number }[] = [];
  let value: unknown;
  try {
    // Depth 1: the document's mapping; depth 2: its keys and values; depth 3: the items of `cases`.
    let depth = 0;
    let inCases = false;
    let casesNext = false;
    value = jsYaml.load(text, {
      schema: jsYaml.CORE_SCHEMA,
      json: false,
      listener(type, state) {
        const st = state as unknown as { line: number; position: number; lineStart: number; result: unknown };
        if (type === "open") {
          depth++;
          if (depth === 2 && casesNext) {
            inCases = true;
            casesNext = false;
          } else if (depth === 3 && inCases) starts.push({ line: st.line + 1, column: st.position - st.lineStart + 1 });
        } else {
          if (depth === 2) {
            if (inCases) inCases = false;
            else if (st.result === "cases") casesNext = true;
          }
          depth--;
        }
      },
    });
  } catch {
    return undefined;
  }
  if (!fileValidator("policy/ssp-policy-test.schema.json")(value)) return undefined;
  const file = value as SspPolicyTestFile;
  if (starts.length !== file.cases.length) return undefined;
  // A line with a problem goes the full way, which says where it is.
  if (file.cases.some((c) => lineProblems(c.line as Line, file.date_field).length)) return undefined;
  return file.cases.map((c, i) => testCase(file, c, shown, { line: starts[i]?.line ?? 1, column: starts[i]?.column ?? 1 }));
}

/** The folder of policy tests: `tests:` of revsync.yaml, default tests/. */
export function testsDir(repo: Repo): string {
  return resolve(repo.root, repo.config.tests ?? "tests");
}

/** Every case of every test file (kind SspPolicyTest), with its file and line; problems as diagnostics. */
export function loadTests(repo: Repo, vars: VarSource): { cases: TestCase[]; diagnostics: Diagnostic[]; dir: string; found: boolean } {
  const dir = testsDir(repo);
  const diagnostics: Diagnostic[] = [];
  const cases: TestCase[] = [];
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return { cases, diagnostics, dir, found: false };
  for (const abs of listYamlFiles(dir)) {
    const shown = relative(repo.cwd, abs) || abs;
    const fast = fastCases(abs, shown);
    if (fast) {
      cases.push(...fast);
      continue;
    }
    for (const src of readYamlFile(abs, shown, diagnostics, vars)) {
      const kind = (src.value as { kind?: unknown } | null)?.kind;
      if (kind !== "SspPolicyTest") {
        diagnostics.push({
          file: shown,
          ...at(src, "/kind"),
          severity: "error",
          message: `kind: a file in ${relative(repo.cwd, dir) || "."} must be an SspPolicyTest, got ${JSON.stringify(kind)}`,
        });
        continue;
      }
      const problems = schemaDiagnostics(src, "policy/ssp-policy-test.schema.json");
      diagnostics.push(...problems);
      if (problems.length) continue;
      const file = src.value as SspPolicyTestFile;
      const lineErrors: Diagnostic[] = file.cases.flatMap((c, i) =>
        lineProblems(c.line as Line, file.date_field).map((p) => ({
          file: shown,
          ...at(src, `/cases/${i}/line/${p.field.replace(/~/g, "~0").replace(/\//g, "~1")}`),
          severity: "error" as const,
          message: `cases.${i}.line.${p.field}: ${p.message}`,
        })),
      );
      diagnostics.push(...lineErrors);
      if (lineErrors.length) continue;
      file.cases.forEach((c, i) => cases.push(testCase(file, c, shown, at(src, `/cases/${i}`))));
    }
  }
  return { cases, diagnostics, dir, found: true };
}
