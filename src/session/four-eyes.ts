import { checkUrl, proxyEnv, type ApiCore } from "../api/core.js";
import { approvals } from "../api/resources.js";
import { Agent, EnvHttpProxyAgent, request } from "../api/http.js";
import { checkSignedIn, type CheckedPlan } from "../apply/run.js";
import type { ResolvedEnv, Repo } from "../config/repo.js";
import { ApiError, UserError } from "../errors.js";
import { gitState } from "../evidence/context.js";
import { pullRequestApproval, type ForgeGet } from "../evidence/pull-request.js";
import type { CiContext, PullRequestApproval } from "../evidence/record.js";
import { isApplied } from "../plan/model.js";
import type { RunOutput } from "../run-output.js";

/** GETs of the forge's API (GitHub, GitLab): JSON, through the run's proxy, TLS verified, http:// only to
 *  loopback, each bounded in time. */
function forgeClient(penv: NodeJS.ProcessEnv): { get: ForgeGet; close: () => Promise<void> } {
  const agentOpts = { connect: { timeout: 10_000 } };
  const proxy = proxyEnv(penv);
  const dispatcher = proxy ? new EnvHttpProxyAgent({ ...agentOpts, ...proxy }) : new Agent(agentOpts);
  const get: ForgeGet = async (url, headers) => {
    checkUrl("the forge's API URL", url);
    let res;
    try {
      res = await request(url, { method: "GET", headers, dispatcher, headersTimeout: 30_000, bodyTimeout: 30_000, signal: AbortSignal.timeout(60_000) });
    } catch (e) {
      throw new Error(`GET ${new URL(url).pathname} failed: ${(e as Error).message}`);
    }
    const text = await res.body.text();
    let body: unknown;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      body = undefined;
    }
    const link = res.headers.link;
    const nextPage = res.headers["x-next-page"];
    return { status: res.statusCode, body, ...(typeof link === "string" ? { link } : {}), ...(typeof nextPage === "string" ? { nextPage } : {}) };
  };
  return { get, close: () => dispatcher.close() };
}

/** The approver identity signs in now, when one is configured: a wrong password stops the run before
 *  anything is sent (an approve, or an approval or override the guardrails count as its user's). */
export async function approverSignedIn(core: ApiCore): Promise<void> {
  if (!core.approverAuth) return;
  try {
    await core.approverAuth.token();
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    throw new UserError(
      `the approver identity could not sign in (${e.serviceMessage}): nothing was sent`,
      "check REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN)",
    );
  }
}

/** A bearer token's user is what its own claims say, read without verifying them (anyone can write a
 *  JWT naming the controller): the approver identity of REVSYNC_APPROVER_TOKEN or of revsync login
 *  --approver counts for an override or an approval of the guardrails only once the service has accepted
 *  the token. One read is sent as it; a 401 is a token the service does not know, and the run stops
 *  before anything is written. A password grant was signed in by the service already. */
export async function approverConfirmed(core: ApiCore): Promise<void> {
  if (!core.approverAuth?.isStatic) return;
  try {
    await approvals.pending(core.asApprover());
  } catch (e) {
    // Forbidden or not found: the service knew the token, whatever the approver's roles.
    if (e instanceof ApiError && (e.status === 403 || e.status === 404)) return;
    if (!(e instanceof ApiError) || e.status !== 401) throw e;
    throw new UserError(
      "the service refused the approver identity's token (401): it names nobody who may override or approve, so nothing was sent",
      "give REVSYNC_APPROVER_TOKEN a token the service issued, or sign the approver in again: revsync login --approver",
    );
  }
}

/** The pull (merge) request's approval of the commit this run applies, read from the forge. */
export async function readPullRequestApproval(
  penv: NodeJS.ProcessEnv,
  repo: Repo,
  ci: CiContext,
  tree?: { commit: string | null },
): Promise<PullRequestApproval> {
  // The commit apply found the tree at (from the same git status as the policy files it checked).
  const applied = (tree ?? (await gitState(repo.root, repo.root, penv))).commit ?? ci.commit;
  const forge = forgeClient(penv);
  try {
    return await pullRequestApproval(ci, penv, applied, forge.get);
  } finally {
    await forge.close();
  }
}

/** Under four eyes, an approver whose user nobody has confirmed yet, in words: a bearer token's user is
 *  what a variable or the token's own claims say (a JWT's preferred_username, read without verifying
 *  it), where only a password grant is signed in by the service. Apply takes who approved from the
 *  service right after each approve; this says so before the first. Undefined for a password grant. */
function approverUnverified(core: ApiCore): string | undefined {
  const auth = core.approverAuth ?? core.auth;
  if (auth.usernameFrom === "sign-in") return undefined;
  const variable = core.approverAuth ? "REVSYNC_APPROVER_USER" : "REVSYNC_USER";
  const from =
    auth.usernameFrom === "token claims"
      ? "the token's own claims (preferred_username, read without verifying it)"
      : auth.usernameFrom === "variable"
        ? variable
        : "nothing: the token names no user";
  return `four eyes: approves go as a bearer token whose user, ${auth.username ?? "unnamed"}, comes from ${from}, unverified until the service answers: apply reads each batch back right after its approve and reports one the service shows approved by another user, or by its preparer, as a breach of four eyes`;
}

/** A plan that approves: the approver identity signs in now (a wrong approver password stops the run
 *  before its first write, not at its first approve), and so does revsync's own; then who prepares and
 *  who approves are compared as the service's tokens name them. */
async function signInBoth(core: ApiCore, plan: CheckedPlan, fourEyes: boolean): Promise<void> {
  await approverSignedIn(core);
  await core.auth.token();
  checkSignedIn(core, plan, fourEyes);
}

/** Under four eyes outside CI: refused, as no pull request's approval can be checked and the tree applied
 *  (uncommitted edits and all) is nobody's review, unless the environment allows it explicitly
 *  (four_eyes: { local_apply: true }), which is said and recorded (evidence verify flags it). */
function localApply(ctx: { out: RunOutput; env: ResolvedEnv; recordLocalApply?: () => void }): void {
  if (!ctx.env.fourEyesLocalApply)
    throw new UserError(
      "four eyes: this apply runs outside CI (GitHub Actions or GitLab CI), where no pull request's approval can be checked and the files it applies are nobody's review; nothing was sent",
      "apply from CI, or allow this environment to apply from a workstation explicitly: four_eyes: { local_apply: true } in revsync.yaml (the evidence records it, and revsync evidence verify flags it)",
    );
  ctx.out.warn(
    "four eyes: applied outside CI, as four_eyes: { local_apply: true } allows: no pull request's approval is checked and the files applied are held to no reviewed commit (recorded in the evidence); apply still keeps every batch from being approved by the user who prepared it",
  );
  ctx.recordLocalApply?.();
}

/** Under four eyes in CI, the files apply plans from (or holds a saved plan to) are the commit the pull
 *  request's approval is checked against: a policy file that differs from it (edited after checkout,
 *  untracked, ignored by git), or no commit git can name, is refused before anything is sent. */
function cleanTree(tree: { commit: string | null; files: string[] } | undefined): void {
  if (tree?.commit && !tree.files.length) return;
  const why = !tree?.commit
    ? "the commit the policy repo is at cannot be told (no git, or no commit)"
    : `the policy files differ from commit ${tree.commit.slice(0, 12)}: ${tree.files.join(", ")}`;
  throw new UserError(
    `four eyes: ${why}; apply in CI plans only from a clean tree equal to the commit approved, so nothing was sent`,
    "apply from a checkout of the merged commit, with no policy file changed after it",
  );
}

/** What apply checks before it writes anything, for the four-eyes rule and its evidence, of a plan whose
 *  approver identity was checked (another user than the sign-in: readyToApply):
 *  - the approver identity signs in now when the plan holds an approve (a wrong approver password stops
 *    the run before its first write, not at its first approve);
 *  - in CI (with four_eyes, or to keep the evidence), the pull (merge) request's approval, read from the
 *    forge: with four_eyes, apply refuses when no approval by someone other than its author covers the
 *    commit applied; outside CI it says the rule could not be checked.
 *  Returns the approval read, for the evidence. */
export async function fourEyesBeforeWriting(
  core: ApiCore,
  plan: CheckedPlan,
  ctx: {
    /** The run's environment variables (the forge's tokens and proxy). */
    penv: NodeJS.ProcessEnv;
    /** The CI run this apply is part of, or null outside CI. */
    ci: CiContext | null;
    out: RunOutput;
    repo: Repo;
    env: ResolvedEnv;
    fourEyes: boolean;
    /** The run keeps evidence: the approval read goes to it, whether or not it holds. */
    record?: (a: PullRequestApproval) => void;
    /** The approval as this run read it already (for its guardrails), read once. */
    approval?: PullRequestApproval;
    /** The run keeps evidence: an apply outside CI under four_eyes.local_apply is recorded. */
    recordLocalApply?: () => void;
    /** The commit the policy repo is at, and the policy files that differ from it (revsync.yaml, the
     *  policies folder, the values files the plan reads: what apply plans from or holds a plan to). */
    tree?: { commit: string | null; files: string[] };
  },
): Promise<PullRequestApproval | undefined> {
  const { out, fourEyes, ci } = ctx;
  const approves = plan.changes.some((c) => c.action === "approve" && isApplied(c));
  if (approves) await signInBoth(core, plan, fourEyes);
  const unconfirmed = fourEyes && approves ? approverUnverified(core) : undefined;
  if (unconfirmed) out.warn(unconfirmed);
  if (!ci) {
    if (fourEyes) localApply(ctx);
    return undefined;
  }
  if (!fourEyes && !ctx.record && !ctx.approval) return undefined;
  if (fourEyes) cleanTree(ctx.tree);
  const approval = ctx.approval ?? (await readPullRequestApproval(ctx.penv, ctx.repo, ci, ctx.tree));
  ctx.record?.(approval);
  const name = ci.provider === "gitlab" ? "merge request" : "pull request";
  if (approval.holds)
    out.info(
      `Four eyes: ${name} ${ci.provider === "gitlab" ? "!" : "#"}${approval.number} by ${approval.author} is approved by ${approval.independent.join(", ")} at ${approval.head_commit?.slice(0, 12)}.`,
    );
  else if (fourEyes)
    throw new UserError(
      `four eyes: ${approval.problem ?? "no independent approval"}; nothing was sent`,
      `apply only what someone other than its author approved`,
    );
  else out.info(`The ${name}'s approval is recorded as it stands: ${approval.problem}.`);
  return approval;
}
