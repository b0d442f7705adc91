import { fourEyesFindings } from "./four-eyes.js";
import { guardrailProblems } from "./guardrails.js";
import { promotionProblems } from "./promotion.js";
import { basename } from "node:path";
import { describeAjvErrors, fileValidator } from "../schema/ajv.js";
import { EVIDENCE_FORMAT_VERSION, recordHash, type EvidenceRecord } from "./record.js";
import { recordFileName, type StoredRecord } from "./store.js";
import { looksAlike, tenantKeys } from "../look-alike.js";

/** What verify finds of a file of the folder. `unreadable`: not a record at all (not JSON, another kind
 *  of file, a folder); `unplaced`: a record that is not one revsync writes (not valid against the
 *  record's schema: no environment, a field of the wrong type, a field revsync never writes), which
 *  verify cannot place in an environment's chain. Both fail the check: the folder holds records only.
 *  `four-eyes`: a record of a four_eyes environment whose batch was approved by its preparer, or whose
 *  pull request lacks an independent approval. `look-alike`: a record of an environment whose name differs
 *  from another chain's only by case, spaces, how Unicode writes a letter or letters that look the same;
 *  `same-tenant`: a record of one of two chains that name one tenant (base_url and realm), such as a
 *  chain started anew (prev none) beside the tenant's chain. Without signatures verify cannot tell which
 *  of two such chains is genuine: both fail, and the head anchored elsewhere tells. */
export type Finding =
  | "intact"
  | "edited"
  | "removed"
  | "reordered"
  | "duplicate"
  | "forked"
  | "renamed"
  | "unreadable"
  | "unplaced"
  | "four-eyes"
  | "guardrails"
  | "promotion"
  | "look-alike"
  | "same-tenant";

export interface VerifiedRecord {
  file: string;
  environment: string | null;
  sequence: number | null;
  hash: string | null;
  /** What is wrong with it, or "intact". A record can be edited and out of place at once. */
  findings: Finding[];
  problems: string[];
  /** Why it starts a chain (prev none), as the record says: said by verify, never silently. */
  note?: string;
}

export interface ChainReport {
  records: VerifiedRecord[];
  /** Per environment, the hash of its last record in the folder: what to anchor elsewhere. A copy of an
   *  earlier record or one of two records that follow the same one is not the head: the last record
   *  before them, or after them, is. */
  heads: Record<string, { file: string; hash: string; sequence: number }>;
  ok: boolean;
}

/** What verify is told besides the folder: the source revsync.yaml names for a record's environment at the
 *  record's commit (promote_from), when the run can read revsync.yaml (a record of such an environment must
 *  carry its promotion facts). */
export interface VerifyOptions {
  promoteFrom?: (r: EvidenceRecord) => string | undefined;
}

const missing = (from: number, to: number, env: string): string =>
  from === to ? ` (record ${from} of environment ${env} is missing)` : ` (records ${from} to ${to} of environment ${env} are missing)`;

/** A record in its environment's chain: where it is in the folder, its hash and sequence. */
interface Link {
  index: number;
  file: string;
  hash: string;
  sequence: number;
}

/** Accounts for every file of the folder: each must be a record revsync writes (its schema), whose hash is
 *  its content's and whose file name is the one revsync gave it, in exactly one environment's chain (the
 *  environment it names). Checks each chain in the order of the
 *  file names (the order the records were written): each `prev` must be the hash of the record of its
 *  environment just before it, and its sequence one more. A broken link is told as what explains it: a
 *  record whose `prev` names one that comes after it was reordered; one whose `prev` names no record of
 *  the folder follows a removed (or rewritten) record. Pure: the caller reads the folder. */
export function verifyChain(stored: StoredRecord[], opts: VerifyOptions = {}): ChainReport {
  const checked = stored.map((s) => checkRecord(s, opts));
  const out = checked.map((c) => c.verified);
  const byEnv = new Map<string, Link[]>();
  checked.forEach(({ verified: v, placed }, index) => {
    if (!placed || v.environment === null || v.hash === null) return;
    byEnv.set(v.environment, [...(byEnv.get(v.environment) ?? []), { index, file: v.file, hash: v.hash, sequence: v.sequence ?? 0 }]);
  });
  const prevOf = (l: Link): string | null => (stored[l.index]?.record?.prev ?? null) as string | null;
  for (const [env, list] of byEnv) list.forEach((_, i) => checkLink(env, list, i, prevOf, out));
  crossChains(byEnv, (l) => stored[l.index]?.record as EvidenceRecord, out);
  // The head: the last record of the chain, not a copy of an earlier one nor one of a fork.
  const heads: ChainReport["heads"] = {};
  for (const [env, list] of byEnv) {
    const last = [...list].reverse().find((x) => !(out[x.index] as VerifiedRecord).findings.some((f) => f === "duplicate" || f === "forked"));
    if (last) heads[env] = { file: last.file, hash: last.hash, sequence: last.sequence };
  }
  for (const v of out) if (!v.findings.length) v.findings.push("intact");
  return { records: out, heads, ok: out.every((v) => v.findings[0] === "intact") };
}

/** What one chain is to another: an environment whose name looks like another chain's, or a second chain
 *  of one tenant (one apply environment per tenant: a chain started beside the tenant's own is what a
 *  forged one looks like). Each record of both chains is named, with the other chain. */
function crossChains(byEnv: Map<string, Link[]>, recordOf: (l: Link) => EvidenceRecord, out: VerifiedRecord[]): void {
  const chains = [...byEnv].map(([env, links]) => ({ env, links, tenants: links.map((l) => ({ link: l, keys: tenantKeysOf(recordOf(l)) })) }));
  const flag = (links: Link[], finding: Finding, problem: string): void => {
    for (const l of links) {
      const v = out[l.index] as VerifiedRecord;
      if (!v.findings.includes(finding)) v.findings.push(finding);
      v.problems.push(problem);
    }
  };
  for (const [i, a] of chains.entries()) {
    for (const b of chains.slice(i + 1)) {
      if (looksAlike(a.env, b.env)) {
        for (const [x, y] of [
          [a, b],
          [b, a],
        ] as const)
          flag(
            x.links,
            "look-alike",
            `look-alike: environment ${JSON.stringify(x.env)} differs from ${JSON.stringify(y.env)} (${y.links[0]?.file}) only in case, spaces, how a letter is written or letters that look alike; a record of one may pose as the other`,
          );
      }
      const shared = a.tenants.find((t) => b.tenants.some((u) => u.keys.some((k, n) => k === t.keys[n])));
      if (!shared) continue;
      const r = recordOf(shared.link);
      const tenant = `${r.base_url}, realm ${r.realm}`;
      for (const [x, y] of [
        [a, b],
        [b, a],
      ] as const) {
        const first = x.links[0] as Link;
        const anew = recordOf(first).prev === null && (y.links[0] as Link).index < first.index;
        flag(
          x.links,
          "same-tenant",
          anew
            ? `same tenant: the chain of environment ${JSON.stringify(x.env)} starts anew (prev none, ${first.file}) for tenant ${tenant}, which the chain of environment ${JSON.stringify(y.env)} (${y.links[0]?.file}) already records`
            : `same tenant: the chain of environment ${JSON.stringify(y.env)} (${y.links[0]?.file}) records tenant ${tenant} too; one tenant has one chain`,
        );
      }
    }
  }
}

const tenantKeysOf = (r: EvidenceRecord): [string, string] => tenantKeys(r.base_url, r.realm);

/** One file on its own: a record of this format that its schema holds (`placed`: it belongs in its
 *  environment's chain), whose hash is its content's, under the name revsync gave it, and that keeps
 *  four eyes where its environment asks them. */
function checkRecord(s: StoredRecord, opts: VerifyOptions): { verified: VerifiedRecord; placed: boolean } {
  const v: VerifiedRecord = { file: s.file, environment: null, sequence: null, hash: null, findings: [], problems: [] };
  const found = (finding: Finding, ...problems: string[]): void => {
    v.findings.push(finding);
    v.problems.push(...problems);
  };
  const r = s.record;
  if (!r) {
    found("unreadable", `it ${s.unreadable ?? "cannot be read"}`);
    return { verified: v, placed: false };
  }
  v.environment = typeof r.environment === "string" ? r.environment : null;
  v.sequence = typeof r.sequence === "number" ? r.sequence : null;
  v.hash = typeof r.hash === "string" ? r.hash : null;
  if (r.prev === null)
    v.note = `this record starts a new chain because ${typeof r.chain_note === "string" ? r.chain_note : "it is the first record of its environment"}`;
  if (typeof r.format_version !== "string" || r.format_version.split(".")[0] !== EVIDENCE_FORMAT_VERSION) {
    found("unreadable", `it has evidence format ${JSON.stringify(r.format_version)}; this revsync reads format ${EVIDENCE_FORMAT_VERSION}`);
    return { verified: v, placed: false };
  }
  // A record revsync did not write (no environment, a field of another type, one it never writes) is
  // in no chain: it is named, never passed over. Only what the schema holds is read further.
  const valid = fileValidator("evidence-record.schema.json");
  if (!valid(r)) {
    const why = describeAjvErrors(valid.errors)
      .slice(0, 3)
      .map((p) => `${p.field} ${p.message}`)
      .join("; ");
    found("unplaced", `not a record revsync writes, so it belongs to no environment's chain: ${why}`);
    return { verified: v, placed: false };
  }
  let actual: string | undefined;
  try {
    actual = recordHash(r as unknown as Record<string, unknown>);
  } catch (e) {
    v.problems.push(`its content cannot be hashed: ${(e as Error).message}`);
  }
  if (actual !== r.hash)
    found("edited", `edited: its content does not match its hash (it says ${r.hash ?? "none"}, its content hashes to ${actual ?? "nothing"})`);
  const renamed = renamedWords(s.file, r);
  if (renamed) found("renamed", renamed);
  // A record of a four_eyes environment must show the rule kept (a hash proves no edit, not the rule).
  const eyes = fourEyesFindings(r);
  if (eyes.problems.length) found("four-eyes", ...eyes.problems);
  if (eyes.notes.length) v.note = [v.note, ...eyes.notes].filter(Boolean).join("; ");
  const guarded = guardrailProblems(r);
  if (guarded.length) found("guardrails", ...guarded);
  const promoted = promotionProblems(r, opts.promoteFrom?.(r));
  if (promoted.length) found("promotion", ...promoted);
  return { verified: v, placed: true };
}

/** The file name is when the record was finished, its environment and the first 12 hex digits of its
 *  hash: a name that says otherwise is a rename (the name sets the record's place in the folder). */
function renamedWords(file: string, r: EvidenceRecord): string | undefined {
  const named = /-([0-9a-f]{12})\.json$/.exec(basename(file))?.[1];
  const hash12 = r.hash.replace(/^sha256:/, "").slice(0, 12);
  if (named !== hash12) return `renamed: its file name does not end with its hash's first 12 digits (${hash12})`;
  if (basename(file) !== recordFileName(r))
    return `renamed: its file name is not the one revsync gave it (${recordFileName(r)}: when it finished, its environment, its hash)`;
  return undefined;
}

/** The link of the i-th record of an environment's chain to the one before it: a copy, a fork, or a
 *  break told as what explains it. */
function checkLink(env: string, list: Link[], i: number, prevOf: (l: Link) => string | null, out: VerifiedRecord[]): void {
  const cur = list[i] as Link;
  const v = out[cur.index] as VerifiedRecord;
  const prev = prevOf(cur);
  const copyOf = list.slice(0, i).find((x) => x.hash === cur.hash);
  if (copyOf) {
    v.findings.push("duplicate");
    v.problems.push(`duplicate: a copy of ${copyOf.file} (the same hash)`);
    return;
  }
  // Two records that follow the same one: a fork (one of them inserted, or two runs at once).
  const sibling = prev === null ? undefined : list.slice(0, i).find((x) => x.hash !== cur.hash && prevOf(x) === prev);
  const parent = sibling && list.find((x) => x.hash === prev);
  if (sibling && parent) {
    const words = `fork: two records follow #${parent.sequence} (${parent.file}): ${sibling.file} and ${cur.file}`;
    for (const forked of [v, out[sibling.index] as VerifiedRecord]) {
      if (forked !== v && forked.findings.includes("forked")) continue;
      forked.findings.push("forked");
      forked.problems.push(words);
    }
    return;
  }
  const before = i > 0 ? list[i - 1] : undefined;
  if ((before?.hash ?? null) === prev && (!before || cur.sequence === before.sequence + 1) && (before || cur.sequence === 1 || prev === null)) return;
  const [finding, problem] = brokenLink(env, list, i, prev);
  v.findings.push(finding);
  v.problems.push(problem);
}

/** What explains a link that does not hold: the record it follows comes later (reordered) or earlier
 *  (out of order) in the folder, or is not in it (removed, or rewritten). */
function brokenLink(env: string, list: Link[], i: number, prev: string | null): [Finding, string] {
  const cur = list[i] as Link;
  const before = i > 0 ? list[i - 1] : undefined;
  const later = list.slice(i + 1).find((x) => x.hash === prev);
  const earlier = list.slice(0, Math.max(0, i - 1)).find((x) => x.hash === prev);
  if (later) return ["reordered", `reordered: it follows ${later.file}, which comes after it in the folder`];
  if (prev === null && before)
    return ["reordered", `reordered: it is the first record of environment ${env} (prev none), yet ${before.file} comes before it in the folder`];
  if (earlier) return ["reordered", `out of order: it follows ${earlier.file}, not ${before?.file ?? "nothing"}, which comes just before it in the folder`];
  // The link holds but the sequence skips: a record was removed and the chain re-linked by hand.
  if (prev !== null && prev === before?.hash) return ["removed", `its sequence is ${cur.sequence}, after ${before.sequence} (${before.file})`];
  if (before) {
    const gap = cur.sequence > before.sequence + 1 ? missing(before.sequence + 1, cur.sequence - 1, env) : "";
    return [
      "removed",
      `the record before it was removed, or ${before.file} was rewritten: its prev ${prev ?? "none"} is the hash of no record in the folder${gap}`,
    ];
  }
  const none = cur.sequence > 1 ? missing(1, cur.sequence - 1, env) : "";
  return ["removed", `the records before it were removed: its prev ${prev} is the hash of no record in the folder${none}`];
}
