import { existsSync, statSync } from "node:fs";
import { relative, resolve } from "node:path";
import type { Diagnostic } from "../config/diagnostics.js";
import type { VarSource } from "../config/interpolate.js";
import type { Repo } from "../config/repo.js";
import { at, schemaDiagnostics } from "../config/schema-diagnostics.js";
import { listYamlFiles } from "../config/walk.js";
import { readYamlFile } from "../config/yaml-source.js";
import type { SspPolicyTestFile } from "../schema/generated/policy.js";
import type { Line } from "./evaluate.js";

export interface TestCase {
  name: string;
  file: string;
  line: number;
  column: number;
  input: Line;
  expect: { policy: string | null; ssp?: number };
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
      file.cases.forEach((c, i) => {
        cases.push({
          name: c.name,
          file: shown,
          ...at(src, `/cases/${i}`),
          input: c.line as Line,
          expect: { policy: c.expect.policy ?? null, ...(c.expect.ssp !== undefined ? { ssp: c.expect.ssp } : {}) },
        });
      });
    }
  }
  return { cases, diagnostics, dir, found: true };
}
