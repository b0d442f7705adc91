import { relative, resolve } from "node:path";
import type { ApiCore } from "../api/core.js";
import {
  applyPlan,
  checkAgainstGit,
  checkPayloads,
  readyToApply,
  reportEntry,
  type ApplyObserver,
  type ApplyReport,
  type CheckedPlan,
  type PayloadsChecked,
} from "../apply/run.js";
import type { DesiredState, Repo, ResolvedEnv } from "../config/repo.js";
import type { Governor } from "../api/governor.js";
import type { CiContext } from "../evidence/record.js";
import type { Approver } from "../guardrails/identity.js";
import type { Judging, Override } from "../guardrails/judge.js";
import type { Registry } from "../kinds/kind.js";
import type { AskYes } from "../run-output.js";
import { isApplied, type Change, type Plan } from "../plan/model.js";
import { unreadError } from "../report/unread.js";
import { Cancelled, UserError } from "../errors.js";
import type { LockBackend } from "../lock/lock.js";
import { LockHeld, unlockCommand } from "../lock/lock.js";
import { shellQuote } from "../shell-quote.js";
import { applyLine, hasApplied, hasChanges, planText } from "../report/plan.js";
import type { ApplyView } from "../report/views/apply.js";
import type { ApplySignals } from "./apply-signals.js";
import { changedPolicyFiles, TreeStatus } from "../evidence/context.js";
import { guardrailsBeforeWriting, heldBackError } from "./apply-guardrails.js";
import { approversOf as approvers, approverUser } from "./guardrails.js";
import { loadGuardrails, type GuardrailSetup } from "../guardrails/setup.js";
import type { PullRequestApproval } from "../evidence/record.js";
import type { SessionOutput } from "./output.js";
import { checkBinding, readPlanFile } from "../plan/saved.js";
import { startEvidence, type Evidence } from "./evidence.js";
import { fourEyesBeforeWriting } from "./four-eyes.js";
import { approverSincePlan } from "../plan/four-eyes.js";
import { lockBackend, lockDisabled, lockTimeoutOf, takeEnvLock, type ApplyLockFlags, type EnvLock } from "./env-lock.js";
import type { PromotionSource } from "../promotion/source.js";
import { checkSavedPromotion, checkSavedSource, promotionLeftBlocked, testsBeforeWriting, testsRefusal } from "../promotion/apply.js";
import { promotionGate } from "../promotion/gate.js";

/** What the evidence record and --format json say of a run told --lock=false. */
const NO_LOCK = { disabled: true, note: "--lock=false: applied without the environment's lock" } as const;

/** What apply is asked to do, as the command line says it. */
export interface ApplyRequest {
  /** The saved plan's file as the command line names it (undefined: plan now), and where it is. */
  planFile?: string;
  planPath?: string;
  /** --target: refused with a saved plan, else the plan made now is of these. */
  target?: string[];
  /** --env, and the REVSYNC_ENV variable: the environment asked for, either way. */
  envFlag?: string;
  envVariable?: string;
  autoApprove?: boolean;
  /** --evidence DIR. */
  evidence?: string;
  lock: ApplyLockFlags;
  /** --override and --reason, checked when the run opens (before anything is read). */
  overrides: () => Override[];
  quiet?: boolean;
}

/** What the command wires an apply with: its output, variables, working directory, kinds and moment,
 *  how it opens the repo, an environment and a client, how it reads git and makes a plan, the signal
 *  handlers, the prompt, the progress line, and the view of its report. */
export interface ApplyWiring {
  out: SessionOutput;
  penv: NodeJS.ProcessEnv;
  cwd: string;
  kinds: Registry;
  now: number;
  /** The run's wall clock read again (the moment right before the first write). */
  clock(): number;
  openRepo(): Repo;
  openEnv(repo: Repo, name: string | undefined): ResolvedEnv;
  openClient(env: ResolvedEnv, observer: Evidence["recorder"] | undefined): ApiCore;
  concurrency(): number;
  desiredState(repo: Repo, env: ResolvedEnv): DesiredState;
  /** A plan made now, as apply makes one; `target` (when given) in place of --target. */
  makePlan(repo: Repo, env: ResolvedEnv, core: ApiCore, opts: PlanOpts): Promise<Plan>;
  /** The user the approver identity's variables (or kept sign-in) name, without signing in; `variable`:
   *  REVSYNC_APPROVER_USER's text alone names it. */
  approverNamed(env: ResolvedEnv): { user: string | null; variable?: true };
  /** promote_from: the environment's source, opened (its own client); undefined without one. */
  openPromotion(repo: Repo, env: ResolvedEnv, tree?: TreeStatus): Promise<PromotionSource | undefined>;
  /** The CI run this apply is part of, or null. */
  ci(): CiContext | null;
  ask: AskYes;
  signals(warn: (line: string) => void): ApplySignals;
  progress(text: string, governor: Governor): Promise<{ update(text: string): void; stop(): void }>;
  /** Says how often the service turned requests away, when it did. */
  noteTurnedAway(governor: Governor, env: ResolvedEnv): void;
  view: ApplyView;
}

/** What a plan apply makes is made with: the guardrails it computes facts for, the promotion source it
 *  compares with, and (for a saved plan's facts) the saved plan's targets. */
export interface PlanOpts {
  guardrails?: { setup: GuardrailSetup; judging: Judging };
  promotion?: PromotionSource;
  target?: { of: string[] };
}

/** One apply run, as the command wires it: what it was asked, its streams, the environment, the saved plan (its
 *  payloads checked as it was read), where the lock is kept, the evidence, the client and the signals. */
interface Run {
  req: ApplyRequest;
  w: ApplyWiring;
  out: SessionOutput;
  repo: Repo;
  env: ResolvedEnv;
  planFile: string | undefined;
  saved: PayloadsChecked | undefined;
  backend: LockBackend | undefined;
  evidence: Evidence | undefined;
  /** git's status of the policy repo, asked once for the run (the record's, when it keeps one). */
  gitStatus: TreeStatus;
  core: ApiCore;
  signals: ApplySignals;
  /** The environment's lock, held from before the first write to after the last. */
  lock?: EnvLock;
  /** The run's end, once settled: its exit code. */
  settled?: Promise<number>;
  /** The environment's guardrails and freeze windows (none: undefined). */
  guardrails?: GuardrailSetup;
  /** The pull request's approval, once read (for the guardrails; four eyes reads no second time). */
  approval?: PullRequestApproval;
  /** The guardrails' judgment of the plan at another moment (with guardrails): the refusal, or undefined. */
  judgedAgain?: (now: number) => UserError | undefined;
  /** The commit the policy repo is at and the policy files that differ from it (four eyes holds them). */
  tree?: { commit: string | null; files: string[] };
  /** promote_from: the source environment, opened (its own client), which each write is checked against. */
  promotion?: PromotionSource;
}

/** Everything checked before anything is read or sent: the saved plan (whole, as it was reviewed: its
 *  payloads what its diff shows, for this environment and tenant), the lock's flags and where it is kept,
 *  the evidence folder. */
function openRun(req: ApplyRequest, w: ApplyWiring): Run {
  const { out, kinds } = w;
  const repo = w.openRepo();
  const { planFile } = req;
  const read = planFile ? readPlanFile(req.planPath ?? planFile, kinds) : undefined;
  if (read && req.target?.length) {
    // A saved plan is applied whole, as it was reviewed; a subset of it is another plan, made by plan.
    throw new UserError(
      `--target cannot narrow a saved plan (${planFile}): a saved plan is applied exactly as it was reviewed, so nothing was sent`,
      `make a plan of the target: revsync plan ${req.target.map((t) => `--target ${shellQuote(t)}`).join(" ")} --out FILE, then apply that file`,
    );
  }
  // What is sent is what was shown: a payload that says more or other than its diff sends nothing.
  const saved = read && checkPayloads(read, kinds);
  // The plan's environment is the environment: --env and REVSYNC_ENV, where given, must name it.
  const chosen = req.envFlag ?? (req.envVariable || undefined);
  if (saved && chosen !== undefined && chosen !== saved.environment) {
    const by = req.envFlag !== undefined ? `--env ${JSON.stringify(chosen)}` : `REVSYNC_ENV=${JSON.stringify(chosen)}`;
    throw new UserError(
      `the plan ${planFile} is for environment ${JSON.stringify(saved.environment)}, not ${JSON.stringify(chosen)} (${by}): nothing was sent`,
    );
  }
  const env = w.openEnv(repo, chosen ?? saved?.environment);
  if (saved && saved.environment !== env.name) {
    throw new UserError(`the plan ${planFile} is for environment ${JSON.stringify(saved.environment)}, not ${JSON.stringify(env.name)}`);
  }
  if (saved && planFile) checkBinding(saved, env, planFile);
  // A rule that cannot be read, or flags that do not go together, stop the run before anything is read.
  req.overrides();
  const guardrails = loadGuardrails(repo, env.name, kinds, w.now);
  const noLock = lockDisabled(req.lock);
  lockTimeoutOf(req.lock);
  const backend = noLock ? undefined : lockBackend(repo, env, w.penv);
  // The record is written at the end of every run that got as far as a plan, whatever its end.
  const evidence = startEvidence({ evidence: req.evidence, cwd: w.cwd, penv: w.penv }, repo, env, planFile);
  const core = w.openClient(env, evidence?.recorder);
  const gitStatus = evidence?.recorder.tree ?? new TreeStatus(repo.root, undefined, w.penv);
  const signals = w.signals((line) => out.warn(line));
  return { req, w, out, repo, env, planFile, saved, backend, evidence, gitStatus, core, signals, ...(guardrails ? { guardrails } : {}) };
}

/** An apply from a tree whose policy files differ from its commit: said on stderr, naming the files (the
 *  evidence record says it too). What apply holds a saved plan to, or plans from, is the files as they are. */
async function warnUncommitted(run: Run, plan: { changes: readonly Change[]; four_eyes?: unknown }): Promise<void> {
  const { repo, out, w } = run;
  const paths = [relative(repo.root, repo.configFile), relative(repo.root, repo.policiesDir) || "."];
  // A values file may lie anywhere in the repo, outside the policies folder: each one the plan reads too.
  for (const c of plan.changes) if (c.values?.file) paths.push(relative(repo.root, resolve(w.cwd, c.values.file)));
  // Under four eyes the tree must be clean as the plan read it: git is asked now, after the plan read
  // the files, not the run's status asked as it started.
  const shared = run.env.fourEyes || plan.four_eyes ? undefined : run.gitStatus;
  const { commit, files } = await changedPolicyFiles(repo.root, paths, w.cwd, w.penv, shared);
  run.tree = { commit, files };
  if (!files.length) return;
  const what = run.saved ? "holds the saved plan to them" : "plans from them";
  out.warn(
    `the policy files differ from ${commit ? `commit ${commit.slice(0, 12)}` : "the commit"}: ${files.join(", ")}; this apply ${what} as they are, not as committed`,
  );
}

/** The plan to apply: the saved one (checked when it was read, and held to what git's policy files ask for
 *  now; each write is checked against the service right before every send of it, after the prompt), or
 *  one made now, its payloads checked once. */
async function planToApply(run: Run): Promise<PayloadsChecked> {
  // Said before a saved plan is held to git (the files may be why it is refused), after a new plan is made.
  if (run.saved) await warnUncommitted(run, run.saved);
  const plan = run.saved
    ? checkAgainstGit(run.saved, run.promotion?.here ?? run.w.desiredState(run.repo, run.env), run.w.kinds)
    : checkPayloads(
        await run.w.makePlan(run.repo, run.env, run.core, { ...guardrailsOpt(run), ...(run.promotion ? { promotion: run.promotion } : {}) }),
        run.w.kinds,
      );
  if (!run.saved) await warnUncommitted(run, plan);
  run.evidence?.recorder.setPlan(plan);
  run.evidence?.recorder.setUser(run.core.auth.username);
  return plan;
}

/** The guardrails a plan made by apply computes its facts for (it is judged again, with this run's
 *  approvals and overrides, before anything is written). */
function planGuardrails(run: Run): { setup: GuardrailSetup; judging: Judging } | undefined {
  if (!run.guardrails) return undefined;
  return { setup: run.guardrails, judging: { now: run.w.now, approvers: approversOf(run), overrides: [] } };
}

/** planGuardrails as a plan's options. */
function guardrailsOpt(run: Run): Pick<PlanOpts, "guardrails"> {
  const guardrails = planGuardrails(run);
  return guardrails ? { guardrails } : {};
}

/** Who approves in this run: the approver identity (signed in, when the client holds its sign-in: the user
 *  the service's token names; else the user its variables or token name, which plan shows and apply
 *  judges again; never REVSYNC_APPROVER_USER's text), and the pull request's independent approvals that
 *  were read. */
function approversOf(run: Run, pr?: PullRequestApproval): Approver[] {
  return approvers(
    approverUser(run.core.approverAuth, () => run.w.approverNamed(run.env)),
    pr,
  );
}

/** The plan judged now (a saved plan was judged when it was made; time has passed), refused while
 *  anything holds it back; the plan as apply shows it. */
async function judgedNow(run: Run, plan: PayloadsChecked): Promise<Plan> {
  // Rules git no longer holds judge nothing now: the saved plan's outcomes are not shown as today's.
  if (!run.guardrails) return plan.guardrails ? { ...plan, guardrails: undefined, changes: plan.changes.map(({ guardrails: _g, ...c }) => c) } : plan;
  const { w } = run;
  const judged = await guardrailsBeforeWriting(run.saved ? await factsOfNow(run, plan, run.guardrails) : plan, {
    ...run,
    setup: run.guardrails,
    now: w.now,
    overrides: run.req.overrides(),
    penv: w.penv,
    kinds: w.kinds,
    ci: () => w.ci(),
    approvers: (approval) => approversOf(run, approval),
  });
  if (judged.approval) run.approval = judged.approval;
  run.judgedAgain = judged.again;
  return judged.shown;
}

/** A saved plan's facts are its own word (anyone can edit them and compute its checksum again; in CI a
 *  job the pull request controls may have made it): where a rule's `when` reads facts, they are those of
 *  a plan made now from git and the service, change by change. A change that plan does not hold is not
 *  what the service and git ask for now: nothing is judged on the saved facts, nothing is sent. */
async function factsOfNow(run: Run, plan: Plan, setup: GuardrailSetup): Promise<Plan> {
  if (!setup.rules.some((r) => r.when)) return plan;
  const now = await run.w.makePlan(run.repo, run.env, run.core, { ...guardrailsOpt(run), target: { of: plan.targets } });
  const key = (c: Change): string => `${c.action} ${c.address}`;
  const fresh = new Map(now.changes.filter(isApplied).map((c) => [key(c), c.facts]));
  const changes = plan.changes.map((c) => {
    if (!isApplied(c)) return c;
    const facts = fresh.get(key(c));
    if (!facts)
      throw new UserError(
        `the guardrails judge ${c.address} (${c.action}) on what git and the service give now, and a plan made now holds no such change: nothing was sent`,
        "run revsync plan again, review it, and apply that plan",
      );
    return { ...c, facts };
  });
  return { ...plan, changes };
}

/** Asks before writing, unless --auto-approve (required without a terminal); false when declined. */
async function confirmed(run: Run): Promise<boolean> {
  const { out, core, signals } = run;
  if (run.req.autoApprove) return true;
  if (!out.interactive) throw new UserError("apply writes to the service: without a terminal to answer on (stdin) it needs --auto-approve");
  // However long the answer takes, it is not the service's time: it does not count against --timeout.
  const yes = await signals.without(() => core.untimed(() => run.w.ask("\nDo you want to perform these actions? Only 'yes' will be accepted: ")));
  if (!yes) {
    run.evidence?.recorder.setApproval("declined");
    out.error("apply cancelled: nothing was written");
  }
  return yes;
}

/** What comes between the plan and the first write: the plan shown, the sign-in's checks (each once),
 *  four eyes, the prompt. The plan ready to apply, or the exit code of a run that ends here. */
async function beforeWriting(run: Run, plan: PayloadsChecked): Promise<CheckedPlan | number> {
  const { out, core, env, evidence } = run;
  const shown = await judgedNow(run, plan);
  out.info(planText(shown, out.err));
  if (!hasApplied(plan)) {
    out.info(hasChanges(plan) ? "Nothing that revsync can apply: each entry above is shown with the reason it is not applied." : "Nothing to apply.");
    run.w.noteTurnedAway(core.governor, env);
    const blocked = promotionLeftBlocked(plan);
    if (blocked) throw blocked;
    return unreadCode(run, plan, 0);
  }
  await promotionTestsNow(run);
  const held = heldBackError(shown);
  if (held) throw held;
  // Four eyes: the environment's rule, or the one the saved plan was made under.
  const fourEyes = env.fourEyes || !!plan.four_eyes;
  const ready = readyToApply(plan, core, { fourEyes, kinds: run.w.kinds });
  evidence?.recorder.setFourEyes(fourEyes, core.approverAuth ? (core.approverAuth.username ?? null) : null);
  // The plan was reviewed with its approver in mind: another one now is said (the rule holds for it).
  const since = approverSincePlan(plan, (core.approverAuth ?? core.auth).username ?? null);
  if (since) {
    out.warn(since);
    evidence?.recorder.setApproverNote(since);
  }
  const record = evidence && ((a: Parameters<Evidence["recorder"]["setPullRequestApproval"]>[0]) => evidence.recorder.setPullRequestApproval(a));
  const recordLocalApply = evidence && ((): void => evidence.recorder.setLocalApply());
  await fourEyesBeforeWriting(core, ready, {
    penv: run.w.penv,
    ci: run.w.ci(),
    out,
    repo: run.repo,
    env,
    fourEyes,
    ...(record ? { record } : {}),
    ...(run.approval ? { approval: run.approval } : {}),
    ...(recordLocalApply ? { recordLocalApply } : {}),
    ...(run.tree ? { tree: run.tree } : {}),
  });
  if (run.signals.isStopping()) return interrupted(run);
  const approverWords = core.approverAuth ? `; approves as ${core.approverAuth.username ?? "the approver identity"}` : "";
  out.info(
    `Target: environment ${JSON.stringify(env.name)}, ${env.baseUrl}, realm ${env.realm}${core.auth.username ? `, as ${core.auth.username}` : ""}${approverWords}.`,
  );
  if (!(await confirmed(run))) return 1;
  evidence?.recorder.setApproval(run.req.autoApprove ? "auto-approve" : "prompt");
  return ready;
}

function interrupted(run: Run): number {
  run.out.error("apply interrupted before it wrote anything");
  return 130;
}

/** One writer per environment: the lock before the first write (the sign-in meanwhile), or, told
 *  explicitly, none. An exit code when the run ends here. */
async function lockEnvironment(run: Run, plan: CheckedPlan): Promise<number | undefined> {
  const { out, env, core, backend, evidence } = run;
  if (!backend) {
    out.warn(`--lock=false: this apply takes no lock of environment ${JSON.stringify(env.name)}; another apply at the same time may undo its writes unseen`);
    evidence?.recorder.setLock(NO_LOCK);
    return undefined;
  }
  const opts = {
    planChecksum: plan.checksum,
    serviceUser: core.auth.username ?? null,
    flags: run.req.lock,
    penv: run.w.penv,
    out,
    isStopping: run.signals.isStopping,
    requestDeadlineMs: core.requestDeadlineMs,
  };
  const untimed = <T>(fn: () => Promise<T>): Promise<T> => core.untimed(fn);
  const [taken] = await Promise.all([takeEnvLock(backend, env, { ...opts, untimed }), core.auth.token().catch(() => undefined)]);
  run.lock = taken;
  evidence?.recorder.setLock(taken.evidence());
  return run.signals.isStopping() ? interrupted(run) : undefined;
}

/** What watches the writes: the evidence record, the signal handlers (what a stop at once lists), the
 *  progress line and the verbose log. */
function observers(run: Run, progress: { update(text: string): void }): ApplyObserver[] {
  const { out, signals } = run;
  const watch: ApplyObserver = {
    stepStarted: (s) => {
      signals.started(s.id, `${s.change.action} ${s.change.address}`);
      out.verbose(`start ${s.change.action} ${s.change.address}`);
      progress.update(`Applying: ${s.change.action} ${s.change.address}`);
    },
    stepFinished: (o, done, total) => {
      signals.finished(o.step.id, applyLine(reportEntry(o), out.err));
      progress.update(`Applying: ${done}/${total} finished`);
      out.verbose(`${o.status} ${o.step.change.action} ${o.step.change.address}: ${o.message}`);
    },
    log: (line) => out.verbose(line),
  };
  return run.evidence ? [run.evidence.recorder, watch] : [watch];
}

/** The writes, then the report: the lock goes before it is printed. Any step that did not succeed
 *  (failed, blocked, unknown, overwritten) fails the run. */
async function writeAll(run: Run, plan: CheckedPlan): Promise<number> {
  const { out, core, env, w } = run;
  const progress = await w.progress("Applying…", core.governor);
  let report: ApplyReport;
  try {
    const fourEyes = env.fourEyes || !!plan.four_eyes;
    const opts = {
      concurrency: w.concurrency(),
      isStopping: run.signals.isStopping,
      observers: observers(run, progress),
      fourEyes,
      kinds: w.kinds,
      ...(run.promotion ? { gate: promotionGate(run.promotion, w.kinds) } : {}),
    };
    report = await applyPlan(core, plan, { ...opts, tagRequests: run.evidence !== undefined });
  } finally {
    progress.stop();
  }
  if (run.evidence) run.evidence.report = report;
  const blocked = report.interrupted ? undefined : promotionLeftBlocked(plan);
  const wrote = report.interrupted ? 130 : report.outcomes.some((o) => o.status === "failed") || blocked ? 1 : 0;
  const code = await settle(run, { exitCode: unreadCode(run, plan, wrote, false) });
  w.view({ report, lock: run.backend ? run.lock?.evidence() : NO_LOCK }, out);
  w.noteTurnedAway(core.governor, env);
  // Writes blocked for promotion were not sent: the run says so and fails, though the rest went through.
  if (blocked) {
    out.error(blocked.message);
    if (blocked.hint) out.hint(`Hint: ${blocked.hint}`);
  }
  unreadCode(run, plan, wrote);
  return code;
}

/** A saved plan's source's policy tests once more before anything is written (a plan made now ran them). */
async function promotionTestsNow(run: Run): Promise<void> {
  if (!run.promotion || !run.saved) return;
  const tests = await testsBeforeWriting(run.promotion, run.w.kinds);
  if (tests) run.evidence?.recorder.setPromotionTests(tests);
  if (tests?.failed.length) throw testsRefusal(run.promotion.name, tests);
}

/** A plan this run made that could not read part of the service: its writes went on (a read that failed
 *  fails only what it feeds), and the run fails, saying what was not read (`say`: now). A saved plan's
 *  unread were the reviewer's to see: said, the exit code its writes'. */
function unreadCode(run: Run, plan: Pick<Plan, "unread">, code: number, say = true): number {
  if (!plan.unread?.length) return code;
  if (say && run.saved) run.out.warn(unreadError(plan.unread));
  else if (say) run.out.error(unreadError(plan.unread));
  return run.saved || code !== 0 ? code : 1;
}

/** The run from the plan to the report. */
async function work(run: Run): Promise<number> {
  if (run.saved && run.planFile) checkSavedPromotion(run.saved, run.env.promoteFrom, run.planFile);
  run.promotion = await run.w.openPromotion(run.repo, run.env, run.gitStatus);
  if (run.saved && run.planFile) checkSavedSource(run.saved, run.promotion, run.planFile);
  const ready = await beforeWriting(run, await planToApply(run));
  if (typeof ready === "number") return ready;
  const stopped = await lockEnvironment(run, ready);
  if (stopped !== undefined) return stopped;
  // The answer to the prompt and the wait for the lock take time: a window may have opened meanwhile.
  const late = run.judgedAgain?.(run.w.clock());
  if (late) throw late;
  return writeAll(run, ready);
}

/** Decides what becomes of the lock at the run's end: kept while a write may still be in flight (a stop at
 *  once: a waiter must not read the service before that write lands; a file of this machine is taken over
 *  once this process is gone, a git ref released with the unlock command named, each waiting out this
 *  run's request deadline first), else let go, leaving the next apply the wait a write cut short still
 *  owes (docs/decisions.md, "A takeover waits for the dead"). */
function decideLock(run: Run): void {
  const { lock, out, env } = run;
  if (!lock) return;
  if (run.signals.inFlight().length) {
    lock.keep("writes were in flight when the run stopped at once");
    const how =
      run.backend?.kind === "git"
        ? `once they have ended (revsync plan shows what landed), release it: ${unlockCommand(env.name, lock.holder.id, !out.interactive)} (the next apply then waits out this run's request deadline before it writes)`
        : "the next apply on this machine takes it over once this process has ended, and waits out this run's request deadline before it writes";
    out.warn(`the lock of environment ${JSON.stringify(env.name)} is kept: writes were in flight when the run stopped; ${how}`);
    return;
  }
  lock.letGo(run.core.writesMayLandUntil());
}

/** The end of a run (once): the lock's fate decided, the evidence record written while the lock is still
 *  held (so records of one environment are written one at a time, in the order the lock was held), then
 *  the lock let go. The exit code: 1 for a run asked to leave evidence that could not, whose writes went
 *  through. */
async function settle(run: Run, end: { exitCode: number; stoppedNow?: boolean; error?: string }): Promise<number> {
  if (run.settled) return run.settled;
  run.settled = (async () => {
    decideLock(run);
    if (run.lock) run.evidence?.recorder.setLock(run.lock.evidence());
    const kept = (await run.evidence?.finish(run.out, end)) ?? true;
    await run.lock?.release(run.out);
    return !kept && end.exitCode === 0 ? 1 : end.exitCode;
  })();
  return run.settled;
}

/** A run that stopped on an error: nothing more is written, the evidence says why. */
async function failed(run: Run, e: unknown): Promise<number> {
  const { evidence, out } = run;
  // Left at the prompt (Ctrl-C, end of input): nothing was written, the process exits 130.
  if (e instanceof Cancelled) {
    evidence?.recorder.setApproval("cancelled");
    await settle(run, { exitCode: 130, error: e.message });
    throw e;
  }
  // Interrupted while waiting for another apply's lock: nothing was written.
  if (e instanceof LockHeld && run.signals.isStopping()) {
    out.error("apply interrupted while it waited for the lock: nothing was written");
    return settle(run, { exitCode: 130, error: e.message });
  }
  await settle(run, { exitCode: 1, error: e instanceof Error ? e.message : String(e) });
  throw e;
}

/** revsync apply [PLANFILE]: the run until its report or until a second signal stops it at once; the
 *  evidence record of its end. */
export async function applySession(req: ApplyRequest, w: ApplyWiring): Promise<number> {
  const run = openRun(req, w);
  const { out } = w;
  try {
    let first: number | "stop now";
    try {
      first = await Promise.race([work(run), run.signals.stopNow]);
    } catch (e) {
      return await failed(run, e);
    }
    if (first !== "stop now") return await settle(run, { exitCode: first });
    out.error(run.signals.stopNowMessage());
    return await settle(run, { exitCode: 130, stoppedNow: true });
  } finally {
    // The handlers stay until the client is closed: a signal then changes nothing, rather than killing
    // a process whose writes are done without a word.
    if (!run.signals.inFlight().length) await Promise.all([run.core.close(), run.promotion?.core.close()]);
    run.signals.close();
  }
}
