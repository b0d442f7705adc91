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
  // A commit is outside text (a record's): one that could end a line of git's batch names nothing.
  const asked = [...new Set(commits)].filter((c) => c && ![...c].some((ch) => ch.charCodeAt(0) < 32));
  const texts = await gitShowAll(
    root,
    asked.map((c) => `${c}:${configPath}`),
    env,
  );
  asked.forEach((commit, i) => {
    const text = texts[i];
    if (text !== undefined) out.set(commit, promoteFromIn(text));
  });
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

/** The text of each `commit:path` in `specs`, one `git cat-file --batch` for all (a process per file costs
 *  10 to 20 ms from a large Node process); undefined for one git cannot show (not in this clone), all
 *  undefined without git or a repository. An object that is not a file reads as empty text. */
function gitShowAll(cwd: string, specs: readonly string[], env: NodeJS.ProcessEnv): Promise<(string | undefined)[]> {
  const none = specs.map(() => undefined);
  if (!specs.length || !mayBeInGitRepository(cwd, env)) return Promise.resolve(none);
  return new Promise((resolve) => {
    const child = execFile(
      "git",
      ["cat-file", "--batch"],
      { cwd, timeout: 10_000, maxBuffer: 4 * 1024 * 1024 * specs.length, encoding: "buffer", env: { ...env, GIT_OPTIONAL_LOCKS: "0" } },
      (err, stdout) => resolve(err ? none : batchAnswers(stdout, specs.length)),
    );
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(specs.map((s) => `${s}\n`).join(""));
  });
}

/** `git cat-file --batch`'s answers, in the order asked: "<oid> <type> <size>" and that many bytes, or
 *  "<name> missing" (or ambiguous). */
function batchAnswers(out: Buffer, count: number): (string | undefined)[] {
  const texts: (string | undefined)[] = [];
  let at = 0;
  while (texts.length < count && at < out.length) {
    const eol = out.indexOf(10, at);
    if (eol < 0) break;
    const head = /^[0-9a-f]+ (\S+) (\d+)$/.exec(out.subarray(at, eol).toString("utf8"));
    if (!head) {
      texts.push(undefined);
      at = eol + 1;
      continue;
    }
    const size = Number(head[2]);
    texts.push(head[1] === "blob" ? out.subarray(eol + 1, eol + 1 + size).toString("utf8") : "");
    at = eol + 1 + size + 1;
  }
  while (texts.length < count) texts.push(undefined);
  return texts;
}
