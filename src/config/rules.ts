import { dirname, join, normalize } from "node:path";
import type { SspPolicyFile } from "../schema/generated/policy.js";
import type { Diagnostic } from "./diagnostics.js";
import { at, schemaDiagnostics, type SchemaError } from "./schema-diagnostics.js";
import { coerceEnvText } from "./interpolate.js";
import { schemaJson, type SchemaFile } from "../schema/ajv.js";
import { nodeAt, type SourceDoc } from "./yaml-source.js";
import { isScalar, type Document } from "yaml";
import { ExprError, parseExpr } from "../policy-test/expr.js";
import { isDate, readValuesCsv, resolveValuesPath, type ParsedValues } from "./values.js";
import { BATCH_STATUSES } from "../api/service-choices.js";

/** The fields of the tenant configuration update body that a policy file may set (guid is taken from
 *  live; docs/decisions.md, "The tenant configuration update"). */
export const UPDATABLE_TENANT_FIELDS = [
  "ar_accounting",
  "can_delete",
  "carves_allocation",
  "create_revenue_schedules",
  "distribution_method",
  "is_user_defined",
  "journals_run_currency",
  "lt_st_accounting",
  "manual_journal",
  "manual_journal_contra_account",
  "multi_currency_revenue_contracts",
  "prorate_method",
  "ui_mode",
] as const;

/** Fields of a live tenant configuration that the update body cannot carry. */
export const READ_ONLY_TENANT_FIELDS = [
  "account_segment_delimiter",
  "augment_currency_rates",
  "bundle_functionality",
  "contract_asset_journal_method",
  "contract_asset_segment",
  "cost_enabled",
  "cost_practical_expedient",
  "created_at",
  "created_by",
  "egress_hold",
  "fx_adjustment_method",
  "fx_adjustments",
  "guid",
  "ingest_hold",
  "journal_details_egress",
  "journal_transfer_by_ofid",
  "rc_activities_egress",
  "rc_distributions_egress",
  "reprocess_existing_ofid",
  "crm_multicurrorg_enabled",
  "snowman_enabled",
  "updated_at",
  "updated_by",
];

export const DELIMITERS = ["-", ",", "|", "~", "#", ":", ".", "$"];

/** One policy document of the repo, as the rules check it. */
export interface PolicyDoc {
  src: SourceDoc;
  absFile: string;
  kind: "TenantConfiguration" | "SspPolicy";
}

type Emit = (doc: PolicyDoc, pointer: string, message: string, opts?: { key?: boolean; rule: string; offset?: number }) => void;

const spec = <T>(d: PolicyDoc): T => (d.src.value as { spec?: T }).spec ?? ({} as T);
const ssp = (docs: PolicyDoc[]): PolicyDoc[] => docs.filter((d) => d.kind === "SspPolicy");

/** Why a name cannot travel in a URL path as itself (a batch's name is a segment of the review and
 *  approve paths, a policy's goes into queries and addresses): "." and ".." are dot segments a URL
 *  resolves away, and control characters no service keeps as they are. */
export function unsafeName(name: string): string | undefined {
  if (name === "." || name === "..") return `${JSON.stringify(name)} is a dot segment: in a URL path it would name another resource`;
  if ([...name].some((ch) => (ch.codePointAt(0) ?? 0) < 0x20 || ch === "\u007f")) return `${JSON.stringify(name)} holds a control character`;
  if (name.trim() === "") return "a name of blanks only";
  return undefined;
}

export function duplicateNames(docs: PolicyDoc[], emit: Emit): void {
  const seen = new Map<string, PolicyDoc>();
  for (const d of docs) {
    const name = (d.src.value as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== "string") continue;
    const unsafe = unsafeName(name);
    if (unsafe) emit(d, "/metadata/name", `the name cannot be used: ${unsafe}`, { rule: "unsafe-name" });
    const key = `${d.kind}\u0000${name}`;
    const first = seen.get(key);
    if (first) {
      const p = at(first.src, "/metadata/name");
      emit(d, "/metadata/name", `duplicate ${d.kind} name ${JSON.stringify(name)}: also defined at ${first.src.file}:${p.line}`, { rule: "duplicate-name" });
    } else seen.set(key, d);
  }
}

/** Whether the number at a pointer was read as written: one that is not exact was reported where the
 *  file is read, and a rule comparing the number YAML rounded it to would speak of a number nobody wrote. */
const exactAt = (d: PolicyDoc, pointer: string): boolean => !d.src.inexact?.has(pointer);

export function duplicateHierarchy(docs: PolicyDoc[], emit: Emit): void {
  const seen = new Map<number, PolicyDoc>();
  for (const d of ssp(docs)) {
    const n = spec<SspPolicyFile["spec"]>(d).hierarchy_no;
    if (typeof n !== "number" || !exactAt(d, "/spec/hierarchy_no")) continue;
    const first = seen.get(n);
    if (first) {
      emit(
        d,
        "/spec/hierarchy_no",
        `hierarchy_no ${n} is already used by ${JSON.stringify((first.src.value as SspPolicyFile).metadata.name)} (${first.src.file}): each SSP policy needs its own place in the hierarchy`,
        { rule: "duplicate-hierarchy" },
      );
    } else seen.set(n, d);
  }
}

export function floorNotAboveCeiling(docs: PolicyDoc[], emit: Emit): void {
  for (const d of ssp(docs)) {
    const s = spec<SspPolicyFile["spec"]>(d);
    if (!exactAt(d, "/spec/floor_percentage") || !exactAt(d, "/spec/ceiling_percentage")) continue;
    if (typeof s.floor_percentage === "number" && typeof s.ceiling_percentage === "number" && s.floor_percentage > s.ceiling_percentage) {
      emit(d, "/spec/floor_percentage", `floor_percentage ${s.floor_percentage} is above ceiling_percentage ${s.ceiling_percentage}`, {
        rule: "floor-ceiling",
      });
    }
  }
}

export function formulaNeedsExpression(docs: PolicyDoc[], emit: Emit): void {
  for (const d of ssp(docs)) {
    const s = spec<SspPolicyFile["spec"]>(d);
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
  for (const d of ssp(docs)) {
    const s = spec<SspPolicyFile["spec"]>(d);
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

export function tenantFieldsUpdatable(docs: PolicyDoc[], emit: Emit): void {
  for (const d of docs.filter((x) => x.kind === "TenantConfiguration")) {
    const s = spec<Record<string, unknown>>(d);
    if (!s || typeof s !== "object") continue;
    for (const key of Object.keys(s)) {
      if (key === "account_segment_delimiter" && !DELIMITERS.includes(String(s[key]))) {
        emit(d, `/spec/${key}`, `account_segment_delimiter must be one of ${DELIMITERS.join(" ")}, got ${JSON.stringify(s[key])}`, { rule: "delimiter" });
        continue;
      }
      if (READ_ONLY_TENANT_FIELDS.includes(key)) {
        emit(
          d,
          `/spec/${key}`,
          `${key} cannot be changed: the update API (spec 4.2) does not carry it. Updatable fields: ${UPDATABLE_TENANT_FIELDS.join(", ")}`,
          { key: true, rule: "not-updatable" },
        );
      }
    }
  }
}

/** Values files parsed while checking, by absolute path: the desired state takes them from here, so each
 *  file is read once per load. */
export type ParsedValuesByPath = Map<string, ParsedValues>;

export function batchRules(root: string, docs: PolicyDoc[], emit: Emit, extra: Diagnostic[], parsed: ParsedValuesByPath = new Map()): void {
  for (const d of ssp(docs)) {
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

/** The JSON Schema type at a pointer of a document (following properties and items). */
function schemaTypeAt(schema: object, pointer: string): unknown {
  let node = schema as { properties?: Record<string, object>; items?: object; type?: unknown } | undefined;
  for (const seg of pointer.split("/").slice(1)) {
    node = (node?.properties?.[seg] ?? (/^\d+$/.test(seg) ? node?.items : undefined)) as typeof node;
    if (!node) return undefined;
  }
  return node?.type;
}

/** A whole-value ${VAR} from the process environment is text; where the schema wants a number or a
 *  boolean and the text is such a literal, it becomes one (hardware_floor=80 fills an integer field). */
function typeEnvValues(src: SourceDoc, schema: SchemaFile): void {
  for (const [pointer, text] of src.envTexts ?? []) {
    const typed = coerceEnvText(text, schemaTypeAt(schemaJson(schema), pointer));
    if (typed === text) continue;
    const parts = pointer.split("/").slice(1);
    const last = parts.pop();
    let node = src.value as Record<string, unknown> | undefined;
    for (const seg of parts) node = node?.[seg] as Record<string, unknown> | undefined;
    if (node && last !== undefined) node[last] = typed;
  }
}

/** Schema errors that a semantic rule below says in its own words, at the same place: the schemas hold
 *  these rules so that every validator refuses what revsync refuses, and revsync says each problem once.
 *  A name's form (unsafe-name), a batch's dates (batch-dates), a formula policy's expression and batches
 *  (formula-expression, formula-batches: the schema's if/then). */
function restated(pointer: string, e: SchemaError): boolean {
  if (e.keyword === "if" || e.schemaPath.startsWith("#/then/")) return true;
  return e.keyword === "pattern" && /^\/(?:metadata\/name|batches\/\d+\/(?:name|effective_start_date|effective_end_date))$/.test(pointer);
}

/** A problem with a value filled from variables names them, and where they came from: the value the
 *  message quotes is not what the file says. */
function namingVariables(src: SourceDoc, d: Diagnostic): Diagnostic {
  const from = d.pointer === undefined ? undefined : src.variables?.get(d.pointer);
  return from ? { ...d, message: `${d.message} (${from.words})`, variables: from.names } : d;
}

/** Schema checks per kind, then each semantic rule. */
export function runRules(root: string, docs: PolicyDoc[], parsed: ParsedValuesByPath = new Map()): Diagnostic[] {
  const out: Diagnostic[] = [];
  const emit: Emit = (doc, pointer, message, opts) => {
    const p = at(doc.src, pointer, opts?.key);
    const d: Diagnostic = { file: doc.src.file, line: p.line, column: p.column + (opts?.offset ?? 0), pointer, message, severity: "error", rule: opts?.rule };
    out.push(namingVariables(doc.src, d));
  };
  for (const d of docs) {
    const schema = d.kind === "TenantConfiguration" ? "policy/tenant-configuration.schema.json" : "policy/ssp-policy.schema.json";
    typeEnvValues(d.src, schema);
    // A value whose ${VAR} could not be filled, or a number that is not exact, was reported already: no
    // second message about it.
    const reported = (pointer: string): boolean =>
      !exactAt(d, pointer) || [...(d.src.unresolved ?? [])].some((u) => pointer === u || pointer.startsWith(`${u}/`));
    // Read-only tenant fields get the rule's message (with the updatable list) instead of "unknown field".
    const readOnly = (pointer: string, key?: string): boolean =>
      d.kind === "TenantConfiguration" && pointer.startsWith("/spec/") && !!key && READ_ONLY_TENANT_FIELDS.concat(["account_segment_delimiter"]).includes(key);
    out.push(
      ...schemaDiagnostics(d.src, schema, (pointer, key, e) => reported(pointer) || readOnly(pointer, key) || (!!e && restated(pointer, e))).map((x) =>
        namingVariables(d.src, x),
      ),
    );
  }
  duplicateNames(docs, emit);
  duplicateHierarchy(docs, emit);
  floorNotAboveCeiling(docs, emit);
  formulaNeedsExpression(docs, emit);
  formulaExpressionParses(docs, emit);
  tenantFieldsUpdatable(docs, emit);
  batchRules(root, docs, emit, out, parsed);
  return out;
}
