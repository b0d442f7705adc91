/** What a record shows against promotion (evidence verify): a record of an environment that receives its
 *  changes from another (promote_from, as revsync.yaml said at the commit the record applied) must carry
 *  its promotion facts (the source, the commit, what was compared, the tests), their checksum must be its
 *  changes', and no write may have landed that those facts say was blocked, or while the policy tests
 *  failed in the source. apply writes none of those, so a record that shows one was made by another tool,
 *  an edited revsync, a revsync.yaml that dropped promote_from for one apply, or edited after. */
import { execFile } from "node:child_process";
import { parse } from "yaml";
import { mayBeInGitRepository } from "../git-work-tree.js";
import { comparedChecksum } from "../promotion/check.js";
import { APPLIED_ACTIONS, type Action } from "../shared/entries.js";
import { LANDED, type EvidenceRecord } from "./record.js";

/** The writes of a record that landed. */
const landedWrites = (r: EvidenceRecord): EvidenceRecord["changes"] =>
  (Array.isArray(r.changes) ? r.changes : []).filter((c) => APPLIED_ACTIONS.includes(c.action as Action) && LANDED.has(c.outcome));

/** `promoteFrom`: the source revsync.yaml named for the record's environment at its commit (undefined:
 *  none, or not known). Pure. */
export function promotionProblems(r: EvidenceRecord, promoteFrom: string | undefined): string[] {
  const p = r.promotion;
  if (!p) {
    return promoteFrom === undefined
      ? []
      : [
          `promotion: environment ${r.environment} receives its changes from ${promoteFrom} (promote_from in revsync.yaml${r.git?.commit ? ` at commit ${r.git.commit.slice(0, 12)}` : ""}), and this record holds no promotion facts (the source, the commit, what was compared): it was applied without promotion`,
        ];
  }
  const out: string[] = [];
  if (promoteFrom !== undefined && promoteFrom !== p.from)
    out.push(`promotion: promoted from ${p.from}, while revsync.yaml at its commit names ${promoteFrom}`);
  const sum = comparedChecksum(Array.isArray(r.changes) ? r.changes : []);
  if (sum !== p.compared_checksum)
    out.push(`promotion: its changes' promotion facts do not make its compared_checksum (${p.compared_checksum}; they make ${sum})`);
  const landed = landedWrites(r);
  for (const c of landed) {
    if (!c.promotion) out.push(`promotion: ${c.address} (${c.action}) landed without the plan's promotion facts`);
    else if (c.promotion.status !== "promoted") out.push(`promotion: ${c.address} (${c.action}) landed though the plan blocked it for promotion`);
  }
  const failed = [...(p.tests?.failed ?? []), ...(r.promotion_tests_at_apply?.failed ?? [])];
  if (landed.length && failed.length) out.push(`promotion: writes landed though the policy tests failed live in ${p.from}: ${failed.slice(0, 3).join("; ")}`);
  if (landed.length && p.read_at === null) out.push(`promotion: writes landed though ${p.from} was not read`);
  return out;
}

/** What revsync.yaml named as each environment's source at each commit (git show COMMIT:revsync.yaml), by
 *  commit; a commit git cannot show (not in this clone, no git) is left out: verify then takes revsync.yaml
 *  as it is (`current`). `configPath`: revsync.yaml from the repository's top folder. */
export async function promoteFromAtCommits(
  root: string,
  configPath: string,
  commits: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<Map<string, Record<string, string>>> {
  const out = new Map<string, Record<string, string>>();
  await Promise.all(
    [...new Set(commits)].map(async (commit) => {
      const text = await gitShow(root, `${commit}:${configPath}`, env);
      if (text !== undefined) out.set(commit, promoteFromIn(text));
    }),
  );
  return out;
}

/** Each environment's promote_from in revsync.yaml's text (none where it cannot be read). */
export function promoteFromIn(text: string): Record<string, string> {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    return {};
  }
  const envs = (doc as { environments?: Record<string, { promote_from?: unknown } | null> } | null)?.environments ?? {};
  const out: Record<string, string> = {};
  for (const [name, e] of Object.entries(envs)) if (typeof e?.promote_from === "string") out[name] = e.promote_from;
  return out;
}

function gitShow(cwd: string, spec: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (!mayBeInGitRepository(cwd, env)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    execFile("git", ["show", spec], { cwd, timeout: 10_000, maxBuffer: 4 * 1024 * 1024, env: { ...env, GIT_OPTIONAL_LOCKS: "0" } }, (err, stdout) =>
      resolve(err ? undefined : stdout),
    );
  });
}
