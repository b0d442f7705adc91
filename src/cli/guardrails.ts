/** The guardrails of a command's run: its environment's rules and windows, the moment (the run's clock),
 *  who approves (the approver identity, and in CI the pull request's approvals) and the overrides its
 *  flags ask for. Judging them is src/guardrails/'s. */
import type { ApiCore } from "../api/core.js";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import type { PullRequestApproval } from "../evidence/record.js";
import type { Approver } from "../guardrails/identity.js";
import type { Judging, Override } from "../guardrails/judge.js";
import { loadGuardrails, type GuardrailSetup } from "../guardrails/setup.js";
import type { Registry } from "../kinds/kind.js";
import { approverNamedFor, ioOf } from "./context.js";
import type { GlobalFlags, OverrideFlags } from "./flags.js";

/** The run's wall clock: the machine's, or a test's. */
export const nowOf = (flags: GlobalFlags): number => (ioOf(flags).now ?? Date.now)();

/** --override and --reason, checked together: a reason names why, so neither goes without the other. */
export function overridesOf(flags: OverrideFlags): Override[] {
  const names = flags.override ?? [];
  if (flags.reason !== undefined && !names.length) throw new UserError("--reason goes with --override NAME: it says why NAME is overridden");
  if (names.length && !flags.reason?.trim()) throw new UserError(`--override ${names.join(", ")} needs --reason TEXT: why, for the plan and the evidence`);
  return names.map((name) => ({ name, reason: flags.reason ?? "" }));
}

/** Who approves in this run: the approver identity (signed in, when `core` holds its sign-in: the user
 *  the service's token names; else the user its variables or token name, which plan shows and apply
 *  judges again; never REVSYNC_APPROVER_USER's text), and the pull request's independent approvals that
 *  were read. */
export function approversOf(flags: GlobalFlags, env: ResolvedEnv, core: ApiCore | undefined, pr?: PullRequestApproval): Approver[] {
  const auth = core?.approverAuth;
  const vars = auth ? undefined : approverNamedFor(env, flags);
  const named = auth ? (auth.usernameFrom === "variable" ? undefined : auth.username) : vars?.variable ? undefined : vars?.user;
  const out: Approver[] = named ? [{ user: named, via: "approver identity" }] : [];
  for (const user of pr?.independent ?? []) out.push({ user, via: "pull request approval" });
  return out;
}

/** The environment's guardrails and how this run judges them; undefined without any. */
export function guardrailsOf(
  repo: Repo,
  env: ResolvedEnv,
  flags: GlobalFlags & OverrideFlags,
  approvers: Approver[],
  kinds: Registry,
): { setup: GuardrailSetup; judging: Judging } | undefined {
  const now = nowOf(flags);
  const overrides = overridesOf(flags);
  const setup = loadGuardrails(repo, env.name, kinds, now);
  if (!setup) {
    if (overrides.length) throw new UserError(`--override ${overrides[0]?.name}: environment ${env.name} has no guardrails or freeze windows in revsync.yaml`);
    return undefined;
  }
  return { setup, judging: { now, approvers, overrides } };
}
