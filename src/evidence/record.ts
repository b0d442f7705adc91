import { canonicalHash } from "../canonical-json.js";
import { OUTCOMES, type Outcome } from "../apply/run.js";
import type { FourEyesFacts } from "../shared/entries.js";
import type { FieldDiff } from "../shared/normalize.js";
import type { GuardrailOutcome } from "../shared/facts.js";
import type { PlanGuardrails } from "../guardrails/judge.js";
import type { ChangePromotion, PlanPromotion, PromotionTests } from "../shared/promotion.js";

/** The evidence record of one apply run (schemas/evidence-record.schema.json). Major versions are
 *  refused by older readers, as plans are. */
export const EVIDENCE_FORMAT_VERSION = "1";

/** What became of one change of the plan in this run: apply's outcome names, which the closing line
 *  and `apply --format json` count by too. */
export type EvidenceOutcome = Outcome;
export { OUTCOMES };
/** The outcomes that mean the write is in the service. */
export const LANDED: ReadonlySet<EvidenceOutcome> = new Set(["done", "already", "confirmed", "breached"]);

/** A path of the working tree that differs from the commit, as `git status` says it: what became of it,
 *  and whether it is one revsync reads as policy (revsync.yaml, a YAML or CSV file under the policies
 *  folder). Paths are from the repository's root (revsync.yaml's folder). */
export interface NotClean {
  path: string;
  what: string;
  policy: boolean;
}

/** One HTTP attempt, as revsync sent it: never a header, a body or a form. */
export interface EvidenceRequest {
  method: string;
  path: string;
  /** Null when no answer came (the connection failed, the answer was lost). */
  status: number | null;
  started_at: string;
  duration_ms: number;
  /** An earlier attempt of the same request was sent. */
  resend: boolean;
  error?: string;
  /** Sent, and no answer had come when the record was written (a run stopped at once): status is null
   *  and duration_ms runs to the record's writing. */
  in_flight?: boolean;
  /** The user it was sent as (a sign-in's: the user signing in); null when the sign-in names none.
   *  Absent in records written before it was recorded. */
  user?: string | null;
  /** A write's body, as sent (the record passes through the redactor, as all output does). */
  body?: unknown;
}

/** An approve's people (four eyes), as the step found them and what the rule did to it: the record
 *  holds them as apply's report does. */
export type EvidenceFourEyes = FourEyesFacts;

/** The pull (merge) request's approval as the forge's API gave it, judged against the commit applied. */
export interface PullRequestApproval {
  provider: "github" | "gitlab";
  number: number | null;
  author: string | null;
  /** The commit approved: the head of the pull request. */
  head_commit: string | null;
  /** The forge's users who made the head commit (its author and committer, on GitHub): their approval is
   *  not independent. Absent in records written before it was read. */
  head_commit_by?: string[];
  /** The commit(s) its merge made (GitHub merge_commit_sha; GitLab merge_commit_sha, squash_commit_sha). */
  merge_commits: string[];
  /** The commit this run applied (git HEAD, else the CI's commit). */
  applied_commit: string | null;
  /** Each approval: who, when, and the commit approved (null where the forge does not say); `excluded`:
   *  why the approver does not count whatever commit they approved (the author, a bot, no write access,
   *  who made the head commit). */
  approvals: { user: string; at: string | null; commit: string | null; excluded?: string }[];
  /** The users whose approval stands at the head commit and who count: not its author, not a bot, with
   *  write access, not who made the head commit. */
  independent: string[];
  /** An independent approval of the commit applied (or of the commit its merge was made from). */
  holds: boolean;
  /** Why it does not hold (or could not be read), in words; null when it holds. */
  problem: string | null;
}

/** The environment's lock, as this run held it (absent: the run wrote nothing, so it took none). */
export type EvidenceLock =
  | {
      /** Where the lock is kept, in words: a ref of a git remote, or a file of this machine. */
      backend: "git" | "local";
      where: string;
      id: string;
      acquired_at: string;
      /** How long the run waited for another holder (--lock-timeout), in ms. */
      waited_ms: number;
      /** Whether the run let it go at its end, right after writing this record (the record is written while
       *  the lock is held); if not, the note says why. */
      released: boolean;
      note?: string;
    }
  /** --lock=false: the run took no lock, as it was told. */
  | { disabled: true; note: string };

export interface EvidenceChange {
  address: string;
  action: string;
  outcome: EvidenceOutcome;
  /** The outcome in words: the apply report's line, or the plan's reason for a change it does not apply. */
  why: string;
  /** Where git holds it (file:line), when the plan says. */
  source: string | null;
  /** What the plan showed: field by field, before and after. */
  diff: FieldDiff[];
  /** The live version the plan computed the change from. */
  version_id: string | null;
  /** A review or approve: the values it moved forward, as the plan summed them up (git's file, its rows)
   *  and the checksum of those values that apply held the batch to. Absent for other changes. */
  values?: { checksum: string | null; file: string; rows: number };
  /** An approve apply acted on: who prepared the batch and who approved it. */
  four_eyes?: EvidenceFourEyes;
  /** With guardrails: what each rule that matches it came to when apply judged the plan. */
  guardrails?: GuardrailOutcome[];
  /** With promote_from: the plan's word on it (promoted, with what the source held; or blocked). */
  promotion?: ChangePromotion;
  requests: EvidenceRequest[];
}

export interface CiContext {
  provider: "github" | "gitlab";
  run_url: string | null;
  actor: string | null;
  /** The pull request (GitHub) or merge request (GitLab) number, when the job runs for one. */
  pull_request: number | null;
  commit: string | null;
  ref: string | null;
  workflow: string | null;
  event: string | null;
}

export interface EvidenceRecord {
  format_version: string;
  kind: "revsync-apply-evidence";
  revsync_version: string;
  /** 1 for the environment's first record in the folder, then one more each run. */
  sequence: number;
  environment: string;
  base_url: string;
  auth_url: string;
  realm: string;
  /** The user revsync signed in as (null when the sign-in names none). */
  service_user: string | null;
  /** four_eyes of the environment at this run (absent in records written before it was recorded). */
  four_eyes?: boolean;
  /** Under four eyes, applied outside CI as four_eyes: { local_apply: true } allows: no pull request's
   *  approval was checked and the tree applied was held to none (evidence verify flags it). */
  four_eyes_local_apply?: boolean;
  /** The approver identity approves were sent as (REVSYNC_APPROVER_*); null when none was configured. */
  approver_user?: string | null;
  /** Apply approved as another user than the plan was made with (or than a plan whose job did not know
   *  the approver), in words; absent when they are the same. */
  approver_note?: string;
  /** In CI: the pull (merge) request's author and approvals, read from the forge's API, and whether an
   *  independent approval covers the commit applied. */
  pull_request_approval?: PullRequestApproval;
  /** With guardrails or freeze windows: how apply judged the plan right before it wrote (every rule and
   *  window, who approved, each override with its reason and who granted it, what held it back). */
  guardrails?: PlanGuardrails;
  /** With promote_from: the plan's promotion (the source, the commit, what was compared, the tests). */
  promotion?: PlanPromotion;
  /** A saved plan's source's policy tests, run again right before the writes. */
  promotion_tests_at_apply?: PromotionTests;
  started_at: string;
  finished_at: string;
  /** The policy repo: its commit, whether its tree was clean, and when not, the paths that were not (the
   *  first 50, each marked when revsync reads it as a policy or values file) and how many in all. Absent
   *  in records written before they were listed. */
  git: { commit: string | null; clean: boolean | null; note?: string; not_clean?: NotClean[]; not_clean_total?: number };
  ci: CiContext | null;
  plan: {
    checksum: string;
    /** The saved plan applied (as given), or null when apply planned itself. */
    file: string | null;
    created_at: string;
    /** Who the plan was made as. */
    made_by: string | null;
    /** With four eyes: who the plan said its approves go as (the approver identity, else the sign-in);
     *  null when the plan's job did not know. */
    approver?: string | null;
    targets: string[];
    summary: Record<string, number>;
  };
  /** How the writes were confirmed: --auto-approve, a person's "yes" at the prompt, a "no", or no
   *  question because nothing was to be applied; "cancelled": the prompt was left (Ctrl-C, end of input). */
  approval: "auto-approve" | "prompt" | "declined" | "cancelled" | "not asked";
  changes: EvidenceChange[];
  /** Requests not made for one change: the reads of the plan, the sign-in. */
  other_requests: EvidenceRequest[];
  /** Each outcome's count over the changes apply acted on (creates, updates, reviews, approves), as its
   *  own outcome data has them (apply's "done" is done, already and confirmed here); the plan's entries
   *  apply never acts on (not in git, unsupported, blocked by the plan) are counted apart in not_applied
   *  (absent in records written before it was counted). */
  summary: Record<EvidenceOutcome, number> & { not_applied?: number };
  exit_code: number;
  interrupted: boolean;
  /** The error that ended the run, in words, when one did. */
  error: string | null;
  /** The environment's lock the run held while it wrote (absent in records written before revsync
   *  locked, and when the run got no further than the plan). */
  lock?: EvidenceLock;
  /** The hash of the previous record of this environment in the folder; null for the first. */
  prev: string | null;
  /** Why the record starts a chain (prev null): the first record of the environment in the folder, or
   *  the earlier evidence could not be fetched (REVSYNC_EVIDENCE_UNAVAILABLE, set by the CI recipes).
   *  Absent when prev names a record. */
  chain_note?: string;
  hash: string;
}

/** A record's hash: "sha256:" and the hex sha256 of the UTF-8 canonical JSON (RFC 8785) of the record
 *  without its own `hash` field (`prev` is inside it, which chains the records). Every key is in it, one
 *  named `__proto__` too. */
export function recordHash(record: Record<string, unknown>): string {
  const { hash: _own, ...content } = record;
  return canonicalHash(content);
}
