import { createHash } from "node:crypto";
import { canonicalHash } from "../canonical-json.js";
import type { AllocationImpact, ImpactEntry } from "../policy-test/run.js";
import type { PlanGuardrails } from "../guardrails/judge.js";
import type { PlanPromotion } from "../shared/promotion.js";
import type { Action, Change, DriftClass, DriftItem, KeptLive, Unread } from "../shared/entries.js";
import type { LookAlike } from "./look-alike.js";

// The entries a plan and a drift report hold are every kind's words (src/shared/entries.ts); they are
// named here too, with the plan and the drift report they make up.
export { APPLIED_ACTIONS, actionWords, isApplied, needsAction } from "../shared/entries.js";
export type { Action, Change, DriftClass, DriftItem, KeptLive, Payload, Unread, ValuesSummary } from "../shared/entries.js";
export type { PlanGuardrails } from "../guardrails/judge.js";
export type { ChangePromotion, PlanPromotion } from "../shared/promotion.js";

export const PLAN_FORMAT_VERSION = "1";

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
  /** Names of git and of the service that look alike (src/plan/look-alike.ts): a warning each (absent when
   *  there are none). */
  look_alike?: LookAlike[];
  /** Fields the service holds that git's files leave out: kept as the service holds them, never a change
   *  (absent when git's files hold every field). */
  kept_live?: KeptLive[];
  /** What could not be read of the service, even after retries: each address (and what lies below it; a
   *  kind's name: all of that kind), with the read's failure. The plan says nothing of them (absent when
   *  everything was read). */
  unread?: Unread[];
  /** With policy tests: what the plan does to them (absent without tests). A plan saved by an earlier
   *  revsync holds the cases alone, as a list. */
  impact?: PlanImpact | ImpactEntry[];
  /** With four_eyes (revsync.yaml): who prepared each approve's batch and who the approves would be sent
   *  as (absent without four_eyes). */
  four_eyes?: PlanFourEyes;
  /** With guardrails or freeze windows in revsync.yaml: how the plan was judged when it was made (each
   *  applied change carries its facts and outcomes); apply judges it again. */
  guardrails?: PlanGuardrails;
  /** With promote_from (revsync.yaml): the source environment, the commit, what was compared and the
   *  policy tests run live there (each applied change says promoted, or is blocked and says why). */
  promotion?: PlanPromotion;
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
  /** The batch's uploader (its created_by); null when this plan's create uploads it (uploaded_in_plan)
   *  or the service names nobody. Absent in plans saved before it was shown. */
  uploaded_by?: string | null;
  uploaded_in_plan?: boolean;
  /** The policy's creator (the envelope's created_by); null when this plan creates the policy
   *  (created_in_plan) or the service names nobody. */
  policy_created_by: string | null;
  created_in_plan: boolean;
  /** The approve would be sent as its batch's reviewer, uploader or policy's creator, or as a user nobody
   *  can name: apply would block it. null: the plan does not know who the approves go as (approver_known
   *  false). */
  blocked: boolean | null;
}

/** A plan's four-eyes view (four_eyes: true): the sign-in (creates, updates, reviews), the approver
 *  identity (approves) when one is configured, and each approve. The approver a saved plan was made
 *  with: apply says so when its own differs. */
export interface PlanFourEyes {
  sign_in: string | null;
  approver: string | null;
  approver_configured: boolean;
  /** false: made in CI by a job that names no approver identity, so who the approves go as is the apply
   *  job's to say, not known here (absent: known, the approver identity or the sign-in). */
  approver_known?: false;
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

export interface DriftReport {
  format_version: string;
  environment: string;
  created_at: string;
  drift: DriftItem[];
  summary: Record<DriftClass, number>;
  /** What could not be compared (the service does not show it): one note per field and policy. */
  notes?: string[];
  /** Names of git and of the service that look alike: a warning each (absent when there are none). */
  look_alike?: LookAlike[];
  /** Fields the service holds that git's files leave out (as in a plan): shown, never drift. */
  kept_live?: KeptLive[];
  /** Accepted drift (drift.ignore of revsync.yaml): listed, never in the exit code. */
  ignored?: (DriftItem & { reason: string; rule: string })[];
  /** What could not be read of the service, as in a plan: drift says nothing of them. */
  unread?: Unread[];
}

export const ACTIONS: Action[] = ["create", "update", "review", "approve", "blocked", "not_in_git", "unsupported"];
export const DRIFT_CLASSES: DriftClass[] = ["changed", "unmanaged", "unmanaged_batch", "missing", "batch_status", "batch_values", "duplicate"];

export function summarize<K extends string>(keys: K[], items: { [k: string]: unknown }[], field: string): Record<K, number> {
  const out = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  for (const i of items) out[i[field] as K] = (out[i[field] as K] ?? 0) + 1;
  return out;
}
