/** What plan, drift, export and apply's checks compare of an SSP policy: its fields and a batch's dates
 *  and values against git's, and a live policy against the body that created it. Pure. */
import { unsafeName } from "../../config/rules.js";
import { UserError } from "../../errors.js";
import { pasteable, shellQuote } from "../../shell-quote.js";
import { parseDate } from "../../policy-test/line.js";
import type { SspCreateBody, SspItem } from "../../schema/generated/api.js";
import { batchNameOf, byCodePoint, targeted } from "../../shared/address.js";
import { fieldDiff, normalizeSspFields, pick, type FieldDiff } from "../../shared/normalize.js";
import { addUnknown, notShown, type Unknown, type UnknownField } from "../../shared/unknown.js";
import { batchWho, envelopeWho } from "../../shared/who.js";
import { numberOrNull } from "../../number.js";
import { CsvSyntaxError } from "../../ssp/csv.js";
import { BATCH_DATES } from "../export-file.js";
import type { Unmanaged } from "../kind.js";
import { keptFields, type KeptLive } from "../../shared/entries.js";
import type { DesiredBatch, DesiredSsp } from "./files.js";
import { sspAddress, type LivePolicy, type ShownValues } from "./read.js";
import { compareValues, keyedValues, valuesChecksum, type HeldValues } from "./values.js";

/** How many differing rows of a batch's values a plan or drift entry shows, field by field. */
export const VALUE_ROWS_SHOWN = 20;

export const liveBatch = (lp: LivePolicy, name: string): SspItem | undefined => lp.batches?.find((b) => batchNameOf(b) === name);

/** Comparable fields of a live SSP policy against git. A field the service answers as null (or leaves
 *  out), or as a number a double cannot hold exactly, is unknown, not a change: it is not compared, and
 *  the report says so (src/shared/unknown.ts). */
export function sspFieldDiff(d: DesiredSsp, lp: LivePolicy, unknownOut?: Unknown): FieldDiff[] {
  const live = lp.item as unknown as Record<string, unknown>;
  const spec = d.spec as unknown as Record<string, unknown>;
  const unknown = notShown(spec, live);
  addUnknown(unknownOut, sspAddress.policy(d.name), unknown);
  const keys = Object.keys(spec).filter((k) => !unknown.some((u) => u.field === k));
  return fieldDiff(normalizeSspFields(lp.item, keys), normalizeSspFields(d.spec as unknown as Record<string, unknown>, keys));
}

/** A batch's dates: git may set them, the service holds them, and the interface has no call to change
 *  them on a batch that exists. */
export { BATCH_DATES };

/** The service's date of a batch as revsync compares it (YYYY-MM-DD, from that form or MM/DD/YYYY), or
 *  why it cannot be compared: the service shows none (null, or leaves it out), or text that is no date. */
export function serviceDate(v: unknown): { date: string } | { unknown: Omit<UnknownField, "field"> } {
  if (v === null || v === undefined) return { unknown: {} };
  const date = typeof v === "string" ? parseDate(v) : undefined;
  return date ? { date } : { unknown: { unreadable: typeof v === "string" ? v : JSON.stringify(v) } };
}

/** git's dates of a batch against the service's, for each date git sets (`before` the service's, `after`
 *  git's, as a plan shows them). A date the service does not show, or shows as no date, is not compared
 *  and is noted at the batch's address (src/shared/unknown.ts). */
export function batchDatesDiff(b: DesiredBatch, lb: SspItem, addr: string, unknownOut?: Unknown): FieldDiff[] {
  const diff: FieldDiff[] = [];
  const live = lb as unknown as Record<string, unknown>;
  for (const k of BATCH_DATES) {
    const git = b[k];
    if (git === undefined) continue;
    const held = serviceDate(live[k]);
    if ("unknown" in held) addUnknown(unknownOut, addr, [{ field: k, ...held.unknown }]);
    else if (held.date !== git) diff.push({ path: k, kind: "changed", before: held.date, after: git });
  }
  return diff;
}

export interface ValuesDiff {
  diff: FieldDiff[];
  /** Rows that differ in all (changed, only in git, only in the service); the diff shows the first ones. */
  total: number;
  changed: number;
  added: number;
  removed: number;
}

/** git's values file against the values the service holds, row by row and field by field, in key order:
 *  the first VALUE_ROWS_SHOWN differing rows are in the diff, all are counted. In a plan `before` is the
 *  service's value and `after` git's; in drift the other way round. */
export function valuesDiff(git: NonNullable<DesiredBatch["values"]>, held: HeldValues, where: string, side: "plan" | "drift"): ValuesDiff {
  // The download is the uploaded file: byte-identical to git's file means the same values.
  if (!Array.isArray(held) && (held as { csv: string }).csv === git.text) return { diff: [], total: 0, changed: 0, added: 0, removed: 0 };
  let delta;
  try {
    delta = compareValues(keyedValues(git.rows), held);
  } catch (e) {
    if (!(e instanceof CsvSyntaxError)) throw e;
    throw new UserError(`the service's values file of ${where} is not valid CSV (line ${e.line}: ${e.message}), so it cannot be compared with git`);
  }
  const rows: { key: string; diff: FieldDiff[] }[] = [];
  for (const c of delta.changed) {
    rows.push({
      key: c.key,
      diff: c.fields.map((f) => ({
        path: `values[${c.key}].${f.field}`,
        kind: "changed" as const,
        before: side === "plan" ? f.service : f.git,
        after: side === "plan" ? f.git : f.service,
      })),
    });
  }
  for (const k of delta.added) rows.push({ key: k, diff: [{ path: `values[${k}]`, kind: "added" }] });
  for (const k of delta.removed) rows.push({ key: k, diff: [{ path: `values[${k}]`, kind: "removed" }] });
  rows.sort((a, b) => byCodePoint(a.key, b.key));
  return {
    diff: rows.slice(0, VALUE_ROWS_SHOWN).flatMap((r) => r.diff),
    total: rows.length,
    changed: delta.changed.length,
    added: delta.added.length,
    removed: delta.removed.length,
  };
}

/** git's values against what the service shows of a batch's (its uploaded file and its own values). */
export interface ShownValuesDiff extends ValuesDiff {
  /** What was compared: both, the file alone (the detail leaves the batch's own values out), the batch's
   *  own values alone (it names no file), or nothing (it shows neither). */
  shown: "both" | "file" | "values" | "none";
  /** Rows in which the uploaded file and the batch's own values differ: the service holds two sets of
   *  values for one batch (0 when it holds one, or shows one). */
  split: number;
  /** The checksum of the service's values when it holds one set: what a step moving the batch is bound to. */
  checksum?: string;
  /** How many of the differing rows the diff shows. */
  rowsShown: number;
}

/** git's values file against everything the service shows of a batch's values: the uploaded file and the
 *  batch's own values (`ssp_values`, what pricing uses), each where it shows it. When the two differ, the
 *  entry shows git against each (the file's rows as `values[…]`, the batch's own as `ssp_values[…]`) and
 *  `split` counts the rows in which they differ. What the service leaves out is said at `where`
 *  (src/shared/unknown.ts): the batch's own values (compared with the file only), or both. */
export function shownValuesDiff(
  git: NonNullable<DesiredBatch["values"]>,
  held: ShownValues,
  where: string,
  side: "plan" | "drift",
  unknownOut?: Unknown,
): ShownValuesDiff {
  const { file, values } = held;
  if (!file && !values) {
    addUnknown(unknownOut, where, [{ field: "values (neither an uploaded file nor the batch's own values)" }]);
    return { diff: [], total: 0, changed: 0, added: 0, removed: 0, shown: "none", split: 0, rowsShown: 0 };
  }
  if (!file || !values) {
    if (!values) addUnknown(unknownOut, where, [{ field: "ssp_values (the batch's own values, what pricing uses)", comparedWith: "its uploaded file" }]);
    const one = (file ?? values) as HeldValues;
    const vd = valuesDiff(git, one, where, side);
    return { ...vd, shown: file ? "file" : "values", split: 0, checksum: valuesChecksum(one), rowsShown: Math.min(vd.total, VALUE_ROWS_SHOWN) };
  }
  const ofFile = valuesDiff(git, file, where, side);
  const sum = valuesChecksum(file);
  // The same rows on both sides (one checksum): git against the batch's own values is git against the
  // file, so it is not compared a second time.
  if (sum === valuesChecksum(values)) return { ...ofFile, shown: "both", split: 0, checksum: sum, rowsShown: Math.min(ofFile.total, VALUE_ROWS_SHOWN) };
  const ofBatch = valuesDiff(git, values, where, side);
  const apart = compareValues(keyedValues(values), file);
  return {
    diff: [...ofFile.diff, ...ofBatch.diff.map((d) => ({ ...d, path: `ssp_${d.path}` }))],
    total: ofFile.total + ofBatch.total,
    changed: ofFile.changed + ofBatch.changed,
    added: ofFile.added + ofBatch.added,
    removed: ofFile.removed + ofBatch.removed,
    shown: "both",
    split: apart.added.length + apart.removed.length + apart.changed.length,
    rowsShown: Math.min(ofFile.total, VALUE_ROWS_SHOWN) + Math.min(ofBatch.total, VALUE_ROWS_SHOWN),
  };
}

/** The fields of an SSP policy a policy file holds, in the order export writes them. */
export const SSP_EXPORT_FIELDS = [
  "method",
  "active",
  "hierarchy_no",
  "data_identifiers",
  "entity_type",
  "floor_percentage",
  "ceiling_percentage",
  "expression",
  "when",
  "transaction_above_range",
  "transaction_below_range",
  "transaction_mid_range",
  "type",
  "can_delete",
  "is_user_defined",
] as const;

/** The record's own bookkeeping among them: not what a policy does. */
const SSP_BOOKKEEPING: readonly string[] = ["entity_type", "type", "can_delete", "is_user_defined"];

/** The fields of an SSP policy that say what it does (which lines it meets, how its SSP is found and
 *  held to its range): where git's file leaves one out that the service holds, plan and drift show it. */
export const SSP_KEPT_FIELDS = SSP_EXPORT_FIELDS.filter((f) => !SSP_BOOKKEEPING.includes(f));

/** Of git's SSP policies the service holds, the fields their files leave out that the service holds a
 *  value of (SSP_KEPT_FIELDS): each keeps its live value, and plan and drift show it. */
export function keptSspFields(desired: readonly DesiredSsp[], live: Map<string, LivePolicy>, targets: string[]): KeptLive[] {
  const out: KeptLive[] = [];
  for (const d of desired) {
    const addr = sspAddress.policy(d.name);
    const lp = live.get(d.name);
    if (!lp || !targeted(addr, targets)) continue;
    const fields = keptFields(d.spec as unknown as Record<string, unknown>, lp.item as unknown as Record<string, unknown>, SSP_KEPT_FIELDS);
    if (Object.keys(fields).length) out.push({ address: addr, fields, ...envelopeWho(lp.envelope) });
  }
  return out;
}

/** The fields of a create body that identify what was asked for: a policy of the same name that differs
 *  in one of them is another policy, not ours. Fields the service answers as null are unknown, not a difference. */
const IDENTITY_FIELDS = ["method", "active", "hierarchy_no", "expression", "data_identifiers", "when", "floor_percentage", "ceiling_percentage"] as const;

/** Fields in which a live policy differs from the item that was sent to create it, compared as plan
 *  compares them (conditions and identifiers as sets, operator spellings as one). */
export function createMismatch(sent: SspCreateBody["compliance_spec"][number], live: SspItem | undefined): string[] {
  if (!live) return ["(no policy item)"];
  const l = live as unknown as Record<string, unknown>;
  const keys = IDENTITY_FIELDS.filter((k) => l[k] !== null && l[k] !== undefined);
  return fieldDiff(normalizeSspFields(live, keys), normalizeSspFields(sent as unknown as Record<string, unknown>, keys)).map((d) => d.path);
}

/** How `revsync export` writes a policy's file, as a command a reader can paste into a shell: the
 *  policy's address as one word (shellQuote, whatever the service named it); for a name a policy file
 *  cannot hold, or one a terminal shows otherwise than it is, what to do instead of a command that
 *  cannot work (docs/decisions.md, "A hint's command runs as written"). */
export function exportHint(policy: string, writes: string): string {
  const bad = unsafeName(policy);
  if (bad) return `its name cannot be written in a policy file (${bad}): rename it in the service, then revsync export --dir DIR ${writes}`;
  if (!pasteable(policy))
    return `revsync export --dir DIR ${writes}, with every other policy: its name holds a character a terminal shows as text, so --target cannot name it as shown`;
  return `revsync export --dir DIR --target ${shellQuote(sspAddress.policy(policy))} ${writes}`;
}

export const REASONS_NOT_IN_GIT = {
  policy: (name: string): string =>
    `the service holds this SSP policy and git has no file for it. The interface has no update or delete for SSP policies: deactivate or delete it in the service, or keep it by adding its file (${exportHint(name, "writes one")})`,
  batch: (policy: string, batch: string): string => {
    const bad = unsafeName(batch);
    return bad
      ? `the service holds this batch and git does not list it, so revsync never moves it; its name cannot be written in a policy file (${bad}): rename it in the service to list it in git, or leave it there`
      : `the service holds this batch and git does not list it, so revsync never moves it: add it to the batches of ${JSON.stringify(policy)} in git (with its status and values), or leave it in the service (${exportHint(policy, "writes the policy's file with it")})`;
  },
};

/** A live policy outside git that shares its place in the hierarchy with an active policy of git's, in
 *  words (empty otherwise): which of the two prices an order line is not the interface's to say, and
 *  policy tests take the first by name (docs/policy-tests.md, Matching). */
function sharedPlace(name: string, item: SspItem, desired: readonly DesiredSsp[]): string {
  const n = item.hierarchy_no;
  if (item.active === false || typeof n !== "number") return "";
  const same = desired.filter((d) => d.spec.active !== false && d.spec.hierarchy_no === n).map((d) => d.name);
  if (!same.length) return "";
  const first = [name, ...same].sort(byCodePoint)[0];
  return `. It is active at hierarchy_no ${n}, the place of ${same.map((x) => JSON.stringify(x)).join(", ")} in git: the interface does not say which prices an order line first, and policy tests take ${JSON.stringify(first)} (ties go by name)`;
}

/** What the service holds and git does not: a policy git has no file for (`unmanaged`), and a batch git
 *  does not list of a policy git manages (`unmanaged_batch`). */
export function unmanagedSsp(desired: readonly DesiredSsp[], live: Map<string, LivePolicy>, targets: string[]): Unmanaged[] {
  const out: Unmanaged[] = [];
  const inGit = new Map(desired.map((d) => [d.name, d]));
  for (const [name, lp] of live) {
    const d = inGit.get(name);
    const envelope = { version_id: lp.envelope.version_id ?? null, last_modified_on: numberOrNull(lp.envelope.last_modified_on) };
    if (!d) {
      if (!targeted(sspAddress.policy(name), targets)) continue;
      const before = pick(lp.item as unknown as Record<string, unknown>, ["method", "active", "hierarchy_no", "when"]);
      out.push({
        address: sspAddress.policy(name),
        class: "unmanaged",
        reason: REASONS_NOT_IN_GIT.policy(name) + sharedPlace(name, lp.item, desired),
        before,
        ...envelope,
        ...envelopeWho(lp.envelope),
      });
      continue;
    }
    // A live batch that git does not list, of a policy git manages.
    for (const lb of lp.batches ?? []) {
      const baddr = sspAddress.batch(name, batchNameOf(lb));
      if (!targeted(baddr, targets) || d.batches.some((b) => b.name === batchNameOf(lb))) continue;
      const status = lb.status ?? null;
      out.push({
        address: baddr,
        class: "unmanaged_batch",
        reason: REASONS_NOT_IN_GIT.batch(name, batchNameOf(lb)),
        before: { status },
        ...envelope,
        ...batchWho(lb),
        drift: {
          message: `batch in the service (status ${JSON.stringify(status)}), not listed in git`,
          diff: [{ path: "status", kind: "removed", before: undefined, after: status }],
        },
      });
    }
  }
  return out;
}
