import { createHash } from "node:crypto";
import { canonicalHash } from "../canonical-json.js";
import type { AllocationImpact, ImpactEntry } from "../policy-test/run.js";
import type { SspCreateBody, TenantConfigurationUpdateItem } from "../schema/generated/api.js";
import type { FieldDiff } from "../shared/normalize.js";

/** What a plan entry is. The first four are writes apply makes; the rest are shown, never applied:
 *  `blocked` a write revsync refuses to make, `not_in_git` (said "not in git") something the service
 *  holds that git does not, `unsupported` a difference the interface cannot write. */
export type Action = "create" | "update" | "review" | "approve" | "blocked" | "not_in_git" | "unsupported";

/** The actions apply performs. */
export const APPLIED_ACTIONS: readonly Action[] = ["create", "update", "review", "approve"];

/** Whether apply acts on this entry (the others are shown with their reason and never sent). */
export const isApplied = (c: { action: Action }): boolean => APPLIED_ACTIONS.includes(c.action);

/** How an action is written in text and markdown ("not in git"); JSON keeps the identifier. */
export const actionWords = (a: Action): string => a.replace(/_/g, " ");
export type DriftClass = "changed" | "unmanaged" | "unmanaged_batch" | "missing" | "batch_status" | "batch_values";

export const PLAN_FORMAT_VERSION = "1";

/** What apply sends for a change, fixed at plan time so that apply does exactly what was reviewed. */
export type Payload =
  | { kind: "update"; compliance_id: string; compliance_name: string; unique_key: string; item: TenantConfigurationUpdateItem }
  | { kind: "create"; body: SspCreateBody; hierarchy_no: number }
  | {
      kind: "batch";
      compliance_id: string | null;
      policy: string;
      batch: string;
      /** The batch's file as the plan saw it, and a checksum of its values (valuesChecksum): apply moves
       *  the batch only while both still hold. Null for a batch the plan's own create uploads. */
      file_id?: string | null;
      values_checksum?: string | null;
    };

/** What a review or approve moves forward: the values, summed up for the reviewer. */
export interface ValuesSummary {
  /** git's values file, as shown from the working directory. */
  file: string;
  rows: number;
  products: number;
  currencies: string[];
  /** The earliest effective_start_date and the latest effective_end_date. */
  from: string;
  to: string;
}

export interface Change {
  address: string;
  action: Action;
  before: unknown;
  after: unknown;
  diff: FieldDiff[];
  /** The live envelope's version this change was computed from (null for a create). */
  version_id: string | null;
  last_modified_on: number | null;
  reason?: string;
  source?: string;
  payload?: Payload;
  /** A review or approve: the values it moves forward. */
  values?: ValuesSummary;
  /** Values that differ, row by row: the diff shows the first `shown` rows of `total`. */
  diff_rows?: { shown: number; total: number };
}

export interface Plan {
  format_version: string;
  environment: string;
  created_at: string;
  /** Where the plan was made: apply PLANFILE writes only there (README, Security). */
  base_url: string;
  auth_url: string;
  realm: string;
  /** The signed-in user the plan was made as; informational. */
  user: string | null;
  targets: string[];
  changes: Change[];
  summary: Record<Action, number>;
  /** Things the reader should know that are not changes (said once each). */
  notes: string[];
  /** With policy tests: what the plan does to them (absent without tests). A plan saved by an earlier
   *  revsync holds the cases alone, as a list. */
  impact?: PlanImpact | ImpactEntry[];
  /** With four_eyes (revsync.yaml): who prepared each approve's batch and who the approves would be sent
   *  as (absent without four_eyes). */
  four_eyes?: PlanFourEyes;
  /** sha256 of every other field of the plan (planChecksum). */
  checksum: string;
}

/** What a plan does to the policy tests: the cases whose matched policy or SSP changes, the contracts
 *  whose allocation changes (most revenue moved first), and the revenue moved across them, per currency. */
export interface PlanImpact {
  cases: ImpactEntry[];
  allocation: AllocationImpact[];
  moved: Record<string, number>;
  /** Fields of a policy the impact meets that the service does not show: taken from git on both sides
   *  (one note per policy). */
  notes?: string[];
}

/** One approve under four eyes: who prepared its batch, and whether the rule would block it as the plan
 *  sees things (the approver identity at apply decides). */
export interface FourEyesApprove {
  address: string;
  /** The service's reviewer of the batch (updated_by of a batch it shows reviewed); null when this
   *  plan's own review makes it (reviewed_in_plan) or the service names nobody. */
  reviewed_by: string | null;
  reviewed_in_plan: boolean;
  /** The policy's creator (the envelope's created_by); null when this plan creates the policy
   *  (created_in_plan) or the service names nobody. */
  policy_created_by: string | null;
  created_in_plan: boolean;
  /** The approve would be sent as its batch's reviewer or its policy's creator, or as a user nobody can
   *  name: apply would block it. */
  blocked: boolean;
}

/** A plan's four-eyes view (four_eyes: true): the sign-in (creates, updates, reviews), the approver
 *  identity (approves) when one is configured, and each approve. */
export interface PlanFourEyes {
  sign_in: string | null;
  approver: string | null;
  approver_configured: boolean;
  approves: FourEyesApprove[];
}

/** A plan's impact, whichever revsync saved it. */
export function impactOf(plan: Pick<Plan, "impact">): PlanImpact | undefined {
  const i = plan.impact;
  if (!i) return undefined;
  return Array.isArray(i) ? { cases: i, allocation: [], moved: {} } : i;
}

/** The checksum of everything a reviewer is shown: every field of the plan but the checksum itself (the
 *  binding, the changes, the summary, the impact, the notes, who made it and when, the targets). A saved
 *  plan whose checksum does not match was edited or corrupted, and is refused. It is no signature: anyone
 *  can compute it again; what holds an edited payload to the reviewed diff is apply's own check. */
export function planChecksum(plan: Omit<Plan, "checksum"> & { checksum?: string }): string {
  const { checksum: _omit, ...rest } = plan;
  return canonicalHash({ revsync_plan_checksum: 2, plan: rest });
}

/** The checksum an older revsync wrote: of the binding and the changes alone. A plan that carries it was
 *  made before the checksum covered the rest, and is refused with words that say so. */
export function legacyPlanChecksum(plan: Pick<Plan, "environment" | "base_url" | "auth_url" | "realm" | "changes">): string {
  const text = JSON.stringify([plan.environment, plan.base_url, plan.auth_url, plan.realm, plan.changes]);
  return `sha256:${createHash("sha256").update(text).digest("hex")}`;
}

export interface DriftItem {
  address: string;
  class: DriftClass;
  diff: FieldDiff[];
  message: string;
  /** Who changed it last, and when (ISO), from the live envelope of the policy concerned; null when the
   *  service does not hold it (missing) or does not say. */
  modified_by?: string | null;
  modified_on?: string | null;
  /** Values that differ, row by row (batch_values): the diff shows the first `shown` rows of `total`. */
  diff_rows?: { shown: number; total: number };
}

export interface DriftReport {
  format_version: string;
  environment: string;
  created_at: string;
  drift: DriftItem[];
  summary: Record<DriftClass, number>;
  /** What could not be compared (the service does not show it): one note per field and policy. */
  notes?: string[];
  /** Accepted drift (drift.ignore of revsync.yaml): listed, never in the exit code. */
  ignored?: (DriftItem & { reason: string; rule: string })[];
}

export const ACTIONS: Action[] = ["create", "update", "review", "approve", "blocked", "not_in_git", "unsupported"];
export const DRIFT_CLASSES: DriftClass[] = ["changed", "unmanaged", "unmanaged_batch", "missing", "batch_status", "batch_values"];

export function summarize<K extends string>(keys: K[], items: { [k: string]: unknown }[], field: string): Record<K, number> {
  const out = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  for (const i of items) out[i[field] as K] = (out[i[field] as K] ?? 0) + 1;
  return out;
}
