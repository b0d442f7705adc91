/** An SSP policy's batches brought into git's document of it in place (export into a folder that holds
 *  policy files): a batch git does not list is added with its values file; a batch git lists gets the
 *  service's status and dates and, where they differ, its values; what was left out is said in comments
 *  after the batches. */
import { posix } from "node:path";
import { valuesFileFor } from "../../shared/address.js";
import { BATCH_DATES, type DocInGit, type ExportedBatch, type ExportedFile } from "../export-file.js";
import { valuesChecksum } from "./values.js";

type GitBatch = { name?: unknown; status?: unknown; values?: unknown; effective_start_date?: unknown; effective_end_date?: unknown };

const batchAddress = (f: ExportedFile, name: string): string => f.batchAddress?.(name) ?? f.address;

/** Two values files hold the same values, whatever their column order, quoting or line ends. */
export function sameValues(a: string, b: string): boolean {
  try {
    return valuesChecksum({ csv: a }) === valuesChecksum({ csv: b });
  } catch {
    return false;
  }
}

/** One batch of the exported file, placed into git's document: its own values file's name, where it
 *  gets one (two batches whose names read alike in a file name never share one). */
interface BatchPlace {
  doc: DocInGit;
  f: ExportedFile;
  b: ExportedBatch;
  newValues: () => string;
}

/** A batch of the service's that git does not list, added to the file (with its values file). */
function addBatch({ doc, f, b, newValues }: BatchPlace): void {
  if (doc.refuseShared(`batch ${b.name} (${b.status}) is in the service, not in git`)) return;
  const text = f.batchValues.get(b.name);
  const file = text !== undefined ? newValues() : undefined;
  doc.append("batches", { ...b, ...(file !== undefined ? { values: file } : {}) });
  doc.changed(`batch ${b.name} added`);
  if (file !== undefined && text !== undefined) doc.writeValues(posix.join(doc.dir, file), text, `values of ${batchAddress(f, b.name)}`, true);
}

/** A batch git lists brought to the service's: its status and the dates git sets (compared as plan
 *  compares them; one the service does not show as a date keeps git's, noted), and its values: git's own
 *  file keeps its name and gets the service's values when they differ; a batch without one gets one. */
function updateBatch({ doc, f, b, newValues }: BatchPlace, i: number, g: GitBatch): void {
  const put = (path: (string | number)[], value: unknown, what: string): void => {
    if (doc.set(path, value) === "set") doc.changed(what);
  };
  if (g.status !== b.status) put(["batches", i, "status"], b.status, `batch ${b.name} status`);
  for (const k of BATCH_DATES) {
    if (g[k] === undefined) continue;
    const unknown = f.batchDatesUnknown.get(b.name)?.find((u) => u.field === k);
    if (unknown) doc.unknown(batchAddress(f, b.name), [unknown]);
    else if (b[k] !== undefined && g[k] !== b[k]) put(["batches", i, k], b[k], `batch ${b.name} ${k}`);
  }
  const text = f.batchValues.get(b.name);
  if (text === undefined) return;
  const what = `values of ${batchAddress(f, b.name)}`;
  if (typeof g.values === "string" && g.values !== "") {
    const file = posix.normalize(posix.join(doc.dir, g.values));
    const held = doc.readValues(file);
    const same = held !== undefined && (held === text || sameValues(held, text));
    if (!same && !doc.refuseShared(`the values of batch ${b.name} differ from ${file}`)) doc.writeValues(file, text, what);
    return;
  }
  if (doc.refuseShared(`batch ${b.name} has values in the service and none in git`)) return;
  const file = newValues();
  doc.put(["batches", i, "values"], file);
  doc.changed(`batch ${b.name} values`);
  doc.writeValues(posix.join(doc.dir, file), text, what, true);
}

/** The exported policy's batches into git's document of it, and the comments of what was left out. */
export function placeBatches(f: ExportedFile, doc: DocInGit): void {
  const current = doc.current as { batches?: GitBatch[] };
  const gitBatches = Array.isArray(current.batches) ? current.batches : [];
  for (const b of f.value.batches ?? []) {
    const i = gitBatches.findIndex((g) => g?.name === b.name);
    const newValues = (): string => doc.claimValues(valuesFileFor(f.value.metadata.name, b.name));
    const place: BatchPlace = { doc, f, b, newValues };
    if (i < 0) addBatch(place);
    else updateBatch(place, i, gitBatches[i] ?? {});
  }
  if (doc.comment("batches", f.batchComments)) doc.changed("comments on batches left out");
}

/** The values files a document of git names (its batches' values), relative to its file's folder. */
export function valuesNamed(value: unknown): string[] {
  const batches = (value as { batches?: unknown } | null | undefined)?.batches;
  if (!Array.isArray(batches)) return [];
  return batches.flatMap((b: { values?: unknown } | null) => (typeof b?.values === "string" && b.values !== "" ? [b.values] : []));
}
