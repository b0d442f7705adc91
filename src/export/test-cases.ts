/** revsync test record's use case, its pure part: the order lines of the service's error transactions
 *  as policy test cases that pin the routing the service's policies give them today, and the test file
 *  that holds them (the service's text, as export writes it: text for every reader). */
import { Document, isMap, isSeq, type YAMLMap } from "yaml";
import { matchLine, showSsp, type PolicyModel } from "../policy-test/evaluate.js";
import { lineProblems, type Line } from "../policy-test/line.js";
import type { ErrorTransactionFilter, ErrorTransactionRecord } from "../schema/generated/api.js";
import { quotedWhereNeeded } from "./mapping.js";

/** What is recorded: which errors, and which fields masked or left out. */
export interface RecordAsked {
  filter: ErrorTransactionFilter;
  mask: Set<string>;
  omit: Set<string>;
}

/** Fields of an order document that name a person or a customer: the summary says when a recorded
 *  file holds them as the service gave them. */
export const PERSONAL = ["customer_name", "customer_id", "po_number"];

/** A field whose name says it holds a credential is never written, whatever the service sends. */
const CREDENTIAL = /secret|passw(or)?d|token|api_?key|credential|authori[sz]ation|bearer/i;

/** One order document as a test line: its fields as the service wrote them (text, numbers, booleans),
 *  without credentials and the fields asked to be left out, the masked ones replaced by a pseudonym
 *  that is the same for the same value (so equal values stay equal). */
function lineOf(
  details: Record<string, unknown>,
  omit: Set<string>,
  mask: Set<string>,
  pseudonyms: Map<string, Map<string, string>>,
  dropped: Set<string>,
): Line {
  const line: Line = {};
  for (const [k, v] of Object.entries(details)) {
    if (omit.has(k)) continue;
    if (CREDENTIAL.test(k)) {
      dropped.add(k);
      continue;
    }
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") continue;
    if (mask.has(k)) {
      const seen = pseudonyms.get(k) ?? new Map<string, string>();
      pseudonyms.set(k, seen);
      const key = String(v);
      if (!seen.has(key)) seen.set(key, `masked-${seen.size + 1}`);
      line[k] = seen.get(key) as string;
    } else line[k] = v;
  }
  return line;
}

/** A recorded case: the line, and the routing it pins. */
export interface RecordedCase {
  name: string;
  line: Line;
  expect: { policy: string | null; ssp?: number };
}

/** The cases recorded, each with the comment above it (the error it came from, its routing in words),
 *  and what was left out and why. */
export interface Recorded {
  cases: RecordedCase[];
  comments: string[];
  same: number;
  withoutDocument: number;
  /** What was left out, and why, in the order it was found. */
  warnings: string[];
}

/** Each record's order line as a case, once per distinct line: a line without a document, one that is
 *  not a valid line, or whose routing cannot be told today, is left out (said). */
export function recordCases(records: ErrorTransactionRecord[], ordered: PolicyModel[], { mask, omit }: RecordAsked): Recorded {
  const pseudonyms = new Map<string, Map<string, string>>();
  const dropped = new Set<string>();
  const seen = new Set<string>();
  const recorded: Recorded = { cases: [], comments: [], same: 0, withoutDocument: 0, warnings: [] };
  for (const r of records) {
    const details = r.document_details as Record<string, unknown> | undefined;
    if (!details || typeof details !== "object") {
      recorded.withoutDocument++;
      continue;
    }
    const line = lineOf(details, omit, mask, pseudonyms, dropped);
    const key = JSON.stringify(line);
    if (seen.has(key)) {
      recorded.same++;
      continue;
    }
    seen.add(key);
    const id = r.error_id ?? `record ${recorded.cases.length + 1}`;
    const bad = lineProblems(line);
    if (bad.length) {
      recorded.warnings.push(`${id} left out: its ${bad.map((b) => `${b.field} ${b.message}`).join("; ")}`);
      continue;
    }
    const got = matchLine(ordered, line);
    if (got.error) {
      recorded.warnings.push(`${id} left out: its routing cannot be told today (${got.error})`);
      continue;
    }
    const product = typeof line.product_id === "string" ? ` ${line.product_id}` : "";
    recorded.comments.push(
      ` ${[r.error_warning_code, r.error_date, r.error_warning_type].filter(Boolean).join(", ")}: ${got.policy === null ? "meets no policy" : `${got.policy}, SSP ${showSsp(got.ssp)}`}${got.note ? ` (${got.note})` : ""}`,
    );
    recorded.cases.push({ name: `${id}${product}`, line, expect: { policy: got.policy, ...(got.ssp !== null ? { ssp: Number(got.ssp.toFixed(6)) } : {}) } });
  }
  if (dropped.size) recorded.warnings.push(`left out of every line, because their names say they hold credentials: ${[...dropped].join(", ")}`);
  return recorded;
}

/** A field masked or left out that a policy tests: the recorded routing is that of the line as written. */
export function testedWarnings(policies: PolicyModel[], { mask, omit }: RecordAsked): string[] {
  const warnings: string[] = [];
  for (const f of [...mask, ...omit]) {
    const by = policies.filter((p) => p.when.some((c) => c.field_name === f)).map((p) => p.name);
    if (by.length)
      warnings.push(
        `${f} is ${mask.has(f) ? "masked" : "left out"}, but ${by.join(", ")} test${by.length === 1 ? "s" : ""} it: the recorded routing is that of the line as written`,
      );
  }
  return warnings;
}

/** The test file: a header saying where the cases came from, then the cases, each with its comment. */
export function testFileText(envName: string, { filter, mask, omit }: RecordAsked, { cases, comments }: Recorded): string {
  const when = new Date().toISOString().slice(0, 10);
  const filters = Object.entries(filter)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(", ");
  const header = [
    `Recorded by revsync test record --from-errors on ${when}, from the error transactions of environment ${envName} (${filters}).`,
    "Each case is an order line as the service wrote it (spec 4.10 document_details) and pins the policy, and the SSP,",
    "that the service's policies gave it then. The date for batch values is the first of date, ssp_date, order_date a line has.",
    ...(mask.size ? [`Masked: ${[...mask].join(", ")}.`] : []),
    ...(omit.size ? [`Left out: ${[...omit].join(", ")}.`] : []),
  ];
  const doc = new Document({
    apiVersion: "revsync/v1",
    kind: "SspPolicyTest",
    metadata: { name: `Recorded order lines (${envName}, ${when})` },
    cases,
  });
  // The service's text as text for every reader: a date stays text for a YAML 1.1 reader (ajv-cli).
  quotedWhereNeeded(doc.contents);
  const seq = doc.get("cases", true);
  if (isSeq(seq)) {
    seq.items.forEach((item, i) => {
      if (!isMap(item)) return;
      item.commentBefore = comments[i];
      const expect = item.get("expect", true) as YAMLMap | undefined;
      if (expect) expect.flow = true;
    });
  }
  return `${header.map((h) => `# ${h}`).join("\n")}\n${doc.toString({ lineWidth: 0 })}`;
}
