import { resolve } from "node:path";
import { pickView } from "../report/view.js";
import { applyViews } from "../report/views/apply.js";
import { applySignals } from "../session/apply-signals.js";
import { applySession } from "../session/apply.js";
import type { ApplyLockFlags } from "../session/env-lock.js";
import { approverNamedFor, concurrencyOf, cwdOf, desiredState, envOf, openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags, OverrideFlags } from "./flags.js";
import { ciOf } from "./four-eyes.js";
import { nowOf, overridesOf } from "./guardrails.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { startProgress } from "./progress.js";
import { askYes } from "./prompt.js";
import { noteTurnedAway } from "./rate-limit.js";
import { makePlan } from "./reading.js";
import { openPromotion } from "./promotion.js";

export interface ApplyFlags extends GlobalFlags, ApplyLockFlags, OverrideFlags {
  autoApprove?: boolean;
  evidence?: string;
}

/** revsync apply [PLANFILE]: the apply session (src/session/apply.ts), wired to this run's streams,
 *  variables, prompt, signals and progress line, its report in the view --format picked. */
export async function runApply(flags: ApplyFlags, out: Output, _r: unknown, args: string[]): Promise<number> {
  const view = await pickView(applyViews, flags.format);
  const planFile = args[0];
  const request = {
    ...(planFile !== undefined ? { planFile, planPath: resolve(cwdOf(flags), planFile) } : {}),
    ...(flags.target ? { target: flags.target } : {}),
    ...(flags.env !== undefined ? { envFlag: flags.env } : {}),
    ...(envOf(flags).REVSYNC_ENV !== undefined ? { envVariable: envOf(flags).REVSYNC_ENV } : {}),
    ...(flags.evidence !== undefined ? { evidence: flags.evidence } : {}),
    autoApprove: !!flags.autoApprove,
    lock: { ...(flags.lock !== undefined ? { lock: flags.lock } : {}), ...(flags.lockTimeout !== undefined ? { lockTimeout: flags.lockTimeout } : {}) },
    overrides: () => overridesOf(flags),
  };
  return applySession(request, {
    out,
    view,
    penv: envOf(flags),
    cwd: cwdOf(flags),
    kinds: kindsOf(out.io),
    now: nowOf(flags),
    clock: () => nowOf(flags),
    openRepo: () => openRepo(flags),
    openEnv: (repo, name) => openEnv(repo, flags, name),
    openClient: (env, recorder) =>
      openClient(env, flags, out, recorder && { onRequest: recorder.observe, onRequestStart: recorder.observeStart }, { approver: true }),
    concurrency: () => concurrencyOf(flags),
    desiredState: (repo, env) => desiredState(repo, env, out, flags),
    makePlan: (repo, env, core, { guardrails, promotion, target }) =>
      makePlan(repo, env, core, target ? { ...flags, target: target.of } : flags, out, {
        impact: false,
        applies: true,
        ...(guardrails ? { guardrails } : {}),
        ...(promotion ? { promotion } : {}),
      }),
    approverNamed: (env) => approverNamedFor(env, flags),
    openPromotion: (repo, env, tree) => openPromotion(repo, env, flags, out, tree),
    ci: () => ciOf(flags),
    ask: (q) => askYes(out, q),
    signals: (warn) => applySignals(out.io.signals, warn),
    progress: (text, governor) => startProgress(out, text, flags.quiet, governor),
    noteTurnedAway: (governor, env) => noteTurnedAway(governor, env, flags, out),
  });
}
