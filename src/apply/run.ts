/** Making a plan's writes: the plan checked before anything is sent (once), each step handed to its
 *  kind's write (src/kinds/), which guards, sends and settles it through the write unit, and the outcome
 *  in the report's words. What watches the run (the progress line, the evidence record, the signal
 *  handlers) is an observer. */
import type { ApiCore } from "../api/core.js";
import { refusedWords, type WriteOutcome } from "../api/write.js";
import { UserError } from "../errors.js";
import { desiredOf, type DesiredState, type Kind, type KindApply, type Registry, type WriteResult } from "../kinds/kind.js";
import { KINDS, kindOf } from "../kinds/registry.js";
import { isApplied, type Change, type Plan } from "../plan/model.js";
import type { FourEyesFacts } from "../shared/entries.js";
import { sameUser } from "../shared/who.js";
import { buildSteps, schedule, type StepOutcome, type StepResult, type Step } from "./graph.js";

/** What became of each change apply acted on, by one set of names that the closing line, the JSON
 *  report and the evidence record all count by: done, already (nothing needed sending), confirmed (by
 *  reading it back after an unknown outcome), blocked (changed since the plan), failed (refused, or
 *  anything else that stopped the step), unknown (may have landed; reading back could not tell),
 *  skipped (not attempted), overwritten (landed, and met someone else's write to the same resource: theirs
 *  undid it right after, or came in the same round trip, and this write may have undone it), breached
 *  (landed, and broke a rule its kind keeps: four eyes). */
export const OUTCOMES = ["done", "already", "confirmed", "blocked", "failed", "unknown", "skipped", "overwritten", "breached"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** A step's outcome by those names: the write unit's kind where the step has one (a refusal is failed). */
export function outcomeOf(o: Pick<StepOutcome, "status" | "outcome">): Outcome {
  if (o.status === "skipped") return "skipped";
  const kind = o.outcome ?? (o.status === "done" ? "done" : "failed");
  return (OUTCOMES as readonly string[]).includes(kind) ? (kind as Outcome) : "failed";
}

/** Each outcome's count, every name present (0 where none). */
export function countOutcomes(outcomes: readonly { outcome: Outcome }[]): Record<Outcome, number> {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const o of outcomes) counts[o.outcome]++;
  return counts;
}

export interface ApplyReport {
  environment: string;
  /** `status`: whether the step succeeded (done), failed or was skipped; `outcome`: what became of its
   *  write, by the names of OUTCOMES. */
  outcomes: {
    address: string;
    action: string;
    status: StepOutcome["status"];
    outcome: Outcome;
    message: string;
    /** An approve: who reviewed its batch, who created its policy, and who it was sent as. */
    four_eyes?: FourEyesFacts;
    /** already: the status the service answered revsync's own send with (a 409, a 412) before the write
     *  was found made by someone else; absent when nothing was sent. */
    answered?: number;
  }[];
  /** Each outcome's count over `outcomes`: the one count the closing line and the evidence record show. */
  summary: Record<Outcome, number>;
  interrupted: boolean;
}

/** What is sent is what was shown: each write's payload is checked, by its kind, against the reviewed
 *  diff before anything is sent, and a plan whose payload says more or other than its diff is refused
 *  whole (its checksum is no protection: anyone can compute it). Returns the problems, in words. */
export function payloadProblems(plan: Pick<Plan, "changes">, kinds: Registry = KINDS): string[] {
  return plan.changes.flatMap((c) => {
    if (!isApplied(c)) return [];
    const kind = kindOf(kinds, c.address);
    const problems = !c.payload ? ["no payload"] : !kind ? ["revsync does not know this kind of address"] : kind.payloadProblems(c, plan.changes);
    return problems.map((what) => `${c.address} (${c.action}): ${what}`);
  });
}

/** A plan whose payloads were checked against its diffs (checkPayloads), once. */
export type PayloadsChecked = Plan & { readonly payloadsChecked: true };

/** Refuses, before anything is sent, a plan whose payloads are not what it shows. */
export function checkPayloads(plan: Plan, kinds: Registry = KINDS): PayloadsChecked {
  const problems = payloadProblems(plan, kinds);
  if (problems.length) {
    throw new UserError(
      `the plan's writes are not what it shows, so nothing was sent:\n  ${problems.join("\n  ")}`,
      "a saved plan is applied only as revsync wrote it: run revsync plan again",
    );
  }
  return plan as PayloadsChecked;
}

/** A saved plan's writes against what git asks for now (`desired`: the policy files of the repo at hand,
 *  as they are): each change the plan would write, by its kind, against git's entry at its address. A
 *  plan made with --target holds only its targets' changes, so only they are compared; what git asks for
 *  beyond the plan is not written (plan again shows it). Returns the problems, in words. */
export function gitProblems(plan: Pick<Plan, "changes">, desired: DesiredState, kinds: Registry = KINDS): string[] {
  return plan.changes.flatMap((c) => {
    if (!isApplied(c)) return [];
    const kind = kindOf(kinds, c.address);
    const problems = kind ? kind.gitProblems(c, desiredOf(kind, desired), plan.changes) : ["revsync does not know this kind of address"];
    return problems.map((what) => `${c.address} (${c.action}): ${what}`);
  });
}

/** Refuses, before anything is sent, a saved plan any of whose writes is not what git asks for now: its
 *  checksum proves nothing (anyone can compute it), and in CI the plan comes from a job the pull request
 *  controls; git at the commit applied is what was reviewed and merged. */
export function checkAgainstGit(plan: PayloadsChecked, desired: DesiredState, kinds: Registry = KINDS): PayloadsChecked {
  const problems = gitProblems(plan, desired, kinds);
  if (problems.length) {
    throw new UserError(
      `the plan's writes are not what git asks for now, so nothing was sent:\n  ${problems.join("\n  ")}`,
      "a saved plan is applied only while the policy files ask for what it writes: run revsync plan again, review it, and apply that plan",
    );
  }
  return plan;
}

/** Before anything is sent: the approver identity is another user than revsync's sign-in (an approver
 *  that is the same user would approve what that user prepared), and under four eyes a user whose name
 *  can be told. */
export function checkApprover(core: ApiCore, plan: Pick<Plan, "changes">, fourEyes: boolean): void {
  const approver = core.approverAuth;
  if (!approver) return;
  if (sameUser(approver.username, core.auth.username)) {
    throw new UserError(
      `the approver identity is ${approver.username}, the same user as revsync's own sign-in: approves would go as the user who prepared them, so nothing was sent`,
      "set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user than REVSYNC_USERNAME, or unset them",
    );
  }
  if (fourEyes && !approver.username && plan.changes.some((c) => c.action === "approve")) {
    throw new UserError(
      "four eyes: the approver's token names no user, so nobody can show that approves go as someone other than who prepared them; nothing was sent",
      "set REVSYNC_APPROVER_USER to the approver's user id in the service",
    );
  }
}

/** Once both have signed in, before anything is sent: who the approves go as and who prepares, as the
 *  tokens the service issued name them (every name: preferred_username, sub, email), not as variables
 *  say. An approver the service's token names as revsync's own sign-in (say REVSYNC_APPROVER_USERNAME
 *  alice@example.com, which signs in as alice) is refused; under four eyes, so is an approver whose
 *  token names nobody: who approves cannot be told (docs/security.md, "Who the service says you are"). */
export function checkSignedIn(core: ApiCore, plan: Pick<Plan, "changes">, fourEyes: boolean): void {
  const approves = plan.changes.some((c) => c.action === "approve" && isApplied(c));
  if (!approves) return;
  const as = core.approverAuth ?? core.auth;
  if (fourEyes && !as.identity) {
    throw new UserError(
      `four eyes: the token the service issued to ${core.approverAuth ? "the approver identity" : "revsync's sign-in, which sends the approves,"} names no user (no preferred_username or sub claim), so who approves cannot be told${as.username ? ` (${as.username} is what a variable says, not the service)` : ""}; nothing was sent`,
      "give the approver identity credentials whose token names its user: REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD",
    );
  }
  const approver = core.approverAuth?.identity;
  const own = core.auth.identity;
  const shared = approver && own ? approver.find((n) => own.some((m) => sameUser(n, m))) : undefined;
  if (core.approverAuth && shared) {
    throw new UserError(
      `the approver identity signs in as ${shared}, the same user as revsync's own sign-in (as the service's tokens name them): approves would go as the user who prepared them, so nothing was sent`,
      "set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user than REVSYNC_USERNAME, or unset them",
    );
  }
}

/** A plan ready to apply: its payloads checked, and what its writes need of the sign-in (each kind's
 *  `ready`: a write that names its user needs one) and of the approver identity, once. */
export type CheckedPlan = PayloadsChecked & { readonly ready: true };

/** The checks of the sign-in and the approver identity before anything is sent, each once. */
export function readyToApply(plan: PayloadsChecked, core: ApiCore, opts: { fourEyes: boolean; kinds?: Registry }): CheckedPlan {
  const applied = plan.changes.filter(isApplied);
  for (const k of opts.kinds ?? KINDS) {
    const own = applied.filter((c) => kindOf(opts.kinds ?? KINDS, c.address) === k);
    if (own.length) k.ready?.(own, core);
  }
  checkApprover(core, plan, opts.fourEyes);
  return plan as CheckedPlan;
}

const DONE = { update: "updated", create: "created", review: "reviewed", approve: "approved" } as const;

/** A write's outcome in the apply report's words: a landed write is the message of a done step; any
 *  other is thrown (the step fails with it). */
export function outcomeWords(action: keyof typeof DONE, o: WriteOutcome<unknown>): string {
  if (o.kind === "done") return o.unchecked ? `${DONE[action]} (${o.unchecked})` : DONE[action];
  if (o.kind === "already")
    return o.answered !== undefined
      ? `already ${o.status ?? "applied"} (${o.why}; revsync's ${action} was sent and the service ${refusedWords(o.answered)}: someone else's came first, and revsync's did not land)`
      : o.unprocessed !== undefined
        ? `already ${o.status ?? "applied"} (${o.why}; revsync's ${action} was sent and answered ${o.unprocessed}, not processed: someone else's made it meanwhile)`
        : `already ${o.status ?? "applied"} (${o.why}; nothing was sent)`;
  if (o.kind === "confirmed")
    return `${action === "create" ? "created" : (o.status ?? DONE[action])} (${o.why}; confirmed by reading it back${o.unchecked ? `; ${o.unchecked}` : ""})`;
  if (o.kind === "blocked" || o.kind === "overwritten") throw new StepFailed(o.reason);
  if (o.kind === "unknown" && !/outcome unknown/.test(o.error.message)) throw new StepFailed(`outcome unknown: ${o.error.message}`);
  throw o.error;
}

/** A step that ended without its write landing, in words, with its outcome's kind. */
class StepFailed extends Error {
  constructor(
    message: string,
    readonly outcome?: string,
  ) {
    super(message);
  }
}

/** A write's outcome as a step's result: its words and its kind; a write that did not land fails the
 *  step, with both. */
function stepResult(action: keyof typeof DONE, o: WriteOutcome<unknown>): { message: string; outcome: string; answered?: number } {
  try {
    return { message: outcomeWords(action, o), outcome: o.kind, ...(o.kind === "already" && o.answered !== undefined ? { answered: o.answered } : {}) };
  } catch (e) {
    throw new StepFailed(e instanceof Error ? e.message : String(e), o.kind);
  }
}

/** One step: its kind's write, which guards, sends and settles it through the write unit (src/api/write.ts);
 *  its outcome comes back as data. */
function runStep(step: Step, applier: KindApply, core: ApiCore): Promise<WriteResult> {
  return applier.write(step.change, core);
}

/** A step's write in the report's words; a write that did not land fails the step, with its kind and an
 *  approve's people. */
function stepWords(action: Change["action"], r: WriteResult): StepResult {
  const four = r.four_eyes ? { four_eyes: r.four_eyes } : {};
  if (r.failed) throw Object.assign(new StepFailed(r.failed, r.outcome.kind), four);
  if (r.breached) throw Object.assign(new StepFailed(r.breached, "breached"), four);
  try {
    const s = stepResult(action as keyof typeof DONE, r.outcome);
    return { ...s, message: `${s.message}${r.also ?? ""}`, ...four };
  } catch (e) {
    throw Object.assign(e as object, four);
  }
}

/** What watches an apply run (as Terraform's hooks): each step's start and end, and the verbose log. */
export interface ApplyObserver {
  stepStarted?(step: Step): void;
  stepFinished?(outcome: StepOutcome, done: number, total: number): void;
  log?(line: string): void;
}

export interface ApplyOptions {
  concurrency: number;
  isStopping: () => boolean;
  observers?: readonly ApplyObserver[];
  /** Tag each step's requests (its guard's reads, its sends, its read-backs) with stepTag(its change),
   *  for the client's request observer (apply --evidence). */
  tagRequests?: boolean;
  /** four_eyes of revsync.yaml: no batch is approved by its reviewer or its policy's creator. */
  fourEyes?: boolean;
  /** The run's check of each step's write before every send of it (ApiCore.gated): promote_from's, that
   *  the source environment still holds what the write sets (src/promotion/gate.ts). */
  gate?: (c: Change) => Promise<string | undefined>;
  kinds?: Registry;
}

/** A step's outcome as the report lists it. */
export function reportEntry(o: StepOutcome): ApplyReport["outcomes"][number] {
  return {
    address: o.step.change.address,
    action: o.step.change.action,
    status: o.status,
    outcome: outcomeOf(o),
    message: o.message,
    ...(o.four_eyes ? { four_eyes: o.four_eyes } : {}),
    ...(o.answered !== undefined ? { answered: o.answered } : {}),
  };
}

/** The tag of a step's requests: the change it applies (a batch's review and approve share an address). */
export const stepTag = (c: Pick<Change, "action" | "address">): string => `${c.action} ${c.address}`;

/** After every step: each kind's last word on its writes that landed (a create whose place in the
 *  hierarchy another policy took meanwhile was undone: overwritten, not done). */
async function settle(outcomes: StepOutcome[], appliers: ReadonlyMap<Kind, KindApply>): Promise<void> {
  for (const [kind, applier] of appliers) {
    const landed = outcomes.filter((o) => o.step.kind === kind && o.status === "done");
    if (!applier.settle || !landed.length) continue;
    const said = await applier.settle(landed.map((o) => o.step.change));
    for (const o of landed) {
      const s = said.get(o.step.change.address);
      if (!s) continue;
      if ("unchecked" in s) o.message = `${o.message} (${s.unchecked})`;
      else Object.assign(o, { status: "failed", outcome: "overwritten", message: s.overwritten });
    }
  }
}

/** Applies a checked plan's writes in dependency order. Each write is checked right before every send of
 *  it by its kind's guard: the plan may have been saved a while ago, or the service changed while the
 *  prompt, or a Retry-After, waited. */
export async function applyPlan(core: ApiCore, plan: CheckedPlan, opts: ApplyOptions): Promise<ApplyReport> {
  const kinds = opts.kinds ?? KINDS;
  const observers = opts.observers ?? [];
  const log = (line: string): void => observers.forEach((o) => o.log?.(line));
  const steps = buildSteps(plan, kinds);
  const reviewers = new Map((plan.four_eyes?.approves ?? []).flatMap((a) => (a.reviewed_by ? [[a.address, a.reviewed_by] as const] : [])));
  const run = { core, user: core.auth.username ?? "", changes: plan.changes, fourEyes: !!opts.fourEyes, reviewers, log };
  const appliers = new Map(kinds.filter((k) => steps.some((s) => s.kind === k)).map((k) => [k, k.apply(run)] as const));
  let finished = 0;
  // No retry here: each write is one write unit (src/api/write.ts), with one budget. Each step's requests
  // are sent through a view of the client that names its change, passed down explicitly (an async context
  // would tag them too, at a cost on every promise of the run).
  const viewOf = (c: Change): ApiCore => {
    const tagged = opts.tagRequests ? core.tagged(stepTag(c)) : core;
    const gate = opts.gate;
    return gate ? tagged.gated(() => gate(c)) : tagged;
  };
  const outcomes = await schedule(steps, async (s) => stepWords(s.change.action, await runStep(s, appliers.get(s.kind) as KindApply, viewOf(s.change))), {
    concurrency: opts.concurrency,
    isStopping: opts.isStopping,
    onStart: (s) => observers.forEach((o) => o.stepStarted?.(s)),
    onFinish: (o) => {
      finished++;
      observers.forEach((x) => x.stepFinished?.(o, finished, steps.length));
    },
  });
  await settle(outcomes, appliers);
  const entries = outcomes.map(reportEntry);
  return { environment: plan.environment, outcomes: entries, summary: countOutcomes(entries), interrupted: opts.isStopping() };
}
