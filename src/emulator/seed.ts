import type { Condition, ErrorTransactionRecord, SspValue, TenantConfigurationItem } from "../schema/generated/api.js";
import { asTheServiceHoldsIt, valuesToCsv } from "../ssp/csv.js";
import type { EmulatorState, StoredApproval, StoredBatch, StoredSspPolicy, TenantState } from "./state.js";

export type SeedName = "demo" | "empty" | "multi-env";

export const SEEDS: SeedName[] = ["demo", "empty", "multi-env"];

/** The demo tenant's fixed sign-in, documented in the README. */
export const DEMO = {
  realm: "demo",
  environment: "sandbox",
  clientId: "revsync",
  clientSecret: "demo-secret",
  users: {
    alice: { password: "alice-password", roles: ["Revenue Analyst", "Revenue Approver"], email: "alice@demo.example" },
    bob: { password: "bob-password", roles: ["Revenue Approver"], email: "bob@demo.example" },
    carol: { password: "carol-password", roles: ["Revenue Analyst"], email: "carol@demo.example" },
  },
} as const;

const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z: seeded records are dated from here.

function tenantConfigItem(): TenantConfigurationItem {
  return {
    account_segment_delimiter: "-",
    ar_accounting: true,
    augment_currency_rates: false,
    bundle_functionality: true,
    can_delete: false,
    carves_allocation: false,
    contract_asset_journal_method: null,
    contract_asset_segment: null,
    cost_enabled: false,
    cost_practical_expedient: 12,
    create_revenue_schedules: true,
    created_at: T0,
    created_by: "setup",
    distribution_method: "Days in Calendar Period",
    egress_hold: false,
    fx_adjustment_method: null,
    fx_adjustments: true,
    guid: "6f1c2a8e-4b7d-4e0a-9c3f-2d5b8a1e7c40",
    ingest_hold: false,
    is_user_defined: true,
    journal_details_egress: true,
    journal_transfer_by_ofid: false,
    journals_run_currency: "USD",
    lt_st_accounting: true,
    manual_journal: true,
    manual_journal_contra_account: "MJ-CONTRA-000",
    multi_currency_revenue_contracts: false,
    prorate_method: "Daily",
    rc_activities_egress: true,
    rc_distributions_egress: true,
    reprocess_existing_ofid: false,
    crm_multicurrorg_enabled: false,
    snowman_enabled: false,
    ui_mode: "Classic",
    updated_at: T0,
    updated_by: "setup",
  };
}

function values(prefix: string, products: number, start: string, end: string, offset = 0): SspValue[] {
  const out: SspValue[] = [];
  let n = 0;
  for (let p = 0; p < products; p++) {
    for (const currency of ["USD", "EUR"]) {
      n++;
      const mid = 100 + ((p * 7 + offset) % 25);
      out.push({
        product_id: `${prefix}-${1000 + p * 10}`,
        currency_code: currency,
        value_type: "Percent",
        below_mid_point: mid - 10,
        mid_point: mid,
        above_mid_point: mid + 10,
        effective_start_date: start,
        effective_end_date: end,
        ssp_value_id: `SV${prefix}${start.replace(/-/g, "")}${String(n).padStart(4, "0")}`,
      });
    }
  }
  return out;
}

interface PolicySeed {
  id: string;
  name: string;
  method: "upload" | "formula" | "calculator";
  hierarchy: number;
  expression: string;
  identifiers: string[];
  floor: number;
  ceiling: number;
  when: Condition[];
  batches: { name: string; status: string; file: string; values: SspValue[]; start: string; end: string }[];
}

function policy(seed: PolicySeed, files: Record<string, string>): StoredSspPolicy {
  const stamp = { created_at: T0, created_by: "alice", updated_at: T0, updated_by: "alice" };
  const batches: StoredBatch[] = seed.batches.map((b, i) => {
    const fileId = seed.method === "upload" ? `FILE-${seed.id}-${i + 1}` : null;
    if (fileId) files[fileId] = valuesToCsv(b.values, asTheServiceHoldsIt);
    return {
      ...stamp,
      can_delete: b.status !== "approved",
      is_user_defined: true,
      entity_type: "batch",
      name: b.name,
      batch_name: b.name,
      policy_name: seed.name,
      method: seed.method,
      status: b.status,
      file_id: fileId,
      file_name: fileId ? b.file : null,
      effective_start_date: b.start,
      effective_end_date: b.end,
      timestamp: T0,
      ssp_values: b.values,
    };
  });
  return {
    compliance_id: seed.id,
    compliance_name: seed.name,
    created_by: "alice",
    created_on: T0,
    last_modified_by: "alice",
    last_modified_on: T0,
    policy_type: "SSP",
    status: "Active",
    unique_key: `${seed.id.toLowerCase()}-5a1e-4c2b-8f3d-000000000001`,
    version_id: "1",
    item: {
      ...stamp,
      active: true,
      can_delete: false,
      ceiling_percentage: seed.ceiling,
      floor_percentage: seed.floor,
      data_identifiers: seed.identifiers,
      entity_type: "policy",
      expression: seed.expression,
      hierarchy_no: seed.hierarchy,
      is_user_defined: true,
      method: seed.method,
      name: seed.name,
      transaction_above_range: "Cap at ceiling",
      transaction_below_range: "Raise to floor",
      transaction_mid_range: "Use transaction price",
      type: "SSP",
      when: seed.when,
      apply_ssppercent_on: "List Price",
    },
    batches,
  };
}

function demoTenant(): TenantState {
  const files: Record<string, string> = {};
  const ssp = [
    policy(
      {
        id: "SSP-HW",
        name: "Hardware SSP",
        method: "upload",
        hierarchy: 10,
        expression: "",
        identifiers: ["product_id", "currency_code"],
        floor: 85,
        ceiling: 115,
        when: [
          { field_name: "product_family", operator: "equality", value: "Hardware" },
          { field_name: "legal_entity", operator: "in", value: "US01,DE01" },
        ],
        batches: [
          {
            name: "FY25-H2",
            status: "approved",
            file: "hardware-fy25-h2.csv",
            values: values("HW", 6, "2025-07-01", "2025-12-31"),
            start: "2025-07-01",
            end: "2025-12-31",
          },
          {
            name: "FY26-H1",
            status: "reviewed",
            file: "hardware-fy26-h1.csv",
            values: values("HW", 6, "2026-01-01", "2026-06-30", 3),
            start: "2026-01-01",
            end: "2026-06-30",
          },
          {
            name: "FY26-H2",
            status: "file uploaded",
            file: "hardware-fy26-h2.csv",
            values: values("HW", 6, "2026-07-01", "2026-12-31", 5),
            start: "2026-07-01",
            end: "2026-12-31",
          },
        ],
      },
      files,
    ),
    policy(
      {
        id: "SSP-SW",
        name: "Software Subscriptions SSP",
        method: "upload",
        hierarchy: 20,
        expression: "",
        identifiers: ["product_id"],
        floor: 80,
        ceiling: 120,
        when: [{ field_name: "product_family", operator: "equality", value: "Software" }],
        batches: [
          {
            name: "FY26-Q1",
            status: "file uploaded",
            file: "software-fy26-q1.csv",
            values: values("SW", 4, "2026-01-01", "2026-03-31", 1),
            start: "2026-01-01",
            end: "2026-03-31",
          },
          {
            name: "FY26-Q2",
            status: "approved",
            file: "software-fy26-q2.csv",
            values: values("SW", 4, "2026-04-01", "2026-06-30", 2),
            start: "2026-04-01",
            end: "2026-06-30",
          },
        ],
      },
      files,
    ),
    policy(
      {
        id: "SSP-PS",
        name: "Professional Services SSP",
        method: "formula",
        hierarchy: 30,
        expression: "unit_list_price * 0.92",
        identifiers: ["product_id"],
        floor: 90,
        ceiling: 110,
        when: [{ field_name: "product_family", operator: "equality", value: "Services" }],
        batches: [],
      },
      files,
    ),
    policy(
      {
        id: "SSP-SUP",
        name: "Support Renewals SSP",
        method: "calculator",
        hierarchy: 40,
        expression: "",
        identifiers: ["product_id", "customer_tier"],
        floor: 75,
        ceiling: 125,
        when: [{ field_name: "product_name", operator: "starts with", value: "Support" }],
        batches: [
          { name: "FY26-CALC", status: "reviewed", file: "", values: values("SUP", 3, "2026-01-01", "2026-12-31"), start: "2026-01-01", end: "2026-12-31" },
        ],
      },
      files,
    ),
  ];
  const approval = (n: number, by: string, type: string, file: string, rows: number, hoursAgo: number): StoredApproval => ({
    approval_id: `APR-${String(n).padStart(4, "0")}`,
    approval_comments: null,
    approved_by: null,
    approved_on: null,
    approver_role: null,
    context: type === "ORDER" ? "Orders" : type === "INVOICE" ? "Invoices" : "Events",
    file_date_format: "MM/DD/YYYY",
    file_format: "csv",
    file_id: `UPL-${String(n).padStart(4, "0")}`,
    file_name: file,
    uploaded_file_name: file,
    ingested_transaction_type: type,
    status: "Pending Approval",
    total_rows_received: rows,
    upload_time: T0 + 86_400 * 300 - hoursAgo * 3600,
    upload_type: "MANUAL",
    uploaded_by: by,
  });
  const approved = approval(6, "carol", "ORDER", "orders-2026-10-01.csv", 120, 900);
  approved.status = "Approved";
  approved.approved_by = "bob";
  approved.approved_on = T0 + 86_400 * 275;
  approved.approval_comments = "Checked against the CRM export";
  approved.approver_role = "Revenue Approver";
  return {
    realm: DEMO.realm,
    environment: DEMO.environment,
    clients: { [DEMO.clientId]: DEMO.clientSecret },
    users: Object.fromEntries(Object.entries(DEMO.users).map(([k, v]) => [k, { password: v.password, roles: [...v.roles], email: v.email }])),
    tenantConfigurations: [
      {
        compliance_id: "TC-0001",
        compliance_name: "Default Tenant Configuration",
        compliance_spec: [tenantConfigItem()],
        created_by: "setup",
        created_on: T0,
        last_modified_by: "setup",
        last_modified_on: T0,
        policy_type: "Tenant Configuration",
        status: "Active",
        unique_key: "0b7e6d3c-91a2-4f5e-8d17-3c9a2b6e4f01",
        version_id: "1",
      },
    ],
    ssp,
    files,
    approvals: {
      enabled: true,
      roles: ["Revenue Approver"],
      records: [
        approval(1, "alice", "ORDER", "orders-2026-10-27.csv", 1480, 30),
        approval(2, "alice", "INVOICE", "invoices-2026-10-27.csv", 955, 29),
        approval(3, "carol", "ORDER", "orders-2026-10-28.csv", 1512, 6),
        approval(4, "carol", "EVENT", "events-usage-2026-10.csv", 40210, 5),
        approval(5, "alice", "ORDER", "orders-emea-2026-10-28.csv", 312, 2),
        approved,
      ],
    },
    errorTransactions: { compliance_id: "ERR-POLICY-1", compliance_name: "Error Transactions", records: errorRecords() },
  };
}

function errorRecords(): ErrorTransactionRecord[] {
  const rows: [string, string, "remediable" | "discarded", string, string, string, string, string][] = [
    // code, type, kind, date, request, financial id, legal entity, field
    ["ERR-00015", "ORDER", "remediable", "2026-10-01", "REQ-1001", "OF-50001", "US01", "revenue_rule"],
    ["ERR-00015", "ORDER", "remediable", "2026-10-03", "REQ-1001", "OF-50002", "US01", "revenue_rule"],
    ["ERR-00015", "ORDER", "remediable", "2026-10-15", "REQ-1007", "OF-50107", "DE01", "revenue_rule"],
    ["ERR-00003", "ORDER", "remediable", "2026-10-05", "REQ-1002", "OF-50010", "US01", "transaction_currency"],
    ["ERR-00021", "ORDER", "discarded", "2026-10-10", "REQ-1004", "OF-50033", "DE01", "product_id"],
    ["ERR-00021", "ORDER", "discarded", "2026-10-31", "REQ-1009", "OF-50201", "US01", "product_id"],
    ["ERR-00008", "INVOICE", "remediable", "2026-10-12", "REQ-2001", "BF-70001", "US01", "bill_date"],
    ["ERR-00015", "INVOICE", "remediable", "2026-10-20", "REQ-2004", "BF-70020", "DE01", "revenue_rule"],
    ["ERR-00030", "EVENT", "discarded", "2026-10-22", "REQ-3001", "EV-90001", "US01", "event_date"],
    ["ERR-00041", "MJE", "remediable", "2026-10-25", "REQ-4001", "MJ-10001", "US01", "account"],
  ];
  const messages: Record<string, [string, string]> = {
    "ERR-00015": ["No valid revenue rule policy is available", "Create the revenue rule policy and reprocess the transaction"],
    "ERR-00003": ["Transaction currency is not an active currency", "Activate the currency in the currencies policy and reprocess"],
    "ERR-00021": ["Product does not exist in the product catalog", "Correct the product_id and upload the line again"],
    "ERR-00008": ["Bill date is before the order date", "Correct the bill date and reprocess"],
    "ERR-00030": ["Event date falls in a closed period", "Open the period or correct the event date"],
    "ERR-00041": ["Account segment is not valid", "Correct the account and reprocess"],
  };
  return rows.map(([code, type, kind, date, request, fid, entity, field], i) => {
    const [message, suggestion] = messages[code] ?? ["Unknown error", ""];
    const [y, m, d] = date.split("-");
    return {
      bg_run_id: `BG-${8800 + i}`,
      document_details: {
        BUNDLE_CONFIG_KEY: "",
        Cost_Amount: "0",
        Deferred_Cost_Account: "",
        Recognized_Cost_Account: "",
        amendment_reason: "",
        billing_revenue_accrual: false,
        carves_eligible: true,
        carves_liability_segment: "2400",
        carves_revenue_segment: "4000",
        contract_liability_segment: "2300",
        contract_revenue_segment: "4100",
        customer_id: `CUST-${300 + i}`,
        customer_name: ["Northwind Traders", "Contoso Ltd", "Fabrikam GmbH", "Tailspin Toys"][i % 4] ?? "",
        discount_amount: "0.00",
        discount_percent: "0",
        functional_currency: entity === "DE01" ? "EUR" : "USD",
        functional_exchange_rate: "1",
        global_currency: "USD",
        global_exchange_rate: entity === "DE01" ? "1.08" : "1",
        legal_entity: entity,
        order_date: `${m}/${d}/${y}`,
        order_financial_id: fid,
        order_number: `SO-${20000 + i}`,
        order_quantity: "1",
        parent_order_reference: "",
        po_number: `PO-${4000 + i}`,
        product_id: `HW-${1000 + (i % 6) * 10}`,
        product_name: "Edge Gateway",
        revenue_end_date: `12/31/${y}`,
        revenue_start_date: `${m}/${d}/${y}`,
        source_system: "CRM",
        ssp_date: date,
        total_list_price: "1200.00",
        total_sell_price: "1100.00",
        transaction_currency: entity === "DE01" ? "EUR" : "USD",
        transaction_type: type,
        unit_list_price: "1200.00",
        unit_sell_price: "1100.00",
        usage_bookings: false,
      },
      document_identifier: fid,
      error_date: date,
      error_id: `E-${String(i + 1).padStart(5, "0")}`,
      error_warning_code: code,
      error_warning_field: field,
      error_warning_message: message,
      error_warning_type: kind,
      request_id: request,
      suggestions: suggestion,
      transaction_type: type,
    };
  });
}

function emptyTenant(): TenantState {
  const t = demoTenant();
  return {
    ...t,
    ssp: [],
    files: {},
    approvals: { enabled: true, roles: ["Revenue Approver"], records: [] },
    errorTransactions: { ...t.errorTransactions, records: [] },
  };
}

/** demo: the demo tenant. empty: its configuration and users only. multi-env: the two tenants that
 *  examples/multi-env names, each a copy of the demo tenant: realm acme-sandbox (served at the root)
 *  and realm acme (served under /tenants/acme). */
function buildState(name: SeedName): EmulatorState {
  if (name === "multi-env") {
    const sandbox = { ...demoTenant(), realm: "acme-sandbox", environment: "sandbox" };
    const production = { ...demoTenant(), realm: "acme", environment: "production" };
    return { version: 1, seq: 1000, tenants: [sandbox, production], tokens: {} };
  }
  return { version: 1, seq: 1000, tenants: [name === "demo" ? demoTenant() : emptyTenant()], tokens: {} };
}

/** Each seed's state as JSON, built once: a seed is fixed data (no clock, nothing random) of plain JSON
 *  values, and the suite resets the emulator some thousand times; parsing the text is a fifth of
 *  building the state anew (its CSV files, its values), and each parse is a state of its own. */
const seedTexts = new Map<SeedName, string>();

/** A new state of seed `name`, shared with no other (the emulator changes it in place). */
export function seedState(name: SeedName): EmulatorState {
  let text = seedTexts.get(name);
  if (text === undefined) {
    text = JSON.stringify(buildState(name));
    seedTexts.set(name, text);
  }
  return JSON.parse(text) as EmulatorState;
}
