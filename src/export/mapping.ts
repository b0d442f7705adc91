import { posix } from "node:path";
import { Document, visit, type Node } from "yaml";
import { checkValuesText } from "../config/values.js";
import { literalValue } from "../config/interpolate.js";
import { UPDATABLE_TENANT_FIELDS, unsafeName } from "../config/rules.js";
import { address, batchNameOf, byCodePoint, slug, targeted, valuesFileFor } from "../shared/address.js";
import type { LivePolicy, LiveState } from "../live/read.js";
import { fileValidator, type SchemaFile } from "../schema/ajv.js";
import type { TenantConfigurationEnvelope } from "../schema/generated/api.js";
import { valuesToCsv } from "../ssp/csv.js";
import { BATCH_STATUSES } from "../api/service-choices.js";
import { isInexact } from "../number.js";
import { BATCH_DATES, serviceDate } from "../plan/compare.js";
import type { UnknownField } from "../shared/unknown.js";

/** What export turns into files: the tenant configurations, the SSP policies with their details, and
 *  the values of their batches (keyed "policy/batch"). */
export interface ExportSource {
  tenantConfigs: TenantConfigurationEnvelope[];
  ssp: Map<string, LivePolicy>;
  values?: LiveState["values"];
}

export interface ExportedBatch {
  name: string;
  status: string;
  /** The values file, relative to the policy file. */
  values?: string;
  /** The batch's dates as the service holds them (YYYY-MM-DD), where it shows them as dates. */
  effective_start_date?: string;
  effective_end_date?: string;
}

export interface ExportedFile {
  /** Path relative to the export folder. */
  file: string;
  address: string;
  schema: SchemaFile;
  value: { apiVersion: string; kind: string; metadata: { name: string }; spec: Record<string, unknown>; batches?: ExportedBatch[] };
  /** Values files written beside the policy file: path relative to the export folder, and the text. */
  valuesFiles: { file: string; text: string }[];
  /** Each listed batch's values (CSV text), by batch name: what an existing file's batch is given. */
  batchValues: Map<string, string>;
  /** The spec fields left out (a comment says why): an existing file loses its own value for them,
   *  except for those the service does not show (nullFields), which keep git's value. */
  leftOutFields: string[];
  /** The spec fields the service shows as null, or as a number a double cannot hold exactly: unknown,
   *  never a value to write over git's (src/shared/unknown.ts). */
  nullFields: string[];
  /** Of those, the ones the service answers with a number that is not exact: the service's text. */
  notComparable: Map<string, string>;
  /** Comments written in place of what was left out: inside spec, and after the batches. */
  specComments: string[];
  batchComments: string[];
  /** One line per thing left out, for export to print. */
  leftOut: string[];
  /** Per batch, the dates the service does not show as dates (null, or text that is no date): git's
   *  stay, not compared (src/shared/unknown.ts). */
  batchDatesUnknown: Map<string, UnknownField[]>;
}

export const SSP_EXPORT_FIELDS = [
  "method",
  "active",
  "hierarchy_no",
  "data_identifiers",
  "entity_type",
  "floor_percentage",
  "ceiling_percentage",
  "expression",
  "when",
  "transaction_above_range",
  "transaction_below_range",
  "transaction_mid_range",
  "type",
  "can_delete",
  "is_user_defined",
] as const;

/** The batch statuses a policy file can hold (revsync moves a batch forward through them). */
const LISTED_STATUSES = new Set<string>(BATCH_STATUSES);

const show = (v: unknown): string => JSON.stringify(v) ?? "undefined";

/** A comment export writes (and a line it prints), with every character escaped as \uXXXX that a reader
 *  or YAML could take for a line break, or that turns text around (the C0 and C1 controls, NEL, the line
 *  and paragraph separators, bidirectional marks, BOM): the service's text quoted in it stays on its one
 *  line and reads back as written, so exporting again adds nothing. */
const oneLine = (text: string): string =>
  text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

/** Leaves out of spec each field the policy file format refuses (a value outside a documented list, a
 *  type the format does not take) or that the service shows as null: a field left out keeps its live
 *  value and is never a change. Each is named, with its live value, in a comment in its place. */
function fitSpec(f: ExportedFile, live: Record<string, unknown>, fields: readonly string[]): void {
  for (const k of fields) {
    const v = live[k];
    if (v === undefined) continue;
    if (v === null) {
      f.specComments.push(` ${k}: left out, the service shows null (unknown); it keeps its live value`);
      f.leftOutFields.push(k);
      // An SSP policy's field the service does not show keeps git's value (docs/decisions.md, "Nulls are
      // unknown, not a change"); a tenant configuration's is compared as it is, so it is left out.
      if (f.value.kind === "SspPolicy") f.nullFields.push(k);
      f.leftOut.push(`${f.address}: ${k} (the service shows null)`);
      continue;
    }
    if (isInexact(v)) {
      // A number a double cannot hold exactly is not comparable (the one number rule): never written into
      // git, where it would read as another number, and git's own value stays, as for a null.
      f.specComments.push(` ${k}: left out, the service answers ${v.text}, a number a double cannot hold exactly (not comparable); it keeps its live value`);
      f.leftOutFields.push(k);
      if (f.value.kind === "SspPolicy") {
        f.nullFields.push(k);
        f.notComparable.set(k, v.text);
      }
      f.leftOut.push(`${f.address}: ${k} (the service answers ${v.text}, not comparable)`);
      continue;
    }
    f.value.spec[k] = v;
  }
  const validate = fileValidator(f.schema);
  const doc: unknown = f.value;
  for (let guard = 0; guard < fields.length && !validate(doc); guard++) {
    const err = (validate.errors ?? []).find((e) => e.instancePath.startsWith("/spec/"));
    const field = err?.instancePath.split("/")[2];
    if (!field || !(field in f.value.spec)) break;
    const value = f.value.spec[field];
    delete f.value.spec[field];
    const why =
      err?.keyword === "enum" || /must be equal to one of the allowed values/.test(err?.message ?? "")
        ? `holds a value a policy file may not (${describeOutside(field, value, err?.instancePath ?? "")})`
        : `holds ${show(value)}, which a policy file may not (${err?.message ?? "invalid"})`;
    f.specComments.push(` ${field}: left out, the service ${why}; it keeps its live value`);
    f.leftOutFields.push(field);
    f.leftOut.push(`${f.address}: ${field} (${describeOutside(field, value, err?.instancePath ?? "")})`);
  }
}

/** The offending value itself: for a list, the item at fault (an operator of a condition, say). */
function describeOutside(field: string, value: unknown, pointer: string): string {
  const parts = pointer.split("/").slice(3);
  let node: unknown = value;
  for (const p of parts) node = (node as Record<string, unknown> | undefined)?.[p];
  const last = parts[parts.length - 1];
  return last && node !== undefined && typeof node !== "object" ? `${last} ${show(node)}` : `${field} ${show(value)}`;
}

/** The live state as policy files: pure, so `plan` right after export finds no change. `taken`: paths
 *  (relative to the export folder) that hold something already; a new file gets another name.
 *  `unnamed`: gets one line for each policy left out because git cannot hold its name (unsafeName: a
 *  name that cannot travel in a URL path as itself); plan shows such a policy as not in git. */
export function exportFiles(src: ExportSource, targets: string[], taken: ReadonlySet<string> = new Set(), unnamed: string[] = []): ExportedFile[] {
  const files: ExportedFile[] = [];
  const used = new Set<string>(taken);
  const unique = (file: string): string => {
    let path = file;
    for (let i = 2; used.has(path); i++) path = file.replace(/\.(yaml|csv)$/, `-${i}.$1`);
    used.add(path);
    return path;
  };
  for (const e of src.tenantConfigs) {
    const name = e.compliance_name ?? "";
    const addr = address.tenant(name);
    if (!targeted(addr, targets)) continue;
    const bad = unsafeName(name);
    if (bad) {
      unnamed.push(`tenant configuration ${show(name)} (its name cannot be used in a policy file: ${bad})`);
      continue;
    }
    const f: ExportedFile = {
      file: unique(`${slug(name || "tenant-configuration")}.yaml`),
      address: addr,
      schema: "policy/tenant-configuration.schema.json",
      value: { apiVersion: "revsync/v1", kind: "TenantConfiguration", metadata: { name }, spec: {} },
      specComments: [],
      batchComments: [],
      leftOut: [],
      valuesFiles: [],
      batchValues: new Map(),
      leftOutFields: [],
      nullFields: [],
      notComparable: new Map(),
      batchDatesUnknown: new Map(),
    };
    fitSpec(f, (e.compliance_spec?.[0] ?? {}) as Record<string, unknown>, UPDATABLE_TENANT_FIELDS);
    files.push(f);
  }
  for (const [name, lp] of src.ssp) {
    const addr = address.ssp(name);
    if (!targeted(addr, targets)) continue;
    const bad = unsafeName(name);
    if (bad) {
      unnamed.push(`SSP policy ${show(name)} (its name cannot be used in a policy file: ${bad})`);
      continue;
    }
    const f: ExportedFile = {
      file: unique(`ssp/${slug(name)}.yaml`),
      address: addr,
      schema: "policy/ssp-policy.schema.json",
      value: { apiVersion: "revsync/v1", kind: "SspPolicy", metadata: { name }, spec: {} },
      specComments: [],
      batchComments: [],
      leftOut: [],
      valuesFiles: [],
      batchValues: new Map(),
      leftOutFields: [],
      nullFields: [],
      notComparable: new Map(),
      batchDatesUnknown: new Map(),
    };
    fitSpec(f, lp.item as unknown as Record<string, unknown>, SSP_EXPORT_FIELDS);
    const batches: ExportedBatch[] = [];
    // In name order, whatever order the service lists them in: the same files from the same state.
    for (const b of [...(lp.batches ?? [])].sort((x, y) => byCodePoint(batchNameOf(x), batchNameOf(y)))) {
      const batchName = batchNameOf(b);
      const baddr = address.batch(name, batchName);
      if (!targeted(baddr, targets)) continue;
      const badName = unsafeName(batchName);
      if (badName) {
        f.batchComments.push(` batch ${show(batchName)}: not listed, its name cannot be used in a policy file (${badName})`);
        f.leftOut.push(`${addr}: batch ${show(batchName)} (its name cannot be used in a policy file: ${badName})`);
        continue;
      }
      if (!b.status || !LISTED_STATUSES.has(b.status)) {
        f.batchComments.push(
          ` batch ${show(batchName)}: not listed, its status in the service is ${show(b.status ?? null)}; a policy file lists file uploaded, reviewed or approved batches: add it with the status it should reach`,
        );
        f.leftOut.push(`${baddr} (status ${show(b.status ?? null)})`);
        continue;
      }
      const entry: ExportedBatch = { name: batchName, status: b.status };

      // The values the batch holds, kept in git beside the policy file: what a reviewer reads before a
      // review or approve, and what plan compares with the service.
      const held = src.values?.get(`${name}/${batchName}`);
      if (held) {
        const text = Array.isArray(held) ? valuesToCsv(held) : held.csv;
        const file = unique(posix.join(posix.dirname(f.file), valuesFileFor(name, batchName)));
        const problem = checkValuesText(text, file).diagnostics[0];
        if (problem) {
          f.batchComments.push(
            ` batch ${show(batchName)}: values left out, the service's values do not pass revsync's checks (line ${problem.line}: ${problem.message}); git cannot review or approve them`,
          );
          f.leftOut.push(`${baddr}: values (line ${problem.line}: ${problem.message})`);
        } else {
          entry.values = posix.relative(posix.dirname(f.file), file);
          f.valuesFiles.push({ file, text });
          f.batchValues.set(batchName, text);
        }
      }
      // The batch's dates, as plan compares them: written where the service shows a date.
      for (const k of BATCH_DATES) {
        const held = serviceDate((b as unknown as Record<string, unknown>)[k]);
        if ("date" in held) {
          entry[k] = held.date;
          continue;
        }
        f.batchDatesUnknown.set(batchName, [...(f.batchDatesUnknown.get(batchName) ?? []), { field: k, ...held.unknown }]);
        // None shown is no date to write; text that is no date is named where it would stand.
        if (held.unknown.unreadable === undefined) continue;
        f.batchComments.push(` batch ${show(batchName)}: ${k} left out, the service shows ${show(held.unknown.unreadable)}, which is no date`);
        f.leftOut.push(`${baddr}: ${k} (the service shows ${show(held.unknown.unreadable)}, not comparable)`);
      }
      batches.push(entry);
    }
    if (batches.length) f.value.batches = batches;
    files.push(f);
  }
  for (const f of files) for (const list of [f.specComments, f.batchComments, f.leftOut]) list.forEach((l, i) => (list[i] = oneLine(l)));
  unnamed.forEach((l, i) => (unnamed[i] = oneLine(l)));
  return files;
}

/** A node export made from the service's values, with every text that holds a line break or a control
 *  character written double-quoted (escaped): YAML's block styles cannot carry every such text exactly
 *  (a line of blanks before a line break is lost), a double-quoted scalar carries any. */
export function quotedWhereNeeded<T>(node: T): T {
  visit(node as Node, {
    Scalar(_, s) {
      // eslint-disable-next-line no-control-regex
      if (typeof s.value === "string" && /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(s.value)) s.type = "QUOTE_DOUBLE";
    },
  });
  return node;
}

/** A file's text: the header comment lines, then the YAML with the comments in place. Every text of the
 *  service is written as literal text (literalText: a `${` of the service never reads as a variable). */
export function renderFile(f: ExportedFile, header: string[]): string {
  const doc = new Document(literalValue(f.value));
  quotedWhereNeeded(doc.contents);
  const spec = doc.get("spec", true) as { comment?: string | null } | undefined;
  if (spec && f.specComments.length) spec.comment = f.specComments.join("\n");
  if (f.batchComments.length) {
    const batches = doc.get("batches", true) as { comment?: string | null } | undefined;
    if (batches) batches.comment = f.batchComments.join("\n");
    else doc.comment = f.batchComments.join("\n");
  }
  return `${header.map((h) => `# ${h}`).join("\n")}\n${doc.toString({ lineWidth: 0 })}`;
}
