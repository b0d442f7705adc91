import { relative, resolve } from "node:path";
import type { RequestObservation } from "../api/core.js";
import { countOutcomes, outcomeOf, stepTag, type ApplyObserver, type ApplyReport } from "../apply/run.js";
import type { Step, StepOutcome } from "../apply/graph.js";
import { planApprover } from "../plan/four-eyes.js";
import { isApplied, type Plan } from "../plan/model.js";
import type { PlanGuardrails } from "../guardrails/judge.js";
import type { GuardrailOutcome } from "../shared/facts.js";
import type { PromotionTests } from "../shared/promotion.js";
import { gitState, TreeStatus, uncommittedFiles } from "./context.js";
import {
  EVIDENCE_FORMAT_VERSION,
  type CiContext,
  type EvidenceChange,
  type EvidenceFourEyes,
  type EvidenceLock,
  type EvidenceOutcome,
  type EvidenceRecord,
  type EvidenceRequest,
  type PullRequestApproval,
} from "./record.js";
import { appendRecord } from "./store.js";

const iso = (ms: number): string => new Date(ms).toISOString();

/** What a review or approve moved forward: the plan's summary of the values and their checksum. */
function valuesOf(c: Plan["changes"][number]): Pick<EvidenceChange, "values"> {
  if (!c.values) return {};
  // A payload that binds the values it moves forward names their checksum.
  const checksum = typeof c.payload?.values_checksum === "string" ? c.payload.values_checksum : null;
  return { values: { checksum, file: c.values.file, rows: c.values.rows } };
}

export interface RecorderInit {
  dir: string;
  repoRoot: string;
  /** The working directory the plan's file paths are shown from. */
  cwd: string;
  /** The run's environment (git runs with it). */
  env: NodeJS.ProcessEnv;
  /** revsync.yaml and the policies folder, from repoRoot: a path under them that is not clean is marked
   *  a policy file in the record. */
  policyPaths?: string[];
  environment: string;
  baseUrl: string;
  authUrl: string;
  realm: string;
  planFile: string | null;
  revsyncVersion: string;
  ci: CiContext | null;
  now: () => number;
  /** Why the earlier evidence could not be fetched (REVSYNC_EVIDENCE_UNAVAILABLE), or null. */
  unavailable: string | null;
  /** Blanks out every secret the run learned (appendRecord applies it before the hash is taken). */
  redact: (text: string) => string;
}

/** Collects one apply run's evidence while it runs (every request through `observe`, filed under the
 *  change its tag names; each step's start and typed outcome) and writes it as one record at the end.
 *  Nothing secret reaches it: requests come as method, path, status and times, and a write's body (which
 *  never holds revsync's credentials: the token goes in a header, a policy file cannot read them). */
export class EvidenceRecorder implements ApplyObserver {
  private readonly started: number;
  private readonly git: Promise<EvidenceRecord["git"]>;
  /** git's status of the policy repo, asked once for the whole run (apply asks it too). */
  readonly tree: TreeStatus;
  private plan: Plan | undefined;
  private user: string | null = null;
  private approval: EvidenceRecord["approval"] = "not asked";
  private lock: EvidenceLock | undefined;
  /** Each step's requests, by its tag (stepTag). */
  private readonly requestsOf = new Map<string, EvidenceRequest[]>();
  private readonly others: EvidenceRequest[] = [];
  private readonly pending = new Map<string, EvidenceRequest[]>();
  private readonly finished = new Map<string, { outcome: EvidenceOutcome; message: string; four_eyes?: EvidenceFourEyes }>();
  private fourEyes: { required: boolean; approver: string | null; localApply?: true } | undefined;
  private approverNote: string | undefined;
  private pullRequest: PullRequestApproval | undefined;
  private guardrails: { judged: PlanGuardrails; outcomes: readonly (GuardrailOutcome[] | undefined)[] } | undefined;
  private promotionTests: PromotionTests | undefined;
  private readonly running = new Set<string>();
  private written: { path: string; record: EvidenceRecord } | undefined;

  constructor(private readonly init: RecorderInit) {
    this.started = init.now();
    this.tree = new TreeStatus(init.repoRoot, init.dir, init.env);
    this.git = gitState(init.repoRoot, init.dir, init.env, init.policyPaths, this.tree);
  }

  /** ClientOptions.onRequestStart: the attempt is listed as it is sent, in flight until `observe` says
   *  how it ended, so a run stopped at once still lists the request it was waiting on. */
  readonly observeStart = (r: Pick<RequestObservation, "method" | "path" | "started_at" | "resend" | "tag" | "user" | "body">): void => {
    const req: EvidenceRequest = {
      method: r.method,
      path: r.path,
      status: null,
      started_at: iso(r.started_at),
      duration_ms: 0,
      resend: r.resend,
      in_flight: true,
      user: r.user,
      // A write's body as sent: what the service was asked to hold.
      ...(r.body === undefined ? {} : { body: r.body }),
    };
    this.listFor(r.tag).push(req);
    const k = `${r.method} ${r.path} ${r.started_at}`;
    const waiting = this.pending.get(k);
    if (waiting) waiting.push(req);
    else this.pending.set(k, [req]);
  };

  /** The request observer (ClientOptions.onRequest): each attempt goes to the step it was sent for. */
  readonly observe = (r: RequestObservation): void => {
    const k = `${r.method} ${r.path} ${r.started_at}`;
    const req = this.pending.get(k)?.shift();
    if (this.pending.get(k)?.length === 0) this.pending.delete(k);
    const ended: EvidenceRequest = {
      method: r.method,
      path: r.path,
      status: r.status,
      started_at: iso(r.started_at),
      duration_ms: r.duration_ms,
      resend: r.resend,
      ...(r.error === undefined ? {} : { error: r.error }),
      user: r.user,
    };
    if (!req) return void this.listFor(r.tag).push(ended);
    delete req.in_flight;
    Object.assign(req, ended);
  };

  /** The list a request goes to: its step's (the client view apply sent it through names the step), or
   *  (a sign-in, whichever step needed the token first, and the plan's reads) the others. */
  private listFor(tag: string | undefined): EvidenceRequest[] {
    if (tag === undefined) return this.others;
    let list = this.requestsOf.get(tag);
    if (!list) this.requestsOf.set(tag, (list = []));
    return list;
  }

  get planned(): boolean {
    return this.plan !== undefined;
  }

  setPlan(plan: Plan): void {
    this.plan = plan;
  }
  setUser(user: string | undefined): void {
    this.user = user ?? null;
  }
  setApproval(how: EvidenceRecord["approval"]): void {
    this.approval = how;
  }
  /** four_eyes of the environment, and the approver identity's user (null: none configured). */
  setFourEyes(required: boolean, approver: string | null): void {
    this.fourEyes = { ...this.fourEyes, required, approver };
  }
  /** Under four eyes, applied outside CI as four_eyes.local_apply allows (evidence verify flags it). */
  setLocalApply(): void {
    this.fourEyes = { required: true, approver: null, ...this.fourEyes, localApply: true };
  }
  /** Apply approves as another user than the plan was made with, in words (src/plan/four-eyes.ts). */
  setApproverNote(note: string): void {
    this.approverNote = note;
  }
  /** The pull (merge) request's approval, as read from the forge. */
  setPullRequestApproval(a: PullRequestApproval): void {
    this.pullRequest = a;
  }
  /** How apply judged the plan's guardrails, and each change's outcomes (by the plan's order). */
  setGuardrails(judged: PlanGuardrails, outcomes: readonly (GuardrailOutcome[] | undefined)[]): void {
    this.guardrails = { judged, outcomes };
  }
  /** A saved plan's source's policy tests, as they came out right before the writes. */
  setPromotionTests(tests: PromotionTests): void {
    this.promotionTests = tests;
  }
  /** The environment's lock as the run took it (or --lock=false), and later whether it was released. */
  setLock(lock: EvidenceLock): void {
    this.lock = lock;
  }
  /** An observer of apply (ApplyObserver): the step's work began. */
  stepStarted(s: Pick<Step, "change">): void {
    this.running.add(stepTag(s.change));
  }
  /** An observer of apply (ApplyObserver): what became of the step, as the apply report has it. */
  stepFinished(o: Pick<StepOutcome, "step" | "status" | "outcome" | "message" | "four_eyes">): void {
    const tag = stepTag(o.step.change);
    this.finished.set(tag, { outcome: outcomeOf(o), message: o.message, ...(o.four_eyes ? { four_eyes: { ...o.four_eyes } } : {}) });
    this.running.delete(tag);
  }

  private changeOutcome(
    c: Plan["changes"][number],
    end: { stoppedNow: boolean; declined: boolean; error: string | null },
  ): { outcome: EvidenceOutcome; why: string } {
    if (!isApplied(c))
      return {
        outcome: c.action === "blocked" ? "blocked" : "skipped",
        why: `not applied (${c.action.replace(/_/g, " ")}): ${c.reason ?? ""}`.replace(/: $/, ""),
      };
    const k = stepTag(c);
    const done = this.finished.get(k);
    if (done) return { outcome: done.outcome, why: done.message };
    if (this.running.has(k))
      return {
        outcome: "unknown",
        why: end.stoppedNow
          ? "in flight when the run was stopped at once (a second interrupt): whether its write landed is unknown"
          : `in flight when the run ended${end.error ? ` (${end.error})` : ""}: whether its write landed is unknown`,
      };
    if (end.declined) return { outcome: "skipped", why: "not applied: the confirmation was answered no" };
    if (this.approval === "cancelled") return { outcome: "skipped", why: "not applied: the confirmation was cancelled (Ctrl-C or end of input)" };
    return { outcome: "skipped", why: end.stoppedNow ? "not started: the run was stopped" : end.error ? `not started: ${end.error}` : "not started" };
  }

  /** A clean tree is not enough: a policy file the plan used that git ignores (or that is untracked)
   *  is not in the commit the record names, so the record says the tree was not clean and names it. */
  private async policyFilesCommitted(plan: Plan, git: EvidenceRecord["git"]): Promise<EvidenceRecord["git"]> {
    if (git.commit === null) return git;
    const files = new Set<string>();
    for (const c of plan.changes) {
      if (c.source) files.add(c.source.replace(/:\d+$/, ""));
      if (c.values?.file) files.add(c.values.file);
    }
    // A values file may lie outside the policies folder: the ones the plan read are policy files too.
    const read = new Set([...files].map((f) => relative(this.init.repoRoot, resolve(this.init.cwd, f))));
    if (git.not_clean) git = { ...git, not_clean: git.not_clean.map((p) => (read.has(p.path) ? { ...p, policy: true } : p)) };
    const outside = await uncommittedFiles(this.init.cwd, [...files], this.init.env, this.tree);
    if (!outside.length) return git;
    return { ...git, clean: false, note: `policy files the plan used are not in the commit: ${outside.join(", ")}` };
  }

  /** Each of the plan's entries, with what became of it and the requests sent for it. */
  private changes(plan: Plan, end: { stoppedNow: boolean; declined: boolean; error: string | null }): EvidenceChange[] {
    return plan.changes.map((c, i) => {
      const four = isApplied(c) ? this.finished.get(stepTag(c))?.four_eyes : undefined;
      const guardrails = this.guardrails?.outcomes[i];
      return {
        address: c.address,
        action: c.action,
        ...this.changeOutcome(c, end),
        source: c.source ?? null,
        diff: c.diff,
        version_id: c.version_id,
        ...valuesOf(c),
        ...(four ? { four_eyes: four } : {}),
        ...(guardrails ? { guardrails } : {}),
        ...(c.promotion ? { promotion: c.promotion } : {}),
        requests: (isApplied(c) && this.requestsOf.get(stepTag(c))) || [],
      };
    });
  }

  /** Writes the record (once); returns its path and hash. */
  async write(end: { exitCode: number; report?: ApplyReport; stoppedNow?: boolean; error?: string }): Promise<{ path: string; record: EvidenceRecord }> {
    if (this.written) return this.written;
    const plan = this.plan;
    if (!plan) throw new Error("an evidence record is written only for a run that planned");
    const git = await this.policyFilesCommitted(plan, await this.git);
    const now = this.init.now();
    for (const list of this.pending.values()) for (const q of list) q.duration_ms = Math.max(0, now - Date.parse(q.started_at));
    // The apply report, when the run made one, is the outcome of each step: the one count the closing
    // line and --format json give (its last word on a create included: the check after the run's creates).
    for (const o of end.report?.outcomes ?? [])
      this.finished.set(`${o.action} ${o.address}`, { outcome: o.outcome, message: o.message, ...(o.four_eyes ? { four_eyes: { ...o.four_eyes } } : {}) });
    const changes = this.changes(plan, { stoppedNow: !!end.stoppedNow, declined: this.approval === "declined", error: end.error ?? null });
    // What apply acted on, counted as the apply report counts it (one function, the same outcome of each
    // step); the plan's entries it never acts on apart.
    const acted = changes.filter((_, n) => isApplied(plan.changes[n] as Plan["changes"][number]));
    const summary: EvidenceRecord["summary"] = { ...countOutcomes(acted), not_applied: changes.length - acted.length };
    const i = this.init;
    const content: Omit<EvidenceRecord, "prev" | "hash" | "sequence"> = {
      format_version: EVIDENCE_FORMAT_VERSION,
      kind: "revsync-apply-evidence",
      revsync_version: i.revsyncVersion,
      environment: i.environment,
      base_url: i.baseUrl,
      auth_url: i.authUrl,
      realm: i.realm,
      service_user: this.user,
      ...(this.fourEyes ? { four_eyes: this.fourEyes.required, approver_user: this.fourEyes.approver } : {}),
      ...(this.fourEyes?.localApply ? { four_eyes_local_apply: true } : {}),
      ...(this.approverNote ? { approver_note: this.approverNote } : {}),
      ...(this.pullRequest ? { pull_request_approval: this.pullRequest } : {}),
      ...(this.guardrails ? { guardrails: this.guardrails.judged } : {}),
      ...(plan.promotion ? { promotion: plan.promotion } : {}),
      ...(this.promotionTests ? { promotion_tests_at_apply: this.promotionTests } : {}),
      started_at: iso(this.started),
      finished_at: iso(i.now()),
      git,
      ci: i.ci,
      plan: {
        checksum: plan.checksum,
        file: i.planFile,
        created_at: plan.created_at,
        made_by: plan.user ?? null,
        targets: plan.targets ?? [],
        summary: plan.summary,
        ...(plan.four_eyes ? { approver: planApprover(plan) ?? null } : {}),
      },
      approval: this.approval,
      changes,
      other_requests: this.others,
      summary,
      exit_code: end.exitCode,
      interrupted: end.exitCode === 130 || !!end.report?.interrupted,
      error: end.error ?? null,
      ...(this.lock ? { lock: this.lock } : {}),
    };
    this.written = appendRecord(i.dir, content, i.redact, i.unavailable);
    return this.written;
  }
}
