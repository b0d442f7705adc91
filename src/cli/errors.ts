import { isDate } from "../config/values.js";
import { UserError } from "../errors.js";
import type { ErrorTransactionFilter } from "../schema/generated/api.js";
import { errorTransactionReport } from "../session/error-transactions.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { withClient } from "./service-command.js";
import { pickView } from "../report/view.js";
import { errorsViews } from "../report/views/errors.js";

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
  const view = await pickView(errorsViews, flags.format);
  const filter = errorFilter(flags);
  return withClient(flags, out, async (core) => {
    const found = await errorTransactionReport(core, filter, !!flags.summary);
    if ("summary" in found) view.summary(found.summary, out);
    else view.records(found.records, out);
    return 0;
  });
}
