/** The error transactions (spec 4.10): a search, sent as a POST, that changes nothing. */
import type { ErrorTransactionFilter } from "../schema/generated/api.js";
import { json, only, type ApiResource } from "./resource.js";
import { EmuError, validate } from "./service.js";
import type { TenantState } from "./state.js";

export const errorTransactionsResource: ApiResource = {
  answer(req) {
    if (req.path !== "/apis/errortransactions/v1/" && req.path !== "/apis/errortransactions/v1") return undefined;
    only(req, "POST");
    return json(errorTransactions(req.t, req.body()));
  },
  readsOnly: (_method, path) => path.startsWith("/apis/errortransactions/"),
};

export function errorTransactions(t: TenantState, raw: unknown): unknown {
  const f = validate<ErrorTransactionFilter>("ErrorTransactionFilter", raw);
  if (f.error_from_date && f.error_to_date && f.error_from_date > f.error_to_date) {
    throw new EmuError(400, "error_from_date is after error_to_date", [{ field: "error_from_date", message: "must not be after error_to_date" }]);
  }
  const records = t.errorTransactions.records.filter(
    (r) =>
      r.transaction_type === f.transaction_type.toUpperCase() &&
      (f.error_warning_type === undefined || r.error_warning_type === f.error_warning_type) &&
      (f.error_warning_code === undefined || r.error_warning_code === f.error_warning_code) &&
      (f.error_request_id === undefined || r.request_id === f.error_request_id) &&
      (f.financial_id === undefined || r.document_identifier === f.financial_id) &&
      (f.error_from_date === undefined || (r.error_date ?? "") >= f.error_from_date) &&
      (f.error_to_date === undefined || (r.error_date ?? "") <= f.error_to_date) &&
      (f.legal_entity === undefined || r.document_details?.legal_entity === f.legal_entity),
  );
  return [
    {
      compliance_id: t.errorTransactions.compliance_id,
      compliance_name: t.errorTransactions.compliance_name,
      compliance_spec: records,
      total_records: String(records.length),
    },
  ];
}
