import type { ServiceChoicesConfig } from "../schema/generated/policy.js";

/** The batch statuses of policy files, the words revsync thinks in (the interface only observes them). */
export const BATCH_STATUSES = ["file uploaded", "reviewed", "approved"] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** What the service's interface leaves "not shown", as one tenant does it: the literals of the approval
 *  action (the interface gives only the approve one), where the template request carries batch_name
 *  (declared a path parameter without a place in the path), and the status texts of batches (only
 *  observed). Set per environment under `service:` in revsync.yaml (docs/decisions.md, "The service's
 *  own choices"). */
export interface ServiceChoices {
  approveAction: string;
  rejectAction: string;
  templateBatchName: "query" | "path";
  /** The service's text for each of revsync's batch statuses. */
  batchStatus: Record<BatchStatus, string>;
  /** The tenant's allocation rule texts (transaction_*_range of SSP policies) and what each gives a line
   *  as its basis: transaction_price, range_top, range_bottom or mid_point. A text not listed is read by
   *  its words (src/policy-test/allocate.ts). */
  allocationRules: Record<string, string>;
  /** Where an approval literal other than revsync's default was set, for an error to point at. */
  actionSource?: { approve?: string; reject?: string };
}

/** revsync's choices where the interface is silent (docs/decisions.md): the one definition of them. */
export const DEFAULT_SERVICE_CHOICES: ServiceChoices = {
  approveAction: "Approved",
  rejectAction: "Rejected",
  templateBatchName: "query",
  batchStatus: { "file uploaded": "file uploaded", reviewed: "reviewed", approved: "approved" },
  allocationRules: {},
};

/** An environment's choices: its `service:` section, over the top-level `approvals:` of revsync.yaml
 *  (the older place of the two literals), over the defaults; REVSYNC_APPROVE_ACTION and
 *  REVSYNC_REJECT_ACTION over all of them, with or without a revsync.yaml. */
export function serviceChoices(
  service: ServiceChoicesConfig | undefined,
  approvals: { approve_action?: string; reject_action?: string } | undefined,
  env: NodeJS.ProcessEnv,
): ServiceChoices {
  const d = DEFAULT_SERVICE_CHOICES;
  const s = service?.batch_status;
  const source = (which: "approve" | "reject"): string | undefined => {
    const key = `${which}_action` as const;
    if (env[`REVSYNC_${which.toUpperCase()}_ACTION`]) return `REVSYNC_${which.toUpperCase()}_ACTION in the environment`;
    if (service?.[key]) return `service.${key} of the environment in revsync.yaml`;
    if (approvals?.[key]) return `approvals.${key} in revsync.yaml`;
    return undefined;
  };
  const approve = source("approve");
  const reject = source("reject");
  return {
    approveAction: env.REVSYNC_APPROVE_ACTION || service?.approve_action || approvals?.approve_action || d.approveAction,
    rejectAction: env.REVSYNC_REJECT_ACTION || service?.reject_action || approvals?.reject_action || d.rejectAction,
    templateBatchName: service?.template_batch_name ?? d.templateBatchName,
    batchStatus: {
      "file uploaded": s?.file_uploaded ?? d.batchStatus["file uploaded"],
      reviewed: s?.reviewed ?? d.batchStatus.reviewed,
      approved: s?.approved ?? d.batchStatus.approved,
    },
    allocationRules: { ...d.allocationRules, ...(service?.allocation_rules as Record<string, string> | undefined) },
    ...(approve || reject ? { actionSource: { ...(approve ? { approve } : {}), ...(reject ? { reject } : {}) } } : {}),
  };
}

/** A batch status as the service wrote it, in revsync's words; a text the choices do not name passes
 *  through as it is (liberal reads: plan and export show it, and never move such a batch). */
export function statusFromService(choices: ServiceChoices, status: string): string {
  for (const k of BATCH_STATUSES) if (choices.batchStatus[k] === status) return k;
  return status;
}
