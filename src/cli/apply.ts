import { resolve } from "node:path";
import { applyPlan, checkPayloads, reportEntry, requireUser } from "../apply/run.js";
import { Cancelled, UserError } from "../errors.js";
import { LockHeld } from "../lock/lock.js";
import type { Plan } from "../plan/model.js";
import { applyLine, hasApplied, hasChanges, planText } from "../report/plan.js";
import { pickView } from "../report/view.js";
import { applyViews } from "../report/views/apply.js";
import { applySignals } from "./apply-signals.js";
import { concurrencyOf, openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { checkBinding, readPlanFile } from "./plan-file.js";
import { startProgress } from "./progress.js";
import { askYes } from "./prompt.js";
import { makePlan } from "./reading.js";
import { noteTurnedAway } from "./rate-limit.js";
import { startEvidence, type Evidence } from "./evidence.js";
import { fourEyesBeforeWriting } from "./four-eyes.js";
import { lockBackend, lockDisabled, lockTimeoutOf, takeEnvLock, type ApplyLockFlags, type EnvLock } from "./lock.js";

/** What the evidence record and --format json say of a run told --lock=false. */
const NO_LOCK = { disabled: true, note: "--lock=false: applied without the environment's lock" } as const;

export interface ApplyFlags extends GlobalFlags, ApplyLockFlags {
  autoApprove?: boolean;
  evidence?: string;
}

export async function runApply(flags: ApplyFlags, out: Output, _r: unknown, args: string[]): Promise<number> {
  const view = await pickView(applyViews, flags.format);
  const repo = openRepo(flags);
  const planFile = args[0];
  const saved = planFile ? readPlanFile(resolve(out.io.cwd, planFile)) : undefined;
  if (saved && flags.target?.length) {
    // A saved plan is applied whole, as it was reviewed; a subset of it is another plan, made by plan.
    throw new UserError(
      `--target cannot narrow a saved plan (${planFile}): a saved plan is applied exactly as it was reviewed, so nothing was sent`,
      `make a plan of the target: revsync plan ${flags.target.map((t) => `--target ${JSON.stringify(t)}`).join(" ")} --out FILE, then apply that file`,
    );
  }
  // What is sent is what was shown: a payload that says more or other than its diff sends nothing.
  if (saved) checkPayloads(saved);
  const env = openEnv(repo, flags, flags.env ?? saved?.environment);
  if (saved && saved.environment !== env.name) {
    throw new UserError(`the plan ${planFile} is for environment ${JSON.stringify(saved.environment)}, not ${JSON.stringify(env.name)}`);
  }
  if (saved && planFile) checkBinding(saved, env, planFile);
  // The lock's flags and where it is kept are checked before anything is read or sent.
  const noLock = lockDisabled(flags);
  lockTimeoutOf(flags);
  const backend = noLock ? undefined : lockBackend(repo, env, flags);
  // The evidence folder is checked before anything is sent; the record is written at the end of every
  // run that got as far as a plan, whatever its end.
  const evidence: Evidence | undefined = startEvidence(flags, repo, env, planFile);
  const core = openClient(env, flags, out, evidence && { onRequest: evidence.recorder.observe, onRequestStart: evidence.recorder.observeStart }, {
    approver: true,
  });
  const signals = applySignals(out.io.signals, (line) => out.warn(line));
  /** The environment's lock, held from before the first write to after the last. */
  let lock: EnvLock | undefined;
  const work = async (): Promise<number> => {
    // A saved plan is checked write by write right before every send of each, after the prompt
    // (apply/run.ts, Guards): what changed since blocks only that write and its dependents.
    const plan: Plan = saved ?? (await makePlan(repo, env, core, flags, out, { impact: false }));
    evidence?.recorder.setPlan(plan);
    evidence?.recorder.setUser(core.auth.username);
    out.info(planText(plan, out.err));
    if (!hasApplied(plan)) {
      out.info(hasChanges(plan) ? "Nothing that revsync can apply: each entry above is shown with the reason it is not applied." : "Nothing to apply.");
      noteTurnedAway(core.governor, env, flags, out);
      return 0;
    }
    evidence?.recorder.setUser(requireUser(core, plan));
    // Four eyes: the environment's rule, or the one the saved plan was made under.
    const fourEyes = env.fourEyes || !!plan.four_eyes;
    evidence?.recorder.setFourEyes(fourEyes, core.approverAuth ? (core.approverAuth.username ?? null) : null);
    await fourEyesBeforeWriting(core, plan, {
      flags,
      out,
      repo,
      env,
      fourEyes,
      ...(evidence ? { record: (a: Parameters<Evidence["recorder"]["setPullRequestApproval"]>[0]) => evidence.recorder.setPullRequestApproval(a) } : {}),
    });
    if (signals.isStopping()) {
      out.error("apply interrupted before it wrote anything");
      return 130;
    }
    const approverWords = core.approverAuth ? `; approves as ${core.approverAuth.username ?? "the approver identity"}` : "";
    out.info(
      `Target: environment ${JSON.stringify(env.name)}, ${env.baseUrl}, realm ${env.realm}${core.auth.username ? `, as ${core.auth.username}` : ""}${approverWords}.`,
    );
    if (!flags.autoApprove) {
      if (!out.interactive) throw new UserError("apply writes to the service: without a terminal it needs --auto-approve");
      if (
        !(await signals.without(() =>
          // However long the answer takes, it is not the service's time: it does not count against --timeout.
          core.untimed(() => askYes(out, "\nDo you want to perform these actions? Only 'yes' will be accepted: ")),
        ))
      ) {
        evidence?.recorder.setApproval("declined");
        out.error("apply cancelled: nothing was written");
        return 1;
      }
    }
    evidence?.recorder.setApproval(flags.autoApprove ? "auto-approve" : "prompt");
    // One writer per environment: the lock before the first write (the sign-in meanwhile), or, told
    // explicitly, none.
    if (!backend) {
      out.warn(`--lock=false: this apply takes no lock of environment ${JSON.stringify(env.name)}; another apply at the same time may undo its writes unseen`);
      evidence?.recorder.setLock(NO_LOCK);
    } else {
      const taking = takeEnvLock(backend, env, {
        planChecksum: plan.checksum,
        serviceUser: core.auth.username ?? null,
        flags,
        out,
        isStopping: signals.isStopping,
      });
      const [taken] = await Promise.all([taking, core.auth.token().catch(() => undefined)]);
      lock = taken;
      evidence?.recorder.setLock(taken.evidence());
      if (signals.isStopping()) {
        out.error("apply interrupted before it wrote anything");
        return 130;
      }
    }
    const progress = await startProgress(out, "Applying…", flags.quiet, core.governor);
    try {
      const report = await applyPlan(core, plan, {
        concurrency: concurrencyOf(flags),
        isStopping: signals.isStopping,
        onStart: (s) => {
          evidence?.recorder.stepStarted(s.change);
          signals.started(s.id, `${s.change.action} ${s.change.address}`);
          out.verbose(`start ${s.change.action} ${s.change.address}`);
          progress.update(`Applying: ${s.change.action} ${s.change.address}`);
        },
        tagRequests: evidence !== undefined,
        onFinish: (o, done, total) => {
          evidence?.recorder.stepFinished(o);
          signals.finished(o.step.id, applyLine(reportEntry(o), out.err));
          progress.update(`Applying: ${done}/${total} finished`);
          out.verbose(`${o.status} ${o.step.change.action} ${o.step.change.address}: ${o.message}`);
        },
        log: (line) => out.verbose(line),
        fourEyes,
      });
      progress.stop();
      // After the last write: the lock goes before the report is printed.
      await releaseLock();
      view({ report, lock: backend ? lock?.evidence() : NO_LOCK }, out);
      noteTurnedAway(core.governor, env, flags, out);
      // Any step that did not succeed (failed, blocked, unknown, overwritten) fails the run.
      const code = report.interrupted ? 130 : report.outcomes.some((o) => o.status === "failed") ? 1 : 0;
      if (evidence) evidence.report = report;
      return code;
    } finally {
      progress.stop();
    }
  };
  /** Releases the lock unless a write may still be in flight (a stop at once): then a git lock is kept,
   *  and the unlock command named, as a waiter must not read the service before that write lands (a
   *  file of this machine is taken over once this process is gone, a moment later: it goes now). */
  const releaseLock = async (): Promise<void> => {
    if (!lock || lock.released) return;
    if (signals.inFlight().length && backend?.kind === "git") {
      out.warn(
        `the lock of environment ${JSON.stringify(env.name)} is kept: writes were in flight when the run stopped; once they have ended (revsync plan shows what landed), release it: revsync unlock --env ${env.name} ${lock.holder.id}`,
      );
      return;
    }
    await lock.release(out);
    evidence?.recorder.setLock(lock.evidence());
  };
  try {
    let first: number | "stop now";
    try {
      first = await Promise.race([work(), signals.stopNow]);
    } catch (e) {
      await releaseLock();
      // Left at the prompt (Ctrl-C, end of input): nothing was written, the process exits 130.
      if (e instanceof Cancelled) {
        evidence?.recorder.setApproval("cancelled");
        await evidence?.finish(out, { exitCode: 130, error: e.message });
        throw e;
      }
      // Interrupted while waiting for another apply's lock: nothing was written.
      if (e instanceof LockHeld && signals.isStopping()) {
        out.error("apply interrupted while it waited for the lock: nothing was written");
        await evidence?.finish(out, { exitCode: 130, error: e.message });
        return 130;
      }
      await evidence?.finish(out, { exitCode: 1, error: e instanceof Error ? e.message : String(e) });
      throw e;
    }
    await releaseLock();
    if (first !== "stop now") {
      // A run asked to leave evidence that could not fails, though its writes went through.
      const kept = (await evidence?.finish(out, { exitCode: first })) ?? true;
      return !kept && first === 0 ? 1 : first;
    }
    out.error(signals.stopNowMessage());
    await evidence?.finish(out, { exitCode: 130, stoppedNow: true });
    return 130;
  } finally {
    // The handlers stay until the client is closed: a signal then changes nothing, rather than killing
    // a process whose writes are done without a word.
    if (!signals.inFlight().length) await core.close();
    signals.close();
  }
}
