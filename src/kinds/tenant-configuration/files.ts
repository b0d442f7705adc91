/** A tenant configuration as git holds it: the fields its policy file may set, and the rules they keep
 *  beyond the schema. */
import type { PolicyDoc, RuleContext } from "../../config/rules.js";
import { specOf } from "../../config/rules.js";

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

/** Read-only fields get the rule's message (with the updatable list) instead of the schema's "unknown field". */
export const ownWords = (pointer: string, key?: string): boolean =>
  pointer.startsWith("/spec/") && !!key && (READ_ONLY_TENANT_FIELDS.includes(key) || key === "account_segment_delimiter");

export function tenantFieldsUpdatable(docs: PolicyDoc[], ctx: Pick<RuleContext, "emit">): void {
  for (const d of docs) {
    const s = specOf<Record<string, unknown>>(d);
    if (!s || typeof s !== "object") continue;
    for (const key of Object.keys(s)) {
      if (key === "account_segment_delimiter" && !DELIMITERS.includes(String(s[key]))) {
        ctx.emit(d, `/spec/${key}`, `account_segment_delimiter must be one of ${DELIMITERS.join(" ")}, got ${JSON.stringify(s[key])}`, { rule: "delimiter" });
        continue;
      }
      if (READ_ONLY_TENANT_FIELDS.includes(key)) {
        ctx.emit(
          d,
          `/spec/${key}`,
          `${key} cannot be changed: the update API (spec 4.2) does not carry it. Updatable fields: ${UPDATABLE_TENANT_FIELDS.join(", ")}`,
          { key: true, rule: "not-updatable" },
        );
      }
    }
  }
}
