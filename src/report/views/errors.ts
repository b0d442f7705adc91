import type { ErrorTransactionRecord } from "../../schema/generated/api.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

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

/** One error code of errors --summary: how many transactions have it, its message and suggested fix. */
export interface ErrorCodeRow {
  code: string;
  count: number;
  message: string;
  suggestion: string;
  missing_policy_set: string | undefined;
}

/** The error transactions the filters select: `total` as the service counts them. */
export interface ErrorList {
  total: number;
  records: ErrorTransactionRecord[];
}

export interface ErrorsView {
  summary(rows: ErrorCodeRow[], out: Sink): void;
  records(list: ErrorList, out: Sink): void;
}

const NONE = "No error transactions match.";

/** revsync errors (and errors --summary). */
export const errorsViews: Views<ErrorsView> = {
  text: async () => {
    const [{ table }, { terminalText }, { plural }] = await Promise.all([import("../table.js"), import("../escape.js"), import("../../words.js")]);
    return {
      summary: (rows, out) => {
        if (!rows.length) out.out(NONE);
        for (const r of rows) {
          out.out(`${out.paint("bold", terminalText(r.code))}  ${plural(r.count, "transaction")}: ${terminalText(r.message)}`);
          out.out(`    suggestion: ${terminalText(r.suggestion)}`);
          if (r.missing_policy_set) out.out(`    missing policy set: ${r.missing_policy_set}`);
        }
      },
      records: ({ total, records }, out) => {
        if (!records.length) return out.out(NONE);
        const shown = COLUMNS.filter((c) => c.heading);
        out.out(table([shown.map((c) => c.heading ?? ""), ...records.map((r) => shown.map((c) => c.get(r) ?? ""))]));
        out.out(`\n${plural(total, "error transaction")}.`);
      },
    };
  },
  json: async () => ({
    summary: (rows, out) => out.json({ summary: rows }),
    records: ({ total, records }, out) => out.json({ total_records: total, records }),
  }),
  csv: async () => {
    const [{ formatCsv }, { terminalText }] = await Promise.all([import("../../ssp/csv.js"), import("../escape.js")]);
    // A report, as the text and JSON views are: each cell's control characters (escape codes, newlines)
    // are shown as text wherever the CSV goes (a terminal, a CI log, a file), so no cell can steer a
    // terminal or start a line of its own; the service's text exactly is in --format json.
    const csv = (rows: string[][]): string => formatCsv(rows.map((r) => r.map(terminalText)));
    return {
      summary: (rows, out) =>
        out.raw(
          csv([
            ["code", "count", "message", "suggestion", "missing_policy_set"],
            ...rows.map((r) => [r.code, String(r.count), r.message, r.suggestion, r.missing_policy_set ?? ""]),
          ]),
        ),
      records: ({ records }, out) => out.raw(csv([COLUMNS.map((c) => c.csv), ...records.map((r) => COLUMNS.map((c) => c.get(r) ?? ""))])),
    };
  },
};
