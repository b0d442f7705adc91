import { fourEyesFindings } from "./four-eyes.js";
import { guardrailProblems } from "./guardrails.js";
import { promotionProblems } from "./promotion.js";
import { basename } from "node:path";
import { describeAjvErrors, fileValidator } from "../schema/ajv.js";
import { EVIDENCE_FORMAT_VERSION, recordHash, type EvidenceRecord } from "./record.js";
import { earlierFileName, recordFileName, type StoredRecord } from "./store.js";
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
  /** Per environment, its chain's head, the record no other record follows: what to anchor elsewhere. A
   *  copy of a record or one of two records that follow the same one is not the head: the latest record
   *  no other follows is, or the record a fork's records follow. */
  heads: Record<string, { file: string; hash: string; sequence: number }>;
  /** Per environment whose chain does not hold (a record of it failed the check): the last record of
   *  its chain, from the first by sequence, before the first that failed (null when the first did). Its
   *  head is then no hash to anchor: verify says so instead. */
  broken: Record<string, { file: string; hash: string; sequence: number } | null>;
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

/** A record in its environment's chain: where it is in the folder, its hash, sequence and link. */
interface Link {
  index: number;
  file: string;
  hash: string;
  sequence: number;
  prev: string | null;
}

/** Accounts for every file of the folder: each must be a record revsync writes (its schema), whose hash is
 *  its content's and whose file name is the one revsync gave it, in exactly one environment's chain (the
 *  environment it names). Each chain is followed by its links and sequence numbers, never by file names
 *  or clocks: each record's `prev` must be the hash of a record of its environment in the folder, whose
 *  sequence is one less, and no two records may follow the same one. A broken link is told as what
 *  explains it: a `prev` naming no record of the folder follows a removed (or rewritten) record; a
 *  sequence that skips, or goes back, a removal or a reorder. The head of a chain is the record no other
 *  record follows. Pure: the caller reads the folder. The records come back in chain order (by
 *  environment, then sequence), the files that are in no chain after them, as the folder lists them. */
export function verifyChain(stored: StoredRecord[], opts: VerifyOptions = {}): ChainReport {
  const checked = stored.map((s) => checkRecord(s, opts));
  const out = checked.map((c) => c.verified);
  const byEnv = new Map<string, Link[]>();
  checked.forEach(({ verified: v, placed }, index) => {
    if (!placed || v.environment === null || v.hash === null) return;
    const prev = (stored[index]?.record?.prev ?? null) as string | null;
    byEnv.set(v.environment, [...(byEnv.get(v.environment) ?? []), { index, file: v.file, hash: v.hash, sequence: v.sequence ?? 0, prev }]);
  });
  const heads: ChainReport["heads"] = {};
  const chains = new Map<string, Link[]>();
  for (const [env, list] of byEnv) {
    const originals = markCopies(list, out);
    chains.set(env, originals);
    for (const l of originals) checkLink(env, l, originals, out);
    const head = headOf(originals, out);
    if (head) heads[env] = { file: head.file, hash: head.hash, sequence: head.sequence };
  }
  crossChains(byEnv, (l) => stored[l.index]?.record as EvidenceRecord, out);
  for (const v of out) if (!v.findings.length) v.findings.push("intact");
  return { records: chainOrder(out, byEnv), heads, broken: brokenChains(chains, out), ok: out.every((v) => v.findings[0] === "intact") };
}

/** Each environment a record of whose chain (copies aside: they are in it no more) failed the check,
 *  with the last record that holds: the one before the first failed, by sequence. */
function brokenChains(chains: Map<string, Link[]>, out: VerifiedRecord[]): ChainReport["broken"] {
  const broken: ChainReport["broken"] = {};
  for (const [env, links] of chains) {
    const sorted = [...links].sort((x, y) => x.sequence - y.sequence);
    const first = sorted.findIndex((l) => (out[l.index] as VerifiedRecord).findings[0] !== "intact");
    if (first < 0) continue;
    const last = sorted[first - 1];
    broken[env] = last ? { file: last.file, hash: last.hash, sequence: last.sequence } : null;
  }
  return broken;
}

/** The verified files in chain order: each environment's records by sequence (environments as the
 *  folder first lists them), then every file in no chain. */
function chainOrder(out: VerifiedRecord[], byEnv: Map<string, Link[]>): VerifiedRecord[] {
  const placed = [...byEnv.values()].flatMap((list) => [...list].sort((x, y) => x.sequence - y.sequence || (x.file < y.file ? -1 : 1)).map((l) => l.index));
  const inChain = new Set(placed);
  return [...placed.map((i) => out[i] as VerifiedRecord), ...out.filter((_, i) => !inChain.has(i))];
}

/** Copies: a record whose hash another of the folder has too. The one under its own name (else the first
 *  the folder lists) is the record; each other is a duplicate, in the chain no more. The rest. */
function markCopies(list: Link[], out: VerifiedRecord[]): Link[] {
  const byHash = new Map<string, Link[]>();
  for (const l of list) byHash.set(l.hash, [...(byHash.get(l.hash) ?? []), l]);
  const originals: Link[] = [];
  for (const same of byHash.values()) {
    const own = same.find((l) => !(out[l.index] as VerifiedRecord).findings.includes("renamed")) ?? (same[0] as Link);
    originals.push(own);
    for (const l of same) {
      if (l === own) continue;
      const v = out[l.index] as VerifiedRecord;
      v.findings.push("duplicate");
      v.problems.push(`duplicate: a copy of ${own.file} (the same hash)`);
    }
  }
  return originals;
}

/** One record's link to the record it follows: a fork (it and another follow the same record, or start
 *  the environment's chain beside another), a link to no record of the folder, or a sequence that is not
 *  the next. */
function checkLink(env: string, cur: Link, list: Link[], out: VerifiedRecord[]): void {
  const v = out[cur.index] as VerifiedRecord;
  const add = (finding: Finding, problem: string): void => {
    v.findings.push(finding);
    v.problems.push(problem);
  };
  const siblings = list.filter((x) => x.prev === cur.prev);
  const parent = cur.prev === null ? undefined : list.find((x) => x.hash === cur.prev);
  if (siblings.length > 1) {
    const files = siblings.map((x) => x.file);
    const what = parent
      ? `follow #${parent.sequence} (${parent.file})`
      : cur.prev === null
        ? `start the chain of environment ${env} (prev none)`
        : `follow ${cur.prev}`;
    return add("forked", `fork: ${files.length === 2 ? "two" : files.length} records ${what}: ${files.join(" and ")}`);
  }
  if (cur.prev === null) return;
  if (!parent) return add("removed", removedWords(env, cur, list));
  if (cur.sequence === parent.sequence + 1) return;
  if (cur.sequence > parent.sequence + 1)
    return add("removed", `its sequence is ${cur.sequence}, after ${parent.sequence} (${parent.file})${missing(parent.sequence + 1, cur.sequence - 1, env)}`);
  add("reordered", `reordered: its sequence is ${cur.sequence}, yet it follows #${parent.sequence} (${parent.file})`);
}

/** A record whose `prev` is the hash of no record in the folder: the record before it was removed, or
 *  rewritten (the record of the sequence before, when the folder holds one, is named). */
function removedWords(env: string, cur: Link, list: Link[]): string {
  const before = list.find((x) => x.sequence === cur.sequence - 1);
  if (before) return `the record before it was removed, or ${before.file} was rewritten: its prev ${cur.prev} is the hash of no record in the folder`;
  const below = list.filter((x) => x.sequence < cur.sequence).reduce((n, x) => Math.max(n, x.sequence), 0);
  const gap = cur.sequence > below + 1 ? missing(below + 1, cur.sequence - 1, env) : "";
  return below
    ? `the record before it was removed, or rewritten: its prev ${cur.prev} is the hash of no record in the folder${gap}`
    : `the records before it were removed: its prev ${cur.prev} is the hash of no record in the folder${gap}`;
}

/** The head of a chain, what to anchor: the record no other record follows, the latest of them (by
 *  sequence) where a fork makes more than one, never one of a fork itself (then the record they follow). */
function headOf(list: Link[], out: VerifiedRecord[]): Link | undefined {
  const followed = new Set(list.map((x) => x.prev));
  const forked = (l: Link): boolean => (out[l.index] as VerifiedRecord).findings.includes("forked");
  const leaves = list.filter((x) => !followed.has(x.hash));
  const latest = (ls: Link[]): Link | undefined => ls.reduce<Link | undefined>((best, x) => (!best || x.sequence > best.sequence ? x : best), undefined);
  const clean = latest(leaves.filter((x) => !forked(x)));
  if (clean) return clean;
  return latest(leaves.map((x) => list.find((p) => p.hash === x.prev)).filter((p): p is Link => !!p && !forked(p)));
}

/** What one chain is to another: an environment whose name looks like another chain's, or a second chain
 *  of one tenant (one apply environment per tenant: a chain started beside the tenant's own is what a
 *  forged one looks like). Each record of both chains is named, with the other chain. */
function crossChains(byEnv: Map<string, Link[]>, recordOf: (l: Link) => EvidenceRecord, out: VerifiedRecord[]): void {
  const chains = [...byEnv].map(([env, unordered]) => {
    const links = [...unordered].sort((x, y) => x.sequence - y.sequence);
    return { env, links, tenants: links.map((l) => ({ link: l, keys: tenantKeysOf(recordOf(l)) })) };
  });
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
        // The shorter chain is the one started beside the other (no clock, no file name says which came first).
        const anew = recordOf(first).prev === null && y.links.length > x.links.length;
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

/** The file name is the record's slot (its environment and sequence), or, for a record an earlier revsync
 *  wrote, when it finished, its environment and its hash's first 12 digits: a name that says otherwise is
 *  a rename (an appender finds the environment's last record by its slot). */
function renamedWords(file: string, r: EvidenceRecord): string | undefined {
  const name = basename(file);
  if (name === recordFileName(r) || name === earlierFileName(r)) return undefined;
  return `renamed: its file name is not the one revsync gave it (${recordFileName(r)}: its environment and sequence)`;
}
