import { PolicyProblems, UserError } from "../errors.js";
import { modelsFromGitOnly, modelsFromLive } from "../policy-test/models.js";
import { loadTests } from "../policy-test/load.js";
import { runCases } from "../policy-test/run.js";
import { testJson, testJunit, testText } from "../report/policy-test.js";
import { relative } from "node:path";
import { desiredState, envOf, offlineEnv, openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./main.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";
import { varsFor } from "../config/repo.js";

export interface TestFlags extends GlobalFlags {
  live?: boolean;
}

/** revsync test: which SSP policy each case's order line meets, at what SSP, against git's policies
 *  (offline) or, with --live, the service's (read-only). Exit 0 all pass, 1 a failure or a bad file. */
export async function runTest(flags: TestFlags, out: Output): Promise<number> {
  const repo = openRepo(flags);
  // Offline, only the vars of policy files are needed: the URLs may use ${VAR}s that only CI defines.
  const serviceEnv = flags.live ? openEnv(repo, flags) : undefined;
  const env = serviceEnv ?? offlineEnv(repo, flags);
  const { cases, diagnostics, dir, found } = loadTests(repo, varsFor(env.vars, envOf(flags)));
  const shownDir = relative(repo.cwd, dir) || ".";
  if (diagnostics.some((d) => d.severity === "error")) throw new PolicyProblems(`the policy tests in ${shownDir} have errors`, diagnostics);
  if (!found || !cases.length) {
    throw new UserError(`no policy test cases in ${shownDir}`, "write files of kind SspPolicyTest there, or name their folder with tests: in revsync.yaml");
  }
  let policies;
  let source: string;
  if (serviceEnv) {
    // The service's policies alone: git's are not read.
    const core = openClient(serviceEnv, flags, out);
    try {
      const live = await readWithProgress(core, { tenantConfigs: [], ssp: [] }, flags, out, { approvedValues: true });
      policies = modelsFromLive(live);
      source = `the service's policies in ${env.name}`;
    } finally {
      await core.close();
    }
  } else {
    const git = modelsFromGitOnly(desiredState(repo, env, out, flags));
    policies = git.models;
    source = "git's policies";
    if (git.skipped.length) {
      out.warn(
        `left out, because git does not give their conditions or hierarchy_no (they keep their live values; revsync test --live uses the service's): ${git.skipped.join(", ")}`,
      );
    }
  }
  const results = runCases(cases, policies);
  if (flags.format === "json") out.out(JSON.stringify(testJson(results, source), null, 2));
  else if (flags.format === "junit") out.raw(testJunit(results));
  else out.out(testText(results, source, out));
  return results.every((r) => r.pass) ? 0 : 1;
}
