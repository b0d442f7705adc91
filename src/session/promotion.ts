/** promote_from for plan and apply: the source environment opened as a fleet opens each of its
 *  environments (its own settings, sign-in, client and so rate governor), git as it reads the policy files,
 *  the policy tests with its vars, and the commit. What promotion does is src/promotion/. */
import { relative } from "node:path";
import type { ApiCore } from "../api/core.js";
import { resolveEnv, varsFor, OVERRIDE_VARS, type DesiredState, type Repo, type ResolvedEnv } from "../config/repo.js";
import { loadTests } from "../config/test-files.js";
import { UserError } from "../errors.js";
import { changedPolicyFiles, type TreeStatus } from "../evidence/context.js";
import type { PromotionSource } from "../promotion/source.js";
import { tenantIdentity } from "../tenant.js";

/** What the command wires the source with: the run's environment variables, working directory and
 *  concurrency, git's state as an environment reads the policy files, and a client of an environment
 *  (its own settings and sign-in). */
export interface PromotionWiring {
  penv: NodeJS.ProcessEnv;
  cwd: string;
  concurrency(): number;
  desiredState(env: ResolvedEnv): DesiredState;
  openClient(env: ResolvedEnv): ApiCore;
}

/** The source's settings by revsync.yaml alone: REVSYNC_BASE_URL and the other overrides name the one
 *  tenant this run writes to, never its source. */
function sourceEnv(repo: Repo, env: ResolvedEnv, given: NodeJS.ProcessEnv): ResolvedEnv {
  const penv = { ...given };
  for (const k of OVERRIDE_VARS) delete penv[k];
  const source = resolveEnv(repo, env.promoteFrom ?? "", penv);
  const a = tenantIdentity(env.baseUrl, env.realm);
  if (a.key === tenantIdentity(source.baseUrl, source.realm).key)
    throw new UserError(
      `environment ${JSON.stringify(env.name)} receives its changes from ${JSON.stringify(source.name)} (promote_from), and both are the tenant ${a.url}, realm ${a.realm}: a tenant cannot be its own source, so nothing was read`,
      `point ${source.name} at the tenant changes are tried in first${OVERRIDE_VARS.some((k) => given[k] !== undefined) ? ", or unset REVSYNC_BASE_URL and the other overrides" : ""}`,
    );
  return source;
}

/** The policy tests as `revsync test --live --env SOURCE` loads them: with the source's vars; a file with
 *  an error is named (nothing is promoted then). */
function testsOf(repo: Repo, source: ResolvedEnv, penv: NodeJS.ProcessEnv): PromotionSource["tests"] {
  const t = loadTests(repo, varsFor(source, penv));
  if (!t.found) return undefined;
  const broken = t.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.file}:${d.line}:${d.column}: ${d.message}`);
  return { cases: t.cases, contracts: t.contracts, rules: source.service.allocationRules, broken };
}

/** The environment's source, opened; undefined without promote_from. Its client is the caller's to close. */
export async function openPromotion(repo: Repo, env: ResolvedEnv, w: PromotionWiring, tree?: TreeStatus): Promise<PromotionSource | undefined> {
  if (!env.promoteFrom) return undefined;
  const source = sourceEnv(repo, env, w.penv);
  const desired = w.desiredState(source);
  const tests = testsOf(repo, source, w.penv);
  const paths = [relative(repo.root, repo.configFile), relative(repo.root, repo.policiesDir) || "."];
  const { commit, files } = await changedPolicyFiles(repo.root, paths, w.cwd, w.penv, tree);
  return {
    name: source.name,
    baseUrl: source.baseUrl,
    realm: source.realm,
    core: w.openClient(source),
    desired,
    here: w.desiredState(env),
    ...(tests ? { tests } : {}),
    commit,
    uncommitted: files,
    concurrency: w.concurrency(),
  };
}
