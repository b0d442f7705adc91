/** Guardrails tested like code: `kind: GuardrailTest` files of the tests folder, each a plan (a saved
 *  plan, or changes written out with their facts), a moment, who approves, the overrides asked for, and
 *  the outcome expected of each rule and window (docs/guardrails.md, "Testing rules"). revsync test
 *  judges them with revsync.yaml's guardrails, offline, as apply would at that moment. */
import { existsSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import type { Diagnostic } from "../config/diagnostics.js";
import { environmentNames, readInside, type Repo } from "../config/repo.js";
import { at, schemaDiagnostics } from "../config/schema-diagnostics.js";
import { GUARDRAIL_TEST, testsDir } from "../config/test-files.js";
import { listYamlFiles } from "../config/walk.js";
import { readYamlFile } from "../config/yaml-source.js";
import { UserError } from "../errors.js";
import type { Registry } from "../kinds/kind.js";
import type { GuardrailTestFile } from "../schema/generated/policy.js";
import type { Change } from "../shared/entries.js";
import type { GuardrailResult } from "../shared/facts.js";
import { READ_CAPS, readUserFile } from "../user-files.js";
import { judgePlan, worstOutcome, type PlanGuardrails } from "./judge.js";
import { guardrailSetup } from "./setup.js";

/** One guardrail test as read: its file and line, and what it says. */
export interface GuardrailTest {
  name: string;
  file: string;
  line: number;
  /** The file as written, and where it lies (a saved plan is read from beside it). */
  spec: GuardrailTestFile;
  dir: string;
}

export interface GuardrailTestResult {
  test: GuardrailTest;
  pass: boolean;
  /** Each expectation that does not hold, in words. */
  failures: string[];
  /** The test could not be judged (its plan, its environment, an override nobody may give), in words. */
  error?: string;
  seconds: number;
}

/** The tests folder's GuardrailTest files, checked against their schema (problems as diagnostics). */
export function loadGuardrailTests(repo: Repo): { tests: GuardrailTest[]; diagnostics: Diagnostic[] } {
  const dir = testsDir(repo);
  const tests: GuardrailTest[] = [];
  const diagnostics: Diagnostic[] = [];
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return { tests, diagnostics };
  const inside = readInside(repo, dir);
  for (const abs of listYamlFiles(dir)) {
    const shown = relative(repo.cwd, abs) || abs;
    const docs: Diagnostic[] = [];
    for (const src of readYamlFile(abs, shown, docs, undefined, inside)) {
      if ((src.value as { kind?: unknown } | null)?.kind !== GUARDRAIL_TEST) continue;
      const problems = schemaDiagnostics(src, "policy/guardrail-test.schema.json");
      diagnostics.push(...problems);
      if (problems.length) continue;
      const spec = src.value as GuardrailTestFile;
      tests.push({ name: spec.metadata?.name ?? `${shown} #${src.index + 1}`, file: shown, line: at(src, "").line, spec, dir: dirname(abs) });
    }
    // A file of another kind is the policy tests' to read and report.
    if (tests.some((t) => t.file === shown)) diagnostics.push(...docs);
  }
  return { tests, diagnostics };
}

/** The test's changes and environment: a saved plan's (read as JSON, its changes and their facts), or
 *  the changes it writes out. */
function changesOf(t: GuardrailTest, repo: Repo): { changes: Change[]; environment: string | undefined } {
  if (t.spec.plan !== undefined) {
    const path = resolve(t.dir, t.spec.plan);
    let plan: { environment?: unknown; changes?: unknown };
    try {
      plan = JSON.parse(readUserFile(path, READ_CAPS.json, readInside(repo, t.dir))) as typeof plan;
    } catch (e) {
      throw new UserError(`plan ${t.spec.plan}: ${(e as Error).message}`);
    }
    if (!Array.isArray(plan.changes)) throw new UserError(`plan ${t.spec.plan} is not a saved plan (no changes)`);
    return { changes: plan.changes as Change[], environment: typeof plan.environment === "string" ? plan.environment : undefined };
  }
  const changes = (t.spec.changes ?? []).map((c) => {
    const [before, after] = [c.before ?? {}, c.after ?? {}] as Record<string, unknown>[];
    const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
    const diff = fields.map((path) => ({ path, kind: "changed" as const, before: before?.[path], after: after?.[path] }));
    return { address: c.address, action: c.action, before, after, diff, version_id: null, last_modified_on: null, facts: c.facts ?? {} } as Change;
  });
  return { changes, environment: undefined };
}

/** What the judgement came to for one expectation: a window's state, a rule's worst outcome, by address. */
function got(
  name: string,
  expected: string | Record<string, string>,
  changes: readonly Change[],
  g: PlanGuardrails,
  outcomes: ReturnType<typeof judgePlan>["outcomes"],
): string[] {
  const w = g.freeze.find((x) => x.name === name);
  if (w) {
    const state = w.in_force ? (w.overridden ? "overridden" : "in_force") : "not_in_force";
    return state === expected ? [] : [`${name}: expected ${JSON.stringify(expected)}, got ${state}${w.in_force ? ` (until ${w.until_local})` : ""}`];
  }
  if (!g.rules.some((r) => r.name === name))
    return [
      `${name}: no guardrail or freeze window of that name in this environment (${[...g.rules.map((r) => r.name), ...g.freeze.map((x) => x.name)].join(", ")})`,
    ];
  const of = (pick: (c: Change) => boolean): { results: GuardrailResult[]; why: string[] } => {
    const list = changes.flatMap((c, i) => (pick(c) ? (outcomes[i] ?? []).filter((o) => o.rule === name) : []));
    return { results: list.map((o) => o.outcome), why: list.filter((o) => o.outcome !== "pass").map((o) => o.message) };
  };
  if (typeof expected === "string") {
    const { results, why } = of(() => true);
    const worst = worstOutcome(results);
    return worst === expected ? [] : [`${name}: expected ${expected}, got ${worst}${why.length ? ` (${why[0]})` : ""}`];
  }
  return Object.entries(expected).flatMap(([address, want]) => {
    const { results, why } = of((c) => c.address === address);
    const outcome = results.length ? worstOutcome(results) : "none";
    return outcome === want ? [] : [`${name} at ${address}: expected ${want}, got ${outcome}${why.length ? ` (${why[0]})` : ""}`];
  });
}

/** One test judged. */
function runOne(t: GuardrailTest, repo: Repo, kinds: Registry): Omit<GuardrailTestResult, "seconds"> {
  const fail = (error: string) => ({ test: t, pass: false, failures: [], error });
  try {
    const { changes, environment } = changesOf(t, repo);
    const envs = environmentNames(repo);
    const env = t.spec.environment ?? environment ?? (envs.length === 1 ? envs[0] : undefined);
    if (!env) return fail(`name the environment whose guardrails it judges (environment:); revsync.yaml has ${envs.join(", ")}`);
    if (!envs.includes(env)) return fail(`no environment ${JSON.stringify(env)} in revsync.yaml; it has: ${envs.join(", ")}`);
    const now = Date.parse(t.spec.at);
    const { setup, diagnostics } = guardrailSetup(repo, env, kinds, now);
    const errors = diagnostics.filter((d) => d.severity === "error");
    if (errors.length)
      return fail(`the guardrails of revsync.yaml have errors: ${errors.map((d) => `${d.file}:${d.line}:${d.column}: ${d.message}`).join("; ")}`);
    const approvers = (t.spec.approvals ?? []).map((user) => ({ user, via: "approver identity" as const }));
    const { outcomes, guardrails } = judgePlan(changes, setup, { now, approvers, overrides: t.spec.overrides ?? [] }, kinds);
    const failures = Object.entries(t.spec.expect).flatMap(([name, want]) => got(name, want as string | Record<string, string>, changes, guardrails, outcomes));
    return { test: t, pass: !failures.length, failures };
  } catch (e) {
    if (e instanceof UserError) return fail(e.message);
    throw e;
  }
}

/** Every guardrail test, judged. */
export function runGuardrailTests(tests: readonly GuardrailTest[], repo: Repo, kinds: Registry): GuardrailTestResult[] {
  return tests.map((t) => {
    const started = performance.now();
    const r = runOne(t, repo, kinds);
    return { ...r, seconds: (performance.now() - started) / 1000 };
  });
}
