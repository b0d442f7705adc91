import { accessSync, constants, readdirSync, statSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { makeFolders, writeFileExclusive } from "../fs-atomic.js";
import { redactJson } from "../redact-json.js";
import { FileRefused, READ_CAPS, readUserFile } from "../user-files.js";
import { recordHash, type EvidenceRecord } from "./record.js";

/** A record's file name: when it was written (UTC, to the millisecond), the environment, and the start
 *  of its hash, so that the folder lists records in the order they were written and no two share a name. */
const envSlug = (environment: string): string => environment.replace(/[^A-Za-z0-9_.-]+/g, "_");

/** The environment's last readable record in the folder, found from the file names: only the newest
 *  files of its name are read, not the whole history (two environments whose names differ only in
 *  characters a file name cannot hold are told apart by the record itself). */
function lastRecordOf(dir: string, environment: string): Pick<EvidenceRecord, "hash" | "sequence"> | undefined {
  const tag = `-${envSlug(environment)}-`;
  const names = readdirSync(dir)
    .filter((n) => n.endsWith(".json") && n.includes(tag))
    .sort();
  for (let i = names.length - 1; i >= 0; i--) {
    const head = headOf(join(dir, names[i] as string), environment);
    if (head) return head;
  }
  return undefined;
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

export function recordFileName(r: Pick<EvidenceRecord, "finished_at" | "environment" | "hash">): string {
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

/** Every file of a folder, in the order of their names (the order the records were written): each
 *  record, and everything else as what it is (a folder, a file that is not a record), so that nothing in
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

/** Links a finished record to the last record of its environment in the folder, hashes it and writes it
 *  as a new file (never over one). `redact` blanks out secrets: it runs over each text of the record (each
 *  string value and key), before the hash is taken of it, so a secret quoted in an error never reaches the
 *  folder. `unavailable`:
 *  why earlier evidence could not be fetched (said in the chain_note of a record that starts a chain).
 *  Returns where it went. */
export function appendRecord(
  dir: string,
  content: Omit<EvidenceRecord, "prev" | "hash" | "sequence">,
  redact: (text: string) => string = (t) => t,
  unavailable: string | null = null,
): { path: string; record: EvidenceRecord } {
  const last = lastRecordOf(dir, content.environment);
  const sequence = (last?.sequence ?? 0) + 1;
  const { format_version, kind, ...rest } = content;
  // A record that starts a chain says why: an auditor tells a first apply from evidence that was lost.
  const chain_note = last
    ? undefined
    : unavailable
      ? `the earlier evidence of environment ${content.environment} could not be fetched: ${unavailable}`
      : `there was no earlier record of environment ${content.environment} in the folder`;
  let record: EvidenceRecord = { format_version, kind, sequence, ...rest, prev: last?.hash ?? null, ...(chain_note ? { chain_note } : {}), hash: "" };
  // Field by field: each text of the record, never its serialized form (a secret that is a JSON word
  // would break it, one that is a key would rename it).
  record = { ...redactJson(record, redact), hash: "" };
  record.hash = recordHash(record as unknown as Record<string, unknown>);
  const path = join(dir, recordFileName(record));
  writeFileExclusive(path, `${JSON.stringify(record, null, 2)}\n`);
  return { path, record };
}
