/** An SSP policy as git holds it: its policy file (kind: SspPolicy) with its batches and their values
 *  files, the rules they keep beyond the schema, and the entry a checked document makes. */
import { basename, dirname, join, normalize, relative, resolve } from "node:path";
import { isScalar, type Document } from "yaml";
import { BATCH_STATUSES, type BatchStatus } from "../../api/service-choices.js";
import type { SourceRef } from "../../config/repo.js";
import { exactAt, specOf, type Emit, type ParsedValuesByPath, type PolicyDoc, type RuleContext } from "../../config/rules.js";
import { unsafeName } from "../../config/rules.js";
import { at } from "../../config/schema-diagnostics.js";
import { isDate, readValuesCsv, resolveValuesPath } from "../../config/values.js";
import { nodeAt, type SourceDoc } from "../../config/yaml-source.js";
import { ExprError, parseExpr } from "../../policy-test/expr.js";
import type { SspValueInput } from "../../schema/generated/api.js";
import type { SspPolicyFile } from "../../schema/generated/policy.js";

export interface DesiredBatch {
  name: string;
  status: BatchStatus;
  /** The values file as git holds it, parsed (its text too: a download byte-identical to it needs no
   *  value-by-value comparison). */
  values?: GitValues;
  valuesPath?: string;
  valuesShown?: string;
  effective_start_date?: string;
  effective_end_date?: string;
}

export interface GitValues {
  text: string;
  file: string;
  /** The rows as parsed, each with its line in the file (a create body leaves the line out). */
  rows: (SspValueInput & { line?: number })[];
}

export interface DesiredSsp {
  name: string;
  spec: SspPolicyFile["spec"];
  batches: DesiredBatch[];
  source: SourceRef;
  /** Where the spec starts: plan-time problems of the spec point here. */
  specSource: SourceRef;
}

/** Two active policies in one place of the hierarchy: a warning, not an error. The service keeps them
 *  (hierarchy_no is only an order of evaluation), so export writes them and must read back clean; but the
 *  interface does not say which of the two prices an order line. A create at a place an active live
 *  policy holds stays blocked by plan and apply. */
export function duplicateHierarchy(docs: PolicyDoc[], emit: Emit): void {
  const seen = new Map<number, PolicyDoc>();
  for (const d of docs) {
    const s = specOf<SspPolicyFile["spec"]>(d);
    const n = s.hierarchy_no;
    if (typeof n !== "number" || s.active === false || !exactAt(d, "/spec/hierarchy_no")) continue;
    const first = seen.get(n);
    if (first) {
      emit(
        d,
        "/spec/hierarchy_no",
        `hierarchy_no ${n} is also held by the active policy ${JSON.stringify((first.src.value as SspPolicyFile).metadata.name)} (${first.src.file}): the interface does not say which of the two prices an order line (policy tests take them by name), and revsync creates no policy at a place an active live policy holds`,
        { rule: "duplicate-hierarchy", severity: "warning" },
      );
    } else seen.set(n, d);
  }
}

export function floorNotAboveCeiling(docs: PolicyDoc[], emit: Emit): void {
  for (const d of docs) {
    const s = specOf<SspPolicyFile["spec"]>(d);
    if (!exactAt(d, "/spec/floor_percentage") || !exactAt(d, "/spec/ceiling_percentage")) continue;
    if (typeof s.floor_percentage === "number" && typeof s.ceiling_percentage === "number" && s.floor_percentage > s.ceiling_percentage) {
      emit(d, "/spec/floor_percentage", `floor_percentage ${s.floor_percentage} is above ceiling_percentage ${s.ceiling_percentage}`, {
        rule: "floor-ceiling",
      });
    }
  }
}

export function formulaNeedsExpression(docs: PolicyDoc[], emit: Emit): void {
  for (const d of docs) {
    const s = specOf<SspPolicyFile["spec"]>(d);
    if (s.method === "formula" && (typeof s.expression !== "string" || s.expression.trim() === "")) {
      emit(
        d,
        s.expression === undefined ? "/spec/method" : "/spec/expression",
        "a formula policy needs an expression (the formula that derives the SSP value)",
        { rule: "formula-expression" },
      );
    }
    if (s.method === "formula" && (d.src.value as SspPolicyFile).batches?.length) {
      emit(d, "/batches", "a formula policy has no batches: batches belong to upload and calculator policies", { rule: "formula-batches" });
    }
  }
}

/** How far into a string scalar's source a character of its value is, when the two match one for one (a
 *  plain or quoted scalar on one line, with no escapes): then a problem inside it gets its own column. */
function scalarOffset(src: SourceDoc, pointer: string, index: number): number | undefined {
  const node = nodeAt(src.doc as Document, pointer.slice(1).split("/"));
  if (!isScalar(node) || typeof node.value !== "string" || !node.range) return undefined;
  const quoted = node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE";
  if (node.type !== "PLAIN" && !quoted) return undefined;
  const width = node.range[1] - node.range[0];
  return width === node.value.length + (quoted ? 2 : 0) ? index + (quoted ? 1 : 0) : undefined;
}

/** A formula's expression, parsed by the evaluator revsync test uses: a problem is reported at its own
 *  column (the service would refuse the formula, or compute something else). */
export function formulaExpressionParses(docs: PolicyDoc[], emit: Emit): void {
  for (const d of docs) {
    const s = specOf<SspPolicyFile["spec"]>(d);
    // Left out, the method keeps its live value, which may be formula.
    if ((s.method !== "formula" && s.method !== undefined) || typeof s.expression !== "string" || s.expression.trim() === "") continue;
    try {
      parseExpr(s.expression);
    } catch (e) {
      if (!(e instanceof ExprError)) throw e;
      const offset = e.index === undefined ? undefined : scalarOffset(d.src, "/spec/expression", e.index);
      emit(d, "/spec/expression", `expression ${JSON.stringify(s.expression)}: ${e.message}`, {
        rule: "formula-expression",
        ...(offset !== undefined ? { offset } : {}),
      });
    }
  }
}

export function batchRules(docs: PolicyDoc[], { root, emit, extra, parsed }: RuleContext): void {
  for (const d of docs) {
    const batches = (d.src.value as SspPolicyFile).batches;
    if (!Array.isArray(batches)) continue;
    const names = new Set<string>();
    batches.forEach((b, i) => {
      if (!b || typeof b !== "object") return;
      if (typeof b.name === "string") {
        const unsafe = unsafeName(b.name);
        if (unsafe) emit(d, `/batches/${i}/name`, `the batch name cannot be used: ${unsafe}`, { rule: "unsafe-name" });
        if (names.has(b.name)) emit(d, `/batches/${i}/name`, `duplicate batch name ${JSON.stringify(b.name)}`, { rule: "duplicate-batch" });
        names.add(b.name);
      }
      // A batch's dates are compared with the service's (plan, drift, export): each a day that exists.
      const dates = (["effective_start_date", "effective_end_date"] as const).filter((k) => typeof b[k] === "string");
      for (const k of dates) {
        if (!isDate(b[k] as string))
          emit(d, `/batches/${i}/${k}`, `batches.${i}.${k}: ${JSON.stringify(b[k])} is not a date: write YYYY-MM-DD (a day that exists)`, {
            rule: "batch-dates",
          });
      }
      if (
        dates.length === 2 &&
        isDate(b.effective_start_date ?? "") &&
        isDate(b.effective_end_date ?? "") &&
        (b.effective_start_date ?? "") > (b.effective_end_date ?? "")
      ) {
        emit(
          d,
          `/batches/${i}/effective_start_date`,
          `batches.${i}: effective_start_date ${b.effective_start_date} is after effective_end_date ${b.effective_end_date}`,
          {
            rule: "batch-dates",
          },
        );
      }
      if (typeof b.status === "string" && !(BATCH_STATUSES as readonly string[]).includes(b.status)) {
        return; // the schema's enum reports it
      }
      if (typeof b.values !== "string") return;
      const { path, problem } = resolveValuesPath(root, d.absFile, b.values);
      if (problem || !path) {
        emit(d, `/batches/${i}/values`, problem ?? "values file not found", { rule: "batch-values" });
        return;
      }
      // Shown relative to where the policy file is shown from.
      let values = parsed.get(path);
      if (!values) {
        values = readValuesCsv(path, normalize(join(dirname(d.src.file), b.values)));
        parsed.set(path, values);
        extra.push(...values.diagnostics);
      }
    });
  }
}

/** Every rule of SSP policy files beyond the schema. */
export function sspRules(docs: PolicyDoc[], ctx: RuleContext): void {
  for (const rule of [duplicateHierarchy, floorNotAboveCeiling, formulaNeedsExpression, formulaExpressionParses]) rule(docs, ctx.emit);
  batchRules(docs, ctx);
}

/** The entry a checked document makes: its batches with their values files as the rules parsed them. */
export function sspEntry(d: PolicyDoc, ctx: { cwd: string; parsed: ParsedValuesByPath }): DesiredSsp {
  const v = d.src.value as SspPolicyFile;
  return {
    name: v.metadata.name,
    spec: v.spec,
    source: { file: d.src.file, ...at(d.src, "/metadata/name") },
    specSource: { file: d.src.file, ...at(d.src, "/spec") },
    batches: (v.batches ?? []).map((b) => {
      const path = b.values ? resolve(dirname(d.absFile), b.values) : undefined;
      const got = path ? ctx.parsed.get(path) : undefined;
      return {
        name: b.name,
        status: b.status,
        values: got && path ? { text: got.text, file: basename(path), rows: got.values } : undefined,
        valuesPath: path,
        valuesShown: path ? relative(ctx.cwd, path) : undefined,
        effective_start_date: b.effective_start_date,
        effective_end_date: b.effective_end_date,
      };
    }),
  };
}
