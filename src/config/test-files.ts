import { existsSync, lstatSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import type * as JsYaml from "js-yaml";
import { fileValidator } from "../schema/ajv.js";
import { relative, resolve } from "node:path";
import type { Diagnostic } from "./diagnostics.js";
import type { VarSource } from "./interpolate.js";
import { readInside, type Repo } from "./repo.js";
import { readUserFileBytes } from "../user-files.js";
import { at, schemaDiagnostics } from "./schema-diagnostics.js";
import { listYamlFiles } from "./walk.js";
import { MAX_FILE_BYTES, readYamlFile } from "./yaml-source.js";
import type { SspPolicyTestFile } from "../schema/generated/policy.js";
import { lineCurrency, lineDate, lineProblems, parseDate, type Line } from "../policy-test/line.js";
import type { TestCase } from "../policy-test/run.js";
import { sellCents, type Contract } from "../policy-test/allocate.js";

/** The folder a test file must really lie in, and how its paths are said. */
type Inside = ReturnType<typeof readInside>;

type FileCase = NonNullable<SspPolicyTestFile["cases"]>[number];
type FileContract = NonNullable<SspPolicyTestFile["contracts"]>[number];

/** A case of a file as run. */
function testCase(file: SspPolicyTestFile, c: FileCase, shown: string, where: { line: number; column: number }): TestCase {
  return {
    name: c.name,
    file: shown,
    ...where,
    input: c.line as Line,
    expect: { policy: c.expect.policy ?? null, ...(c.expect.ssp !== undefined ? { ssp: c.expect.ssp } : {}) },
    ...(file.date_field ? { dateField: file.date_field } : {}),
  };
}

/** A contract's lines as run: a line without a date of its own takes the contract's. */
function contractOf(file: SspPolicyTestFile, c: FileContract, shown: string, where: { line: number; column: number }): Contract {
  return {
    name: c.name,
    file: shown,
    ...where,
    lines: c.lines.map((l) => {
      const input = { ...(l.line as Line) };
      if (c.date !== undefined) {
        const { field, raw } = lineDate(input, file.date_field);
        if (raw === "") input[field] = c.date;
      }
      return { id: l.id, input };
    }),
    ...(c.expect ? { expect: { allocation: c.expect.allocation as Record<string, number> } } : {}),
    ...(file.date_field ? { dateField: file.date_field } : {}),
  };
}

const pointer = (s: string): string => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** What loading refuses in a contract, each at a JSON pointer into the file: a line's date that is no
 *  date, a quantity or price that is no number or a negative one, a line without a sell price, a
 *  currency other than the first line's, a line id used twice, an expected line that is not one of the
 *  contract's, a contract date that is no date. */
function contractProblems(file: SspPolicyTestFile, c: FileContract, i: number): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  const here = `contracts.${i}`;
  if (c.date !== undefined && parseDate(c.date) === undefined) {
    out.push({
      path: `/contracts/${i}/date`,
      message: `${here}.date: ${JSON.stringify(c.date)} is not a date: write YYYY-MM-DD or MM/DD/YYYY (a day that exists)`,
    });
  }
  const first = lineCurrency((c.lines[0]?.line ?? {}) as Line);
  const seen = new Set<string>();
  c.lines.forEach((l, j) => {
    const line = l.line as Line;
    const at = `/contracts/${i}/lines/${j}`;
    const problems = lineProblems(line, file.date_field);
    for (const p of problems) out.push({ path: `${at}/line/${pointer(p.field)}`, message: `${here}.lines.${j}.line.${p.field}: ${p.message}` });
    if (seen.has(l.id))
      out.push({ path: `${at}/id`, message: `${here}.lines.${j}.id: ${JSON.stringify(l.id)} names two lines of the contract; ids are unique in a contract` });
    seen.add(l.id);
    // A quantity or price that cannot be read, or a negative one, is said at its field above.
    if (!problems.length && sellCents(line) === undefined) {
      out.push({
        path: `${at}/line`,
        message: `${here}.lines.${j} (${l.id}): the line has no sell price: give total_sell_price, or unit_sell_price and order_quantity, as numbers`,
      });
    }
    const cur = lineCurrency(line);
    if (j > 0 && cur !== first) {
      out.push({
        path: `${at}/line`,
        message: `${here}.lines.${j} (${l.id}): currency ${JSON.stringify(cur)} differs from the contract's first line (${JSON.stringify(first)}): every line of a contract has one currency`,
      });
    }
  });
  for (const id of Object.keys(c.expect?.allocation ?? {})) {
    if (!seen.has(id)) {
      out.push({
        path: `/contracts/${i}/expect/allocation/${pointer(id)}`,
        message: `${here}.expect.allocation: ${JSON.stringify(id)} is not a line of the contract (its lines: ${c.lines.map((l) => l.id).join(", ")})`,
      });
    }
  }
  return out;
}

/** Large test files: the `yaml` library (positions for every node) takes about 1 s per MB; js-yaml
 *  (well-kept, no positions but a listener) about 50 ms. A plain file (one document; no tags, aliases,
 *  ${VAR}s or prototype keys) that js-yaml reads and the schema accepts is taken from it, each case's
 *  line from the listener. Anything else, and any file with a problem, goes the full way, which reports
 *  every problem at its line. */
function fastCases(abs: string, shown: string, inside: Inside): { cases: TestCase[]; contracts: Contract[] } | undefined {
  const text = plainText(abs, inside);
  const read = text === undefined ? undefined : loadPlain(text);
  if (!read || !fileValidator("policy/ssp-policy-test.schema.json")(read.value)) return undefined;
  const { starts } = read;
  const file = read.value as SspPolicyTestFile;
  const cases = file.cases ?? [];
  const contracts = file.contracts ?? [];
  if (!cases.length && !contracts.length) return undefined;
  if (starts.cases.length !== cases.length || starts.contracts.length !== contracts.length) return undefined;
  // A line with a problem goes the full way, which says where it is.
  if (cases.some((c) => lineProblems(c.line as Line, file.date_field).length)) return undefined;
  if (contracts.some((c, i) => contractProblems(file, c, i).length)) return undefined;
  const place = (list: { line: number; column: number }[], i: number): { line: number; column: number } => ({
    line: list[i]?.line ?? 1,
    column: list[i]?.column ?? 1,
  });
  return {
    cases: cases.map((c, i) => testCase(file, c, shown, place(starts.cases, i))),
    contracts: contracts.map((c, i) => contractOf(file, c, shown, place(starts.contracts, i))),
  };
}

/** A large file's text, when it is plain enough for js-yaml: small files go the full way at once (no
 *  second read of them), as does one with what only the full way reads (a tag, an alias, a ${VAR}, a
 *  prototype key, a second document) or a number the one number rule may refuse (16 digits or more, an
 *  exponent, .inf / .nan), or one js-yaml reads otherwise than yaml (0b101): the full way checks each
 *  number's literal at its place. */
function plainText(abs: string, inside: Inside): string | undefined {
  let text: string;
  try {
    // A link, a special file or a size the full way refuses goes the full way, which says why.
    const st = lstatSync(abs);
    if (!st.isFile() || st.size > MAX_FILE_BYTES || st.size < 64 * 1024) return undefined;
    text = new TextDecoder("utf-8", { fatal: true }).decode(readUserFileBytes(abs, MAX_FILE_BYTES, inside));
  } catch {
    return undefined;
  }
  if (/\$|!|&|\*|__proto__|constructor|prototype|\n---|\n\.\.\./.test(text)) return undefined;
  if (/\d[\d.]{15}|\d[eE][-+]?\d|\.(inf|nan)\b|\b0b[01]/i.test(text)) return undefined;
  return text;
}

type Starts = Record<"cases" | "contracts", { line: number; column: number }[]>;

/** The file read by js-yaml, with where each item of `cases` and `contracts` starts (from js-yaml's
 *  listener); undefined when js-yaml cannot read it. */
function loadPlain(text: string): { value: unknown; starts: Starts } | undefined {
  // Loaded only for such a file: every command that reads policy tests would pay for it otherwise.
  const jsYaml = createRequire(import.meta.url)("js-yaml") as typeof JsYaml;
  const starts: Starts = { cases: [], contracts: [] };
  // Depth 1: the document's mapping; depth 2: its keys and values; depth 3: the items of `cases` and
  // `contracts`.
  let depth = 0;
  let inList: "cases" | "contracts" | undefined;
  let next: "cases" | "contracts" | undefined;
  const listener = (type: string, state: unknown): void => {
    const st = state as { line: number; position: number; lineStart: number; result: unknown };
    if (type === "open") {
      depth++;
      if (depth === 2 && next) {
        inList = next;
        next = undefined;
      } else if (depth === 3 && inList) starts[inList].push({ line: st.line + 1, column: st.position - st.lineStart + 1 });
      return;
    }
    if (depth === 2) {
      if (inList) inList = undefined;
      else if (st.result === "cases" || st.result === "contracts") next = st.result;
    }
    depth--;
  };
  try {
    return { value: jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA, json: false, listener }), starts };
  } catch {
    return undefined;
  }
}

/** The kind of a guardrail test file (docs/guardrails.md, "Testing rules"), which shares the tests folder. */
export const GUARDRAIL_TEST = "GuardrailTest";

/** The folder of policy tests: `tests:` of revsync.yaml, default tests/. */
export function testsDir(repo: Repo): string {
  return resolve(repo.root, repo.config.tests ?? "tests");
}

/** Every case and contract of every test file (kind SspPolicyTest), with its file and line; problems
 *  as diagnostics. */
export function loadTests(repo: Repo, vars: VarSource): { cases: TestCase[]; contracts: Contract[]; diagnostics: Diagnostic[]; dir: string; found: boolean } {
  const dir = testsDir(repo);
  const diagnostics: Diagnostic[] = [];
  const cases: TestCase[] = [];
  const contracts: Contract[] = [];
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return { cases, contracts, diagnostics, dir, found: false };
  const inside = readInside(repo, dir);
  for (const abs of listYamlFiles(dir)) {
    const shown = relative(repo.cwd, abs) || abs;
    const fast = fastCases(abs, shown, inside);
    if (fast) {
      cases.push(...fast.cases);
      contracts.push(...fast.contracts);
      continue;
    }
    for (const src of readYamlFile(abs, shown, diagnostics, vars, inside)) {
      const kind = (src.value as { kind?: unknown } | null)?.kind;
      // A guardrail test is read by the guardrails (revsync test runs both kinds).
      if (kind === GUARDRAIL_TEST) continue;
      if (kind !== "SspPolicyTest") {
        diagnostics.push({
          file: shown,
          ...at(src, "/kind"),
          severity: "error",
          message: `kind: a file in ${relative(repo.cwd, dir) || "."} must be an SspPolicyTest or a ${GUARDRAIL_TEST}, got ${JSON.stringify(kind)}`,
        });
        continue;
      }
      const problems = schemaDiagnostics(src, "policy/ssp-policy-test.schema.json");
      diagnostics.push(...problems);
      if (problems.length) continue;
      const file = src.value as SspPolicyTestFile;
      if (!file.cases && !file.contracts) {
        diagnostics.push({
          file: shown,
          ...at(src, ""),
          severity: "error",
          message: "a policy test file holds cases:, contracts: or both; this one holds neither",
        });
        continue;
      }
      const lineErrors: Diagnostic[] = (file.cases ?? []).flatMap((c, i) =>
        lineProblems(c.line as Line, file.date_field).map((p) => ({
          file: shown,
          ...at(src, `/cases/${i}/line/${pointer(p.field)}`),
          severity: "error" as const,
          message: `cases.${i}.line.${p.field}: ${p.message}`,
        })),
      );
      (file.contracts ?? []).forEach((c, i) => {
        for (const p of contractProblems(file, c, i)) lineErrors.push({ file: shown, ...at(src, p.path), severity: "error", message: p.message });
      });
      diagnostics.push(...lineErrors);
      if (lineErrors.length) continue;
      (file.cases ?? []).forEach((c, i) => cases.push(testCase(file, c, shown, at(src, `/cases/${i}`))));
      (file.contracts ?? []).forEach((c, i) => contracts.push(contractOf(file, c, shown, at(src, `/contracts/${i}`))));
    }
  }
  return { cases, contracts, diagnostics, dir, found: true };
}
