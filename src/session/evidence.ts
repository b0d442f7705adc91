import { readFileSync, statSync } from "node:fs";
import { basename, dirname, relative, resolve } from "node:path";
import type { ApplyReport } from "../apply/run.js";
import type { Repo, ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import { ciContext } from "../evidence/context.js";
import { checkLive, type LiveFinding } from "../evidence/live.js";
import type { EvidenceRecord } from "../evidence/record.js";
import { EvidenceRecorder } from "../evidence/recorder.js";
import { prepareEvidenceDir, readRecord, readRecords, type StoredRecord } from "../evidence/store.js";
import { verifyChain, type VerifiedRecord, type VerifyOptions } from "../evidence/verify.js";
import { promoteFromAtCommits } from "../evidence/promotion.js";
import { promoteFromOf } from "../config/promotion.js";
import { PACKAGE_ROOT } from "../package-root.js";
import { readJsonFile, realPathInside } from "../user-files.js";
import type { Doubt } from "../report/evidence.js";
import type { ApiCore } from "../api/core.js";
import type { Registry } from "../kinds/kind.js";
import type { RunOutput } from "../run-output.js";
import { plural } from "../words.js";
import { numberOf } from "../number.js";

export interface Evidence {
  recorder: EvidenceRecorder;
  report?: ApplyReport;
  /** Writes the record of a run that planned; false when it could not be written (said on stderr). */
  finish(out: RunOutput, end: { exitCode: number; stoppedNow?: boolean; error?: string }): Promise<boolean>;
}

const version = (): string => (JSON.parse(readFileSync(resolve(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;

/** apply --evidence DIR (or evidence: of revsync.yaml): the folder is checked now, before anything is
 *  sent; the record is written by `finish`, once the run's end is known. */
export function startEvidence(
  run: { evidence?: string; cwd: string; penv: NodeJS.ProcessEnv },
  repo: Repo,
  env: ResolvedEnv,
  planFile: string | undefined,
): Evidence | undefined {
  const { evidence, cwd, penv } = run;
  if (evidence !== undefined && !evidence.trim()) throw new UserError("--evidence needs a folder");
  const dir = evidence !== undefined ? resolve(cwd, evidence) : env.evidence;
  if (dir === undefined) return undefined;
  // A folder revsync.yaml names is a path from a file: it stays inside the repo, links followed
  // (realPathInside). One the command line names is the user's own choice, wherever it is.
  if (evidence === undefined) {
    try {
      realPathInside(repo.root, dir, { show: (p) => relative(cwd, p) || ".", folderName: "the policy repo" });
    } catch (e) {
      throw new UserError(
        `evidence: of revsync.yaml: ${(e as Error).message}; nothing was sent`,
        "name a folder inside the repo, or give any folder with --evidence DIR",
      );
    }
  }
  prepareEvidenceDir(dir);
  const redactor = { redact: (t: string) => t };
  const ev: Evidence = {
    recorder: new EvidenceRecorder({
      dir,
      repoRoot: repo.root,
      cwd,
      env: penv,
      policyPaths: [relative(repo.root, repo.configFile), relative(repo.root, repo.policiesDir) || "."],
      environment: env.name,
      baseUrl: env.baseUrl,
      authUrl: env.authUrl,
      realm: env.realm,
      planFile: planFile ?? null,
      revsyncVersion: version(),
      ci: ciContext(penv, readJsonFile),
      now: () => Date.now(),
      unavailable: penv.REVSYNC_EVIDENCE_UNAVAILABLE?.trim() || null,
      redact: (t) => redactor.redact(t),
    }),
    async finish(out, end) {
      if (!ev.recorder.planned) return true;
      redactor.redact = (t) => out.redactor.redact(t);
      try {
        const { path, record } = await ev.recorder.write({ ...end, report: ev.report });
        out.errorLine(`Evidence: ${path} ${record.hash}`);
        return true;
      } catch (e) {
        out.error(`the evidence record of this run could not be written to ${dir}: ${(e as Error).message}`);
        return false;
      }
    },
  };
  return ev;
}

/** The records `show` prints, each with what evidence verify says of it in the folder it lies in (a
 *  FILE is checked among the records beside it): show never prints a record as fine that verify would
 *  not hold. */
async function recordsAt(target: string, repo: RepoAt): Promise<{ stored: StoredRecord[]; verdicts: Map<string, VerifiedRecord> }> {
  let dir = false;
  try {
    dir = statSync(target).isDirectory();
  } catch (e) {
    throw new UserError(`cannot read ${target}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or folder" : (e as Error).message}`);
  }
  const folder = dir ? target : dirname(target);
  const found = readRecords(folder);
  const checked = verifyChain(found, await promotionExpected(repo, found)).records;
  const verdicts = new Map(checked.map((v) => [v.file, v]));
  // In chain order (by environment, then sequence), as verify lists them: --last counts from the head.
  const byFile = new Map(found.map((s) => [s.file, s]));
  const all = checked.map((v) => byFile.get(v.file) as StoredRecord);
  if (dir) return { stored: all, verdicts };
  const own = all.find((s) => s.file === basename(target)) ?? readRecord(target);
  const verdict = verdicts.get(own.file);
  return { stored: [{ ...own, file: target }], verdicts: new Map(verdict ? [[target, verdict]] : []) };
}

/** The policy repo evidence verify and show read (revsync.yaml's promote_from), when they run in one: how
 *  it is opened (it throws outside one), and the run's environment variables (for git). */
export interface RepoAt {
  openRepo: () => Repo;
  penv: NodeJS.ProcessEnv;
}

/** In a policy repo: the source its revsync.yaml named for each environment (promote_from) at each record's
 *  commit (git show), else as revsync.yaml is now; a record of such an environment must carry its
 *  promotion facts. Outside a policy repo nothing is known of it. */
async function promotionExpected(at: RepoAt, stored: readonly StoredRecord[]): Promise<VerifyOptions> {
  let repo: Repo;
  try {
    repo = at.openRepo();
  } catch {
    return {};
  }
  const commits = stored.flatMap((s) => (typeof s.record?.git?.commit === "string" ? [s.record.git.commit] : []));
  const then = await promoteFromAtCommits(repo.root, `./${basename(repo.configFile)}`, commits, at.penv);
  return {
    promoteFrom: (r) => {
      const named = r.git?.commit ? then.get(r.git.commit) : undefined;
      return named ? named[r.environment] : promoteFromOf(repo.config, r.environment);
    },
  };
}

/** revsync evidence verify DIR: the folder's records and what the chain check says of them. An empty
 *  folder proves nothing: a chain that was never fetched must not pass as one that holds. */
export async function verifyFolder(dir: string, repo: RepoAt): Promise<{ stored: StoredRecord[]; report: ReturnType<typeof verifyChain> }> {
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new UserError(`cannot read the evidence folder ${dir}: no such folder`);
  }
  if (!st.isDirectory()) throw new UserError(`${dir} is a file: evidence verify checks a folder of records (evidence show prints one)`);
  const stored = readRecords(dir);
  if (!stored.length) throw new UserError(`no evidence records in ${dir}`, "evidence verify checks a folder that apply --evidence wrote records into");
  return { stored, report: verifyChain(stored, await promotionExpected(repo, stored)) };
}

/** The contract of evidence verify: 0 intact, 1 otherwise. With --live, a change that no longer holds in
 *  the service is not intact either: the chain proves what was applied, and the service no longer holds it. */
export async function verifyExitCode(report: { ok: boolean }, live: Map<string, LiveFinding[]> | undefined): Promise<number> {
  // Loaded only here: what renders the report is not read by every command that writes evidence.
  if (live && (await import("../report/evidence.js")).liveChanged(live)) return 1;
  return report.ok ? 0 : 1;
}

/** The environment --live reads, when the records name one alone (else --env or revsync.yaml's choice). */
export function recordsEnvironment(stored: StoredRecord[]): string | undefined {
  const names = [...new Set(stored.map((s) => s.record?.environment).filter((n): n is string => !!n))];
  return names.length === 1 ? names[0] : undefined;
}

/** --live: only the records whose tenant is the environment's are read against the service. */
export async function liveFindings(
  stored: StoredRecord[],
  env: ResolvedEnv,
  run: { out: RunOutput; kinds: Registry; openClient: () => ApiCore },
): Promise<Map<string, LiveFinding[]>> {
  const same = (r: EvidenceRecord): boolean =>
    r.environment === env.name && r.base_url.replace(/\/+$/, "") === env.baseUrl.replace(/\/+$/, "") && r.realm === env.realm;
  const mine = stored.filter((s): s is StoredRecord & { record: EvidenceRecord } => !!s.record && Array.isArray(s.record.changes) && same(s.record));
  const skipped = stored.length - mine.length;
  if (skipped)
    run.out.info(
      `--live reads environment ${JSON.stringify(env.name)} (${env.baseUrl}, realm ${env.realm}): ${skipped} record(s) of another tenant are not read live.`,
    );
  const core = run.openClient();
  try {
    return await checkLive(core, mine, run.kinds);
  } finally {
    await core.close();
  }
}

/** A record as evidence show prints it: with verify's verdict, and the doubt said above it. */
export interface ShownRecord {
  file: string;
  record: EvidenceRecord;
  verdict: VerifiedRecord | undefined;
  doubt: Doubt | null;
}

/** revsync evidence show FILE|DIR: the records (of one environment, the last N), each checked as verify
 *  checks it, so an edited, forked, copied, renamed or misplaced record is never printed as if fine. */
export async function recordsToShow(path: string, pick: { env?: string; last?: string }, repo: RepoAt): Promise<ShownRecord[]> {
  const { stored: all, verdicts } = await recordsAt(path, repo);
  let stored = all;
  if (pick.env) stored = stored.filter((s) => s.record?.environment === pick.env);
  if (pick.last !== undefined) {
    const n = numberOf(pick.last) ?? NaN;
    if (!Number.isInteger(n) || n < 1) throw new UserError(`--last must be a whole number of records, at least 1, got ${JSON.stringify(pick.last)}`);
    stored = stored.slice(-n);
  }
  // A file that is not a record revsync writes (no environment, a field of another type) is never
  // printed: only what its schema holds is, and this is not it.
  const bad = stored.find((s) => !s.record || verdicts.get(s.file)?.findings.includes("unplaced"));
  if (bad)
    throw new UserError(
      `${bad.file} ${bad.unreadable ?? `is ${verdicts.get(bad.file)?.problems[0] ?? "not a record revsync writes"}`}`,
      "revsync evidence verify checks a whole folder",
    );
  return (stored as (StoredRecord & { record: EvidenceRecord })[]).map((s) => {
    const verdict = verdicts.get(s.file);
    return { file: s.file, record: s.record, verdict, doubt: doubtOf(verdict) };
  });
}

/** What show says after the records it printed; its exit code (1 when any is in doubt). */
export function shownVerdict(records: ShownRecord[], out: RunOutput): number {
  if (!records.length) out.info("No evidence records.");
  const edited = records.filter((s) => s.verdict?.findings.includes("edited")).length;
  const doubted = records.filter((s) => s.doubt).length;
  if (edited) out.error(`${edited === 1 ? "1 record was" : `${edited} records were`} edited after it was written: its content does not match its hash`);
  if (doubted > edited)
    out.error(`${plural(doubted - edited, "record")} ${doubted - edited === 1 ? "fails" : "fail"} evidence verify's check of the folder: see each`);
  return doubted ? 1 : 0;
}

/** What show says above a record verify does not hold, or null for an intact one. */
function doubtOf(v: VerifiedRecord | undefined): Doubt | null {
  if (!v) return { tag: "UNCHECKED", words: "evidence verify could not check this record; what follows may not be what revsync recorded" };
  if (v.findings[0] === "intact") return null;
  const tag = v.findings.join("+").toUpperCase();
  if (v.findings.includes("edited"))
    return { tag, words: `this record was changed after it was written (${v.problems.join("; ")}); what follows is not what revsync recorded` };
  return { tag, words: `evidence verify does not hold this record in its chain (${v.problems.join("; ")}); what follows may not be what revsync recorded` };
}
