import type { ApiCore } from "../api/core.js";
import { errorTransactions } from "../api/resources.js";
import { isDate } from "../config/values.js";
import { numberOf } from "../number.js";
import type { ErrorCodeRow } from "../report/views/errors.js";
import type { ErrorTransactionFilter, ErrorTransactionRecord } from "../schema/generated/api.js";

const MISSING_POLICY_SET: Record<string, string> = {
  "ERR-00015": "revenue rules: no valid revenue rule policy is available. Create the revenue rule policy set for these transactions, then reprocess them",
};

/** revsync errors: the error transactions the filter finds, with the total the service counts, or
 *  (`summary`) grouped by error code. */
export async function errorTransactionReport(
  core: ApiCore,
  filter: ErrorTransactionFilter,
  summary: boolean,
): Promise<{ summary: ErrorCodeRow[] } | { records: { total: number; records: ErrorTransactionRecord[] } }> {
  const list = await errorTransactions.list(core, filter);
  const records = byDate(list.flatMap((e) => e.compliance_spec ?? []));
  if (summary) return { summary: byCode(records) };
  // total_records is text in the service's answer; one that is not a number by the one number rule
  // (src/number.ts), an empty one included, counts as unknown.
  return { records: { total: numberOf(list[0]?.total_records) ?? records.length, records } };
}

/** The transactions oldest first, by error_date, as a reader of a date range expects (the interface promises
 *  no order); those of one date in the service's order, and any without a date (YYYY-MM-DD) after the rest. */
function byDate(records: ErrorTransactionRecord[]): ErrorTransactionRecord[] {
  const key = (r: ErrorTransactionRecord): string => (isDate(r.error_date ?? "") ? (r.error_date as string) : "~");
  return records
    .map((r, i) => ({ r, i, k: key(r) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.i - b.i))
    .map((x) => x.r);
}

/** errors --summary: the transactions by error code, the most first, each with the first one's message
 *  and suggested fix. */
function byCode(records: ErrorTransactionRecord[]): ErrorCodeRow[] {
  const groups = new Map<string, ErrorTransactionRecord[]>();
  for (const r of records) groups.set(r.error_warning_code ?? "", [...(groups.get(r.error_warning_code ?? "") ?? []), r]);
  return [...groups]
    .sort((a, b) => b[1].length - a[1].length)
    .map(([code, rs]) => ({
      code,
      count: rs.length,
      message: rs[0]?.error_warning_message ?? "",
      suggestion: rs[0]?.suggestions ?? "",
      missing_policy_set: MISSING_POLICY_SET[code],
    }));
}
