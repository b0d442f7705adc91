import { createHash } from "node:crypto";
import { accessSync, constants, readdirSync, statSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { makeFolders, writeFileExclusive } from "../fs-atomic.js";
import { redactJson } from "../redact-json.js";
import { FileRefused, READ_CAPS, readUserFile } from "../user-files.js";
import { recordHash, type EvidenceRecord } from "./record.js";

const envSlug = (environment: string): string => environment.replace(/[^A-Za-z0-9_.-]+/g, "_");
/** The environment's own part of a record's name: its name as a file name can hold it, and 8 hex digits of
 *  a hash of its exact name, so that two environments a file name (or a file system that ignores case)
 *  would hold as one never share a slot. */
const envPart = (environment: string): string => `${envSlug(environment)}-${createHash("sha256").update(environment, "utf8").digest("hex").slice(0, 8)}`;
const SLOT = /^(.*)-(\d{6,})\.json$/;

/** The environment's last record in the folder, found by sequence numbers, never by clocks: the highest
 *  slot its files take (the newest readable one of them is linked to), else, in a folder only an earlier
 *  revsync wrote into, the readable record of the highest sequence. `slot`: the highest slot taken. */
function headIn(dir: string, environment: string): { hash: string; sequence: number; slot: number } | undefined {
  const names = readdirSync(dir);
  const own = envPart(environment);
  const slots = names
    .map((n) => SLOT.exec(n))
    .filter((m): m is RegExpExecArray => !!m && m[1] === own)
    .map((m) => ({ name: m[0], seq: Number(m[2]) }))
    .sort((x, y) => y.seq - x.seq);
  const slot = slots[0]?.seq ?? 0;
  for (const { name } of slots) {
    const head = headOf(join(dir, name), environment);
    if (head) return { ...head, slot };
  }
  const tag = `-${envSlug(environment)}-`;
  let best: Pick<EvidenceRecord, "hash" | "sequence"> | undefined;
  for (const n of names) {
    if (!n.endsWith(".json") || !n.includes(tag) || SLOT.test(n)) continue;
    const head = headOf(join(dir, n), environment);
    if (head && (!best || head.sequence > best.sequence)) best = head;
  }
  return best ? { ...best, slot } : slot ? { hash: "", sequence: 0, slot } : undefined;
}

/** What the next record links to: the hash and sequence of a record of the environment. A record as
 *  revsync writes it holds both where they always are (its sequence among the first keys, its hash the
 *  last), so they are read without parsing the whole record; any other layout is parsed. Checking the
 *  record itself is verify's work. */
function headOf(path: string, environment: string): Pick<EvidenceRecord, "hash" | "sequence"> | undefined {
  let text: string;
  try {
    text = readUserFile(path, READ_CAPS.json);
  } catch {
    return undefined;
  }
  const start =
    /^\{\n {2}"format_version": "[^"\\]*",\n {2}"kind": "revsync-apply-evidence",\n {2}"sequence": (\d+),\n {2}"revsync_version": "[^"\\]*",\n {2}"environment": ("(?:[^"\\]|\\.)*"),/.exec(
      text.slice(0, 4096),
    );
  const end = /"hash": "(sha256:[0-9a-f]{64})"\n\}\n?$/.exec(text.slice(-200));
  if (start && end) return JSON.parse(start[2] as string) === environment ? { sequence: Number(start[1]), hash: end[1] as string } : undefined;
  const r = readRecord(path).record;
  return r && r.environment === environment ? r : undefined;
}

/** A record's file name: its slot, the environment and its sequence (zero-padded to six digits), which no
 *  two records of one environment share: appending one is an exclusive create of that name. */
export function recordFileName(r: Pick<EvidenceRecord, "environment" | "sequence">): string {
  return `${envPart(r.environment)}-${String(r.sequence).padStart(6, "0")}.json`;
}

/** The name an earlier revsync gave a record: when it finished (UTC, to the millisecond), the environment
 *  and the start of its hash. Records named so still verify; new ones take their slot's name. */
export function earlierFileName(r: Pick<EvidenceRecord, "finished_at" | "environment" | "hash">): string {
  const at = r.finished_at.replace(/[-:]/g, "").replace(/(\.\d{3})?Z$/, (m, ms: string | undefined) => `${ms ?? ".000"}Z`);
  return `${at}-${envSlug(r.environment)}-${r.hash.replace(/^sha256:/, "").slice(0, 12)}.json`;
}

/** The evidence folder, checked before apply sends anything: it exists (or is made) and can be written. */
export function prepareEvidenceDir(dir: string): void {
  try {
    makeFolders(dir);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error("not a folder"), { code: "ENOTDIR" });
    accessSync(dir, constants.W_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new UserError(
      `cannot write evidence records into ${dir} (${code}), so nothing was sent`,
      "give --evidence (or evidence: in revsync.yaml) a folder revsync can write",
    );
  }
}

export interface StoredRecord {
  file: string;
  /** The parsed record, or why it could not be read. */
  record?: EvidenceRecord;
  unreadable?: string;
}

/** Every file of a folder, in the order of their names: each record, and everything else as what it is (a folder, a file that is not a record), so that nothing in
 *  the folder goes unaccounted for. */
export function readRecords(dir: string): StoredRecord[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new UserError(`cannot read the evidence folder ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return entries
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => {
      if (e.isDirectory()) return { file: e.name, unreadable: "is a folder: an evidence folder holds records only" };
      if (!e.name.endsWith(".json"))
        return { file: e.name, unreadable: "is not an evidence record (revsync writes records as .json files): an evidence folder holds records only" };
      return readRecord(join(dir, e.name), e.name);
    });
}

export function readRecord(path: string, file = path): StoredRecord {
  let text: string;
  try {
    text = readUserFile(path, READ_CAPS.json);
  } catch (e) {
    return {
      file,
      unreadable: e instanceof FileRefused ? `cannot be read: ${e.why}` : `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    };
  }
  try {
    const record = JSON.parse(text) as EvidenceRecord;
    if (!record || typeof record !== "object" || record.kind !== "revsync-apply-evidence") return { file, unreadable: "is not a revsync evidence record" };
    return { file, record };
  } catch (e) {
    return { file, unreadable: `is not valid JSON (${(e as Error).message})` };
  }
}

/** How many times an append tries the next slot before it gives up: others' records taking each one. */
const APPEND_TRIES = 64;

/** Appends a finished record to its environment's chain in the folder, in one atomic step against the
 *  folder: it links the record to the environment's last one (found by sequence), hashes it, and creates
 *  the next sequence's slot exclusively (a name that exists fails, whoever made it a moment before); a
 *  slot taken meanwhile by another run's record is met by linking to that one and trying the slot after.
 *  So two runs at once, lock or not, make one chain, never a fork. `redact` blanks out secrets: it runs
 *  over each text of the record (each string value and key), before the hash is taken of it, so a secret
 *  quoted in an error never reaches the folder. `unavailable`: why earlier evidence could not be fetched
 *  (said in the chain_note of a record that starts a chain). Returns where it went. */
export function appendRecord(
  dir: string,
  content: Omit<EvidenceRecord, "prev" | "hash" | "sequence">,
  redact: (text: string) => string = (t) => t,
  unavailable: string | null = null,
): { path: string; record: EvidenceRecord } {
  for (let attempt = 0; attempt < APPEND_TRIES; attempt++) {
    const record = linked(content, headIn(dir, content.environment), redact, unavailable);
    const path = join(dir, recordFileName(record));
    try {
      writeFileExclusive(path, `${JSON.stringify(record, null, 2)}\n`);
      return { path, record };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  throw new UserError(
    `the evidence folder ${dir} took ${APPEND_TRIES} other records of environment ${JSON.stringify(content.environment)} while this run's was written, each in the slot this one tried: it was not written`,
    "run evidence verify on the folder: that many runs at once at one environment is more than its chain orders",
  );
}

/** The record, linked after `last` (its hash, the next sequence past every slot taken), redacted and
 *  hashed. */
function linked(
  content: Omit<EvidenceRecord, "prev" | "hash" | "sequence">,
  last: { hash: string; sequence: number; slot: number } | undefined,
  redact: (text: string) => string,
  unavailable: string | null,
): EvidenceRecord {
  const sequence = Math.max(last?.sequence ?? 0, last?.slot ?? 0) + 1;
  const prev = last?.hash || null;
  const { format_version, kind, ...rest } = content;
  // A record that starts a chain says why: an auditor tells a first apply from evidence that was lost.
  const chain_note = prev
    ? undefined
    : unavailable
      ? `the earlier evidence of environment ${content.environment} could not be fetched: ${unavailable}`
      : `there was no earlier record of environment ${content.environment} in the folder`;
  let record: EvidenceRecord = { format_version, kind, sequence, ...rest, prev, ...(chain_note ? { chain_note } : {}), hash: "" };
  // Field by field: each text of the record, never its serialized form (a secret that is a JSON word
  // would break it, one that is a key would rename it).
  record = { ...redactJson(record, redact), hash: "" };
  record.hash = recordHash(record as unknown as Record<string, unknown>);
  return record;
}
