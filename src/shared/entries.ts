/** The entries of a plan and of a drift report: what every resource kind answers and every report
 *  shows, plain data in the same words for every kind. A plan as a whole is src/plan/model.ts. */
import type { Facts, GuardrailOutcome } from "./facts.js";
import type { ChangePromotion } from "./promotion.js";
import type { FieldDiff } from "./normalize.js";

/** What a plan entry is. The first four are writes apply makes; the rest are shown, never applied:
 *  `blocked` a write revsync refuses to make, `not_in_git` (said "not in git") something the service
 *  holds that git does not, `unsupported` a difference the interface cannot write. */
export type Action = "create" | "update" | "review" | "approve" | "blocked" | "not_in_git" | "unsupported";

/** The actions apply performs. */
export const APPLIED_ACTIONS: readonly Action[] = ["create", "update", "review", "approve"];

/** Whether apply acts on this entry (the others are shown with their reason and never sent). */
export const isApplied = (c: { action: Action }): boolean => APPLIED_ACTIONS.includes(c.action);

/** Whether an entry asks something of someone: a write apply makes, or a write revsync refuses to make
 *  until someone acts (a batch to upload again with git's values, a source environment to apply first).
 *  `plan --detailed-exitcode` exits 2 for either: not in git and unsupported are information. */
export const needsAction = (c: { action: Action }): boolean => isApplied(c) || c.action === "blocked";

/** How an action is written in text and markdown ("not in git"); JSON keeps the identifier. */
export const actionWords = (a: Action): string => a.replace(/_/g, " ");

export type DriftClass = "changed" | "unmanaged" | "unmanaged_batch" | "missing" | "batch_status" | "batch_values" | "duplicate";

/** What apply sends for a change, fixed at plan time so that apply does exactly what was reviewed. Its
 *  `kind` says which write of its resource kind it is; the rest is that write's own (each kind defines
 *  its payloads and checks them, src/kinds/). */
export interface Payload {
  kind: string;
  [field: string]: unknown;
}

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
  /** Who changed the live resource last, and when (ISO), as the service says, on an update, an SSP
   *  policy's fields that differ and a not in git entry; absent or null where it does not say. */
  modified_by?: string | null;
  modified_on?: string | null;
  reason?: string;
  source?: string;
  payload?: Payload;
  /** A review or approve: the values it moves forward. */
  values?: ValuesSummary;
  /** Values that differ, row by row: the diff shows the first `shown` rows of `total`. */
  diff_rows?: { shown: number; total: number };
  /** With guardrails: what a rule may read of this write, as the plan saw it (docs/guardrails.md, "Facts";
   *  the facts of the moment of judging, days from today and the like, are not saved). */
  facts?: Facts;
  /** With guardrails: what each rule that matches this write came to when the plan was made. */
  guardrails?: GuardrailOutcome[];
  /** With promote_from: whether the source environment holds what this write sets (promoted), or why
   *  not (blocked: the change's action is blocked, `promotion.action` the write it would be). */
  promotion?: ChangePromotion;
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

/** Who prepared and who approved an approve's batch (four eyes), as the step found them right before its
 *  send: the batch's reviewer, its uploader and its policy's creator (the service's fields, or this run's
 *  own review and create where the service names nobody), and who approved it. */
export interface FourEyesFacts {
  reviewed_by: string | null;
  /** The batch's uploader (its created_by): the uploader of a file cannot approve it. Absent in records
   *  written before it was recorded. */
  uploaded_by?: string | null;
  policy_created_by: string | null;
  /** Who approved it: once it landed, the user the service names (the batch's updated_by once approved);
   *  before, or where the service names nobody, the user it is (or would be) sent as. */
  approved_by: string | null;
  /** An approve that was sent: the user revsync sent it as, as its credentials name it (the approver
   *  identity's, else the sign-in's). */
  sent_as?: string | null;
  /** An approve that landed: whether the service's own answer (the batch read back) names who approved it. */
  confirmed?: boolean;
  /** What the four-eyes rule did to the approve: blocked by revsync before it was sent, refused by the
   *  service (sent as its preparer), or breached (it landed, and the service shows it approved by its
   *  preparer, or by another user than the one it was sent as); absent when it did none. */
  rule?: "blocked" | "refused" | "breached";
}

/** Fields the service holds of a resource git manages that git's file leaves out: a field left out keeps
 *  its live value and is never a change, but the plan and drift show it, with its value, so that "No
 *  changes" never hides what the service holds and git does not (docs/decisions.md, "A field git leaves
 *  out is shown"). Information: apply writes nothing for it. */
export interface KeptLive {
  address: string;
  /** Each field left out, with the value the service holds, in the kind's field order. */
  fields: Record<string, unknown>;
  /** Who changed the resource last, and when (ISO), as the service says; null where it does not. */
  modified_by: string | null;
  modified_on: string | null;
}

/** The fields of `live` among `fields` that `git` leaves out and the service holds a value of: not null,
 *  not left out, not an empty text or list (which hold nothing git's silence does not also say). */
export function keptFields(git: Record<string, unknown>, live: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of fields) {
    const v = live[k];
    if (k in git || v === null || v === undefined || v === "" || (Array.isArray(v) && !v.length)) continue;
    out[k] = v;
  }
  return out;
}

/** How many fields a list of kept resources holds. */
export const keptCount = (kept: readonly KeptLive[] | undefined): number => (kept ?? []).reduce((n, k) => n + Object.keys(k.fields).length, 0);

/** What a read of the service could not read, even after its retries, and so what it would have fed:
 *  `address` an entry and everything below it (`ssp/Hardware SSP`), or a kind's name (`ssp`) for all of
 *  that kind; `error`, the read's failure in words. */
export interface Unread {
  address: string;
  error: string;
}
