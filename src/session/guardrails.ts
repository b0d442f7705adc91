/** The guardrails of a command's run: its environment's rules and windows, the moment, who approves (the
 *  approver identity, and in CI the pull request's approvals) and the overrides asked for. Judging them
 *  is src/guardrails/'s. */
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import type { PullRequestApproval } from "../evidence/record.js";
import type { Approver } from "../guardrails/identity.js";
import type { Judging, Override } from "../guardrails/judge.js";
import { loadGuardrails, type GuardrailSetup } from "../guardrails/setup.js";
import type { Registry } from "../kinds/kind.js";

/** --override and --reason, checked together: a reason names why, so neither goes without the other. */
export function overridesOf(asked: { override?: string[]; reason?: string }): Override[] {
  const names = asked.override ?? [];
  if (asked.reason !== undefined && !names.length) throw new UserError("--reason goes with --override NAME: it says why NAME is overridden");
  if (names.length && !asked.reason?.trim()) throw new UserError(`--override ${names.join(", ")} needs --reason TEXT: why, for the plan and the evidence`);
  return names.map((name) => ({ name, reason: asked.reason ?? "" }));
}

/** The approver identity's user as the guardrails count it: the user the service's token names once
 *  signed in (`auth`); else the user its variables or kept token name, which plan shows and apply judges
 *  again; never REVSYNC_APPROVER_USER's text (undefined then: nobody). */
export function approverUser(
  auth: { username: string | null | undefined; usernameFrom: string | undefined } | undefined,
  named: () => { user: string | null; variable?: true },
): string | undefined {
  if (auth) return auth.usernameFrom === "variable" ? undefined : (auth.username ?? undefined);
  const vars = named();
  return vars.variable ? undefined : (vars.user ?? undefined);
}

/** Who approves in this run: the approver identity (`named`: as approverUser counts it), and the pull
 *  request's independent approvals that were read. */
export function approversOf(named: string | null | undefined, pr?: PullRequestApproval): Approver[] {
  const out: Approver[] = named ? [{ user: named, via: "approver identity" }] : [];
  for (const user of pr?.independent ?? []) out.push({ user, via: "pull request approval" });
  return out;
}

/** The environment's guardrails and how this run judges them; undefined without any (an override asked
 *  for then is an error: nothing could give it). */
export function guardrailsFor(
  repo: Repo,
  env: ResolvedEnv,
  run: { now: number; overrides: Override[] },
  approvers: Approver[],
  kinds: Registry,
): { setup: GuardrailSetup; judging: Judging } | undefined {
  const { now, overrides } = run;
  const setup = loadGuardrails(repo, env.name, kinds, now);
  if (!setup) {
    if (overrides.length) throw new UserError(`--override ${overrides[0]?.name}: environment ${env.name} has no guardrails or freeze windows in revsync.yaml`);
    return undefined;
  }
  return { setup, judging: { now, approvers, overrides } };
}
