/** Wiring of promote_from for plan and apply: the source environment opened as a fleet opens each of its
 *  environments (its own settings, sign-in, client and so rate governor), git as it reads the policy files,
 *  the policy tests with its vars, and the commit. What promotion does is src/promotion/. */
import { relative } from "node:path";
import { resolveEnv, varsFor, OVERRIDE_VARS, type Repo, type ResolvedEnv } from "../config/repo.js";
import { loadTests } from "../config/test-files.js";
import { UserError } from "../errors.js";
import { changedPolicyFiles } from "../evidence/context.js";
import type { PromotionSource } from "../promotion/source.js";
import { tenantIdentity } from "../tenant.js";
import { concurrencyOf, cwdOf, desiredState, envOf, openClient } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

/** The source's settings by revsync.yaml alone: REVSYNC_BASE_URL and the other overrides name the one
 *  tenant this run writes to, never its source. */
function sourceEnv(repo: Repo, env: ResolvedEnv, flags: GlobalFlags): ResolvedEnv {
  const penv = { ...envOf(flags) };
  for (const k of OVERRIDE_VARS) delete penv[k];
  const source = resolveEnv(repo, env.promoteFrom ?? "", penv);
  const a = tenantIdentity(env.baseUrl, env.realm);
  if (a.key === tenantIdentity(source.baseUrl, source.realm).key)
    throw new UserError(
      `environment ${JSON.stringify(env.name)} receives its changes from ${JSON.stringify(source.name)} (promote_from), and both are the tenant ${a.url}, realm ${a.realm}: a tenant cannot be its own source, so nothing was read`,
      `point ${source.name} at the tenant changes are tried in first${OVERRIDE_VARS.some((k) => envOf(flags)[k] !== undefined) ? ", or unset REVSYNC_BASE_URL and the other overrides" : ""}`,
    );
  return source;
}

/** The policy tests as `revsync test --live --env SOURCE` loads them: with the source's vars; a file with
 *  an error is named (nothing is promoted then). */
function testsOf(repo: Repo, source: ResolvedEnv, flags: GlobalFlags): PromotionSource["tests"] {
  const t = loadTests(repo, varsFor(source, envOf(flags)));
  if (!t.found) return undefined;
  const broken = t.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.file}:${d.line}:${d.column}: ${d.message}`);
  return { cases: t.cases, contracts: t.contracts, rules: source.service.allocationRules, broken };
}

/** The environment's source, opened; undefined without promote_from. Its client is the caller's to close. */
export async function openPromotion(repo: Repo, env: ResolvedEnv, flags: GlobalFlags, out: Output): Promise<PromotionSource | undefined> {
  if (!env.promoteFrom) return undefined;
  const source = sourceEnv(repo, env, flags);
  const desired = desiredState(repo, source, out, flags);
  const tests = testsOf(repo, source, flags);
  const paths = [relative(repo.root, repo.configFile), relative(repo.root, repo.policiesDir) || "."];
  const { commit, files } = await changedPolicyFiles(repo.root, paths, cwdOf(flags), envOf(flags));
  return {
    name: source.name,
    baseUrl: source.baseUrl,
    realm: source.realm,
    core: openClient(source, flags, out),
    desired,
    here: desiredState(repo, env, out, flags),
    ...(tests ? { tests } : {}),
    commit,
    uncommitted: files,
    concurrency: concurrencyOf(flags),
  };
}
