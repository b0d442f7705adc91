/** The guardrails of a command's run, read from its flags (src/session/guardrails.ts). */
import type { ApiCore } from "../api/core.js";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import type { PullRequestApproval } from "../evidence/record.js";
import type { Approver } from "../guardrails/identity.js";
import type { Judging, Override } from "../guardrails/judge.js";
import type { GuardrailSetup } from "../guardrails/setup.js";
import type { Registry } from "../kinds/kind.js";
import { approversOf as approvers, approverUser, guardrailsFor, overridesOf as checkedOverrides } from "../session/guardrails.js";
import { approverNamedFor, ioOf } from "./context.js";
import type { GlobalFlags, OverrideFlags } from "./flags.js";

/** The run's wall clock: the machine's, or a test's. */
export const nowOf = (flags: GlobalFlags): number => (ioOf(flags).now ?? Date.now)();

/** --override and --reason, checked together. */
export const overridesOf = (flags: OverrideFlags): Override[] => checkedOverrides(flags);

/** Who approves in this run: the approver identity (signed in, when `core` holds its sign-in: the user
 *  the service's token names; else the user its variables or token name, which plan shows and apply
 *  judges again; never REVSYNC_APPROVER_USER's text), and the pull request's independent approvals that
 *  were read. */
export function approversOf(flags: GlobalFlags, env: ResolvedEnv, core: ApiCore | undefined, pr?: PullRequestApproval): Approver[] {
  return approvers(
    approverUser(core?.approverAuth, () => approverNamedFor(env, flags)),
    pr,
  );
}

/** The environment's guardrails and how this run judges them; undefined without any. */
export function guardrailsOf(
  repo: Repo,
  env: ResolvedEnv,
  flags: GlobalFlags & OverrideFlags,
  approvers: Approver[],
  kinds: Registry,
): { setup: GuardrailSetup; judging: Judging } | undefined {
  return guardrailsFor(repo, env, { now: nowOf(flags), overrides: overridesOf(flags) }, approvers, kinds);
}
