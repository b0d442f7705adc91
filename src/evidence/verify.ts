import { fourEyesFindings } from "./four-eyes.js";
import { basename } from "node:path";
import { describeAjvErrors, fileValidator } from "../schema/ajv.js";
import { EVIDENCE_FORMAT_VERSION, recordHash } from "./record.js";
import { recordFileName, type StoredRecord } from "./store.js";

/** What verify finds of a file of the folder. `unreadable`: not a record at all (not JSON, another kind
 *  of file, a folder); `unplaced`: a record that is not one revsync writes (not valid against the
 *  record's schema: no environment, a field of the wrong type, a field revsync never writes), which
 *  verify cannot place in an environment's chain. Both fail the check: the folder holds records only.
 *  `four-eyes`: a record of a four_eyes environment whose batch was approved by its preparer, or whose
 *  pull request lacks an independent approval. */
export type Finding = "intact" | "edited" | "removed" | "reordered" | "duplicate" | "forked" | "renamed" | "unreadable" | "unplaced" | "four-eyes";

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

const missing = (from: number, to: number, env: string): string =>
  from === to ? ` (record ${from} of environment ${env} is missing)` : ` (records ${from} to ${to} of environment ${env} are missing)`;

/** Accounts for every file of the folder: each must be a record revsync writes (its schema), whose hash is
 *  its content's and whose file name is the one revsync gave it, in exactly one environment's chain (the
 *  environment it names). Checks each chain in the order of the
 *  file names (the order the records were written): each `prev` must be the hash of the record of its
 *  environment just before it, and its sequence one more. A broken link is told as what explains it: a
 *  record whose `prev` names one that comes after it was reordered; one whose `prev` names no record of
 *  the folder follows a removed (or rewritten) record. Pure: the caller reads the folder. */
export function verifyChain(stored: StoredRecord[]): ChainReport {
  const out: VerifiedRecord[] = [];
  const byEnv = new Map<string, { index: number; file: string; hash: string; sequence: number }[]>();
  for (const s of stored) {
    const v: VerifiedRecord = { file: s.file, environment: null, sequence: null, hash: null, findings: [], problems: [] };
    out.push(v);
    const r = s.record;
    if (!r) {
      v.findings.push("unreadable");
      v.problems.push(`it ${s.unreadable ?? "cannot be read"}`);
      continue;
    }
    v.environment = typeof r.environment === "string" ? r.environment : null;
    v.sequence = typeof r.sequence === "number" ? r.sequence : null;
    v.hash = typeof r.hash === "string" ? r.hash : null;
    if (r.prev === null)
      v.note = `this record starts a new chain because ${typeof r.chain_note === "string" ? r.chain_note : "it is the first record of its environment"}`;
    if (typeof r.format_version !== "string" || r.format_version.split(".")[0] !== EVIDENCE_FORMAT_VERSION) {
      v.findings.push("unreadable");
      v.problems.push(`it has evidence format ${JSON.stringify(r.format_version)}; this revsync reads format ${EVIDENCE_FORMAT_VERSION}`);
      continue;
    }
    // A record revsync did not write (no environment, a field of another type, one it never writes) is
    // in no chain: it is named, never passed over. Only what the schema holds is read further.
    const valid = fileValidator("evidence-record.schema.json");
    if (!valid(r)) {
      const why = describeAjvErrors(valid.errors)
        .slice(0, 3)
        .map((p) => `${p.field} ${p.message}`)
        .join("; ");
      v.findings.push("unplaced");
      v.problems.push(`not a record revsync writes, so it belongs to no environment's chain: ${why}`);
      continue;
    }
    let actual: string | undefined;
    try {
      actual = recordHash(r as unknown as Record<string, unknown>);
    } catch (e) {
      v.problems.push(`its content cannot be hashed: ${(e as Error).message}`);
    }
    if (actual !== r.hash) {
      v.findings.push("edited");
      v.problems.push(`edited: its content does not match its hash (it says ${r.hash ?? "none"}, its content hashes to ${actual ?? "nothing"})`);
    }
    // The file name is when the record was finished, its environment and the first 12 hex digits of its
    // hash: a name that says otherwise is a rename (the name sets the record's place in the folder).
    const named = /-([0-9a-f]{12})\.json$/.exec(basename(s.file))?.[1];
    const hash12 = r.hash.replace(/^sha256:/, "").slice(0, 12);
    if (named !== hash12) {
      v.findings.push("renamed");
      v.problems.push(`renamed: its file name does not end with its hash's first 12 digits (${hash12})`);
    } else if (basename(s.file) !== recordFileName(r)) {
      v.findings.push("renamed");
      v.problems.push(`renamed: its file name is not the one revsync gave it (${recordFileName(r)}: when it finished, its environment, its hash)`);
    }
    // A record of a four_eyes environment must show the rule kept (a hash proves no edit, not the rule).
    const eyes = fourEyesFindings(r);
    if (eyes.problems.length) {
      v.findings.push("four-eyes");
      v.problems.push(...eyes.problems);
    }
    if (eyes.notes.length) v.note = [v.note, ...eyes.notes].filter(Boolean).join("; ");
    if (v.environment === null || v.hash === null) continue;
    const list = byEnv.get(v.environment) ?? [];
    list.push({ index: out.length - 1, file: s.file, hash: v.hash, sequence: v.sequence ?? 0 });
    byEnv.set(v.environment, list);
  }
  for (const [env, list] of byEnv) {
    list.forEach((cur, i) => {
      const v = out[cur.index] as VerifiedRecord;
      const prev = (stored[cur.index]?.record?.prev ?? null) as string | null;
      const before = i > 0 ? list[i - 1] : undefined;
      const copyOf = list.slice(0, i).find((x) => x.hash === cur.hash);
      if (copyOf) {
        v.findings.push("duplicate");
        v.problems.push(`duplicate: a copy of ${copyOf.file} (the same hash)`);
        return;
      }
      // Two records that follow the same one: a fork (one of them inserted, or two runs at once).
      const sibling = prev === null ? undefined : list.slice(0, i).find((x) => x.hash !== cur.hash && stored[x.index]?.record?.prev === prev);
      const parent = sibling && list.find((x) => x.hash === prev);
      if (sibling && parent) {
        const words = `fork: two records follow #${parent.sequence} (${parent.file}): ${sibling.file} and ${cur.file}`;
        v.findings.push("forked");
        v.problems.push(words);
        const other = out[sibling.index] as VerifiedRecord;
        if (!other.findings.includes("forked")) {
          other.findings.push("forked");
          other.problems.push(words);
        }
        return;
      }
      if ((before?.hash ?? null) === prev && (!before || cur.sequence === before.sequence + 1) && (before || cur.sequence === 1 || prev === null)) return;
      const later = list.slice(i + 1).find((x) => x.hash === prev);
      const earlier = list.slice(0, Math.max(0, i - 1)).find((x) => x.hash === prev);
      if (later) {
        v.findings.push("reordered");
        v.problems.push(`reordered: it follows ${later.file}, which comes after it in the folder`);
      } else if (prev === null && before) {
        v.findings.push("reordered");
        v.problems.push(`reordered: it is the first record of environment ${env} (prev none), yet ${before.file} comes before it in the folder`);
      } else if (earlier) {
        v.findings.push("reordered");
        v.problems.push(`out of order: it follows ${earlier.file}, not ${before?.file ?? "nothing"}, which comes just before it in the folder`);
      } else if (prev !== null && prev === before?.hash) {
        // The link holds but the sequence skips: a record was removed and the chain re-linked by hand.
        v.findings.push("removed");
        v.problems.push(`its sequence is ${cur.sequence}, after ${before.sequence} (${before.file})`);
      } else {
        v.findings.push("removed");
        const gap = before && cur.sequence > before.sequence + 1 ? missing(before.sequence + 1, cur.sequence - 1, env) : "";
        const none = !before && cur.sequence > 1 ? missing(1, cur.sequence - 1, env) : "";
        v.problems.push(
          before
            ? `the record before it was removed, or ${before.file} was rewritten: its prev ${prev ?? "none"} is the hash of no record in the folder${gap}`
            : `the records before it were removed: its prev ${prev} is the hash of no record in the folder${none}`,
        );
      }
    });
  }
  // The head: the last record of the chain, not a copy of an earlier one nor one of a fork.
  const heads: ChainReport["heads"] = {};
  for (const [env, list] of byEnv) {
    const last = [...list].reverse().find((x) => !(out[x.index] as VerifiedRecord).findings.some((f) => f === "duplicate" || f === "forked"));
    if (last) heads[env] = { file: last.file, hash: last.hash, sequence: last.sequence };
  }
  for (const v of out) if (!v.findings.length) v.findings.push("intact");
  return { records: out, heads, ok: out.every((v) => v.findings[0] === "intact") };
}
