import { errorTransactions } from "../api/resources.js";
import { isDate } from "../config/values.js";
import { UserError } from "../errors.js";
import type { ErrorTransactionFilter, ErrorTransactionRecord } from "../schema/generated/api.js";
import { formatCsv } from "../ssp/csv.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { table, withClient } from "./service-command.js";
import { plural } from "../words.js";
import { terminalText } from "../report/escape.js";
import { numberOf } from "../number.js";

/** The columns of `errors`: every one in CSV (named as the spec's fields), those with a heading in the table. */
const COLUMNS: { csv: string; heading?: string; get: (r: ErrorTransactionRecord) => string | null | undefined }[] = [
  { csv: "error_id", heading: "ERROR ID", get: (r) => r.error_id },
  { csv: "error_date", heading: "DATE", get: (r) => r.error_date },
  { csv: "error_warning_code", heading: "CODE", get: (r) => r.error_warning_code },
  { csv: "error_warning_type", heading: "KIND", get: (r) => r.error_warning_type },
  { csv: "document_identifier", heading: "DOCUMENT", get: (r) => r.document_identifier },
  { csv: "request_id", get: (r) => r.request_id },
  { csv: "legal_entity", heading: "ENTITY", get: (r) => r.document_details?.legal_entity },
  { csv: "error_warning_field", heading: "FIELD", get: (r) => r.error_warning_field },
  { csv: "error_warning_message", heading: "MESSAGE", get: (r) => r.error_warning_message },
  { csv: "suggestions", get: (r) => r.suggestions },
];

// ---- error transactions (4.10)

export interface ErrorsFlags extends GlobalFlags {
  type?: string;
  kind?: string;
  code?: string;
  requestId?: string;
  financialId?: string;
  from?: string;
  to?: string;
  legalEntity?: string;
  summary?: boolean;
}

const MISSING_POLICY_SET: Record<string, string> = {
  "ERR-00015": "revenue rules: no valid revenue rule policy is available. Create the revenue rule policy set for these transactions, then reprocess them",
};

/** The error transactions filter that the flags ask for, checked: a bad flag is an error naming it. */
export function errorFilter(flags: ErrorsFlags): ErrorTransactionFilter {
  const type = (flags.type ?? "").toLowerCase();
  if (!["order", "invoice", "event", "mje"].includes(type))
    throw new UserError(`--type must be order, invoice, event or mje${flags.type ? `, got ${JSON.stringify(flags.type)}` : " (it is required)"}`);
  if (flags.kind && !["remediable", "discarded"].includes(flags.kind))
    throw new UserError(`--kind must be remediable or discarded, got ${JSON.stringify(flags.kind)}`);
  for (const [flag, v] of [
    ["--from", flags.from],
    ["--to", flags.to],
  ] as const) {
    if (v !== undefined && !isDate(v)) throw new UserError(`${flag} must be a date YYYY-MM-DD, got ${JSON.stringify(v)}`);
  }
  if (flags.from && flags.to && flags.from > flags.to) throw new UserError(`--from ${flags.from} is after --to ${flags.to}`);
  const filter: ErrorTransactionFilter = {
    transaction_type: type as ErrorTransactionFilter["transaction_type"],
    error_warning_type: flags.kind as ErrorTransactionFilter["error_warning_type"],
    error_warning_code: flags.code,
    error_request_id: flags.requestId,
    financial_id: flags.financialId,
    error_from_date: flags.from,
    error_to_date: flags.to,
    legal_entity: flags.legalEntity,
  };
  for (const k of Object.keys(filter) as (keyof ErrorTransactionFilter)[]) if (filter[k] === undefined) delete filter[k];
  return filter;
}

export async function runErrors(flags: ErrorsFlags, out: Output): Promise<number> {
  const filter = errorFilter(flags);
  return withClient(flags, out, async (core) => {
    const list = await errorTransactions.list(core, filter);
    const records: ErrorTransactionRecord[] = list.flatMap((e) => e.compliance_spec ?? []);
    if (flags.summary) {
      const groups = new Map<string, ErrorTransactionRecord[]>();
      for (const r of records) groups.set(r.error_warning_code ?? "", [...(groups.get(r.error_warning_code ?? "") ?? []), r]);
      const rows = [...groups]
        .sort((a, b) => b[1].length - a[1].length)
        .map(([code, rs]) => ({
          code,
          count: rs.length,
          message: rs[0]?.error_warning_message ?? "",
          suggestion: rs[0]?.suggestions ?? "",
          missing_policy_set: MISSING_POLICY_SET[code],
        }));
      if (flags.format === "json") out.json({ summary: rows });
      else if (flags.format === "csv")
        out.raw(
          formatCsv([
            ["code", "count", "message", "suggestion", "missing_policy_set"],
            ...rows.map((r) => [r.code, String(r.count), r.message, r.suggestion, r.missing_policy_set ?? ""]),
          ]),
        );
      else {
        if (!rows.length) out.out("No error transactions match.");
        for (const r of rows) {
          out.out(`${out.paint("bold", terminalText(r.code))}  ${plural(r.count, "transaction")}: ${terminalText(r.message)}`);
          out.out(`    suggestion: ${terminalText(r.suggestion)}`);
          if (r.missing_policy_set) out.out(`    missing policy set: ${r.missing_policy_set}`);
        }
      }
      return 0;
    }
    // total_records is text in the service's answer; one that is not a number by the one number rule
    // (src/number.ts), an empty one included, counts as unknown.
    const total = numberOf(list[0]?.total_records) ?? records.length;
    if (flags.format === "json") out.json({ total_records: total, records });
    else if (flags.format === "csv") {
      out.raw(formatCsv([COLUMNS.map((c) => c.csv), ...records.map((r) => COLUMNS.map((c) => c.get(r) ?? ""))]));
    } else if (!records.length) out.out("No error transactions match.");
    else {
      const shown = COLUMNS.filter((c) => c.heading);
      out.out(table([shown.map((c) => c.heading ?? ""), ...records.map((r) => shown.map((c) => c.get(r) ?? ""))]));
      out.out(`\n${plural(total, "error transaction")}.`);
    }
    return 0;
  });
}
