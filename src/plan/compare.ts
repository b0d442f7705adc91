/** What plan and drift both compare: a live SSP policy's fields and a batch's values against git's,
 *  and what the service holds that git does not. Pure. */
import type { DesiredBatch, DesiredSsp, DesiredState } from "../config/repo.js";
import { UserError } from "../errors.js";
import type { LivePolicy, LiveState } from "../live/read.js";
import type { SspItem } from "../schema/generated/api.js";
import { address, batchNameOf, byCodePoint, targeted } from "../shared/address.js";
import { fieldDiff, normalizeSspFields, type FieldDiff } from "../shared/normalize.js";
import { CsvSyntaxError } from "../ssp/csv.js";
import { addUnknown, notShown, type Unknown, type UnknownField } from "../shared/unknown.js";
import { parseDate } from "../policy-test/line.js";
import { numberOrNull } from "../number.js";
import { compareValues, keyedValues, type HeldValues } from "./values.js";
import { batchWho, envelopeWho } from "../shared/who.js";

/** How many differing rows of a batch's values a plan or drift entry shows, field by field. */
export const VALUE_ROWS_SHOWN = 20;

export const pick = (o: Record<string, unknown>, keys: string[]): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, o[k]]));
export const liveBatch = (lp: LivePolicy, name: string): SspItem | undefined => lp.batches?.find((b) => batchNameOf(b) === name);
export { isoOf } from "../shared/who.js";

/** What building a plan found that the plan itself cannot carry: problems (nothing may be sent) and
 *  notes (said once). */
export interface PlanFindings {
  problems: { file: string; line: number; column: number; message: string }[];
  /** Per policy address, git's fields that were not compared because the service does not show them. */
  unknown: Unknown;
}

/** Comparable fields of a live SSP policy against git. A field the service answers as null (or leaves
 *  out), or as a number a double cannot hold exactly, is unknown, not a change: it is not compared, and
 *  the report says so (src/shared/unknown.ts). */
export function sspFieldDiff(d: DesiredSsp, lp: LivePolicy, unknownOut?: Unknown): FieldDiff[] {
  const live = lp.item as unknown as Record<string, unknown>;
  const spec = d.spec as unknown as Record<string, unknown>;
  const unknown = notShown(spec, live);
  addUnknown(unknownOut, address.ssp(d.name), unknown);
  const keys = Object.keys(spec).filter((k) => !unknown.some((u) => u.field === k));
  return fieldDiff(normalizeSspFields(lp.item, keys), normalizeSspFields(d.spec as unknown as Record<string, unknown>, keys));
}

/** A batch's dates: git may set them, the service holds them, and the interface has no call to change
 *  them on a batch that exists. */
export const BATCH_DATES = ["effective_start_date", "effective_end_date"] as const;

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

/** Something the service holds that git does not: plan shows it as `not in git`, drift as `unmanaged`
 *  (a policy or a tenant configuration) or `unmanaged_batch` (a batch of a policy git manages). One
 *  list, so that plan and drift classify the same things the same way. */
export interface Unmanaged {
  address: string;
  kind: "tenant" | "policy" | "batch";
  before: Record<string, unknown>;
  version_id: string | null;
  last_modified_on: number | null;
  modified_by: string | null;
  modified_on: string | null;
  /** The policy's or tenant configuration's name (of a batch: its policy's). */
  name: string;
}

export function unmanagedOf(desired: DesiredState, live: LiveState, targets: string[]): Unmanaged[] {
  const out: Unmanaged[] = [];
  // A tenant configuration counts when git manages tenant configurations at all.
  if (desired.tenantConfigs.length) {
    for (const env of live.tenantConfigs) {
      const name = env.compliance_name ?? "";
      if (!targeted(address.tenant(name), targets) || desired.tenantConfigs.some((d) => d.name === name)) continue;
      out.push({
        address: address.tenant(name),
        name,
        kind: "tenant",
        before: {},
        version_id: env.version_id ?? null,
        last_modified_on: numberOrNull(env.last_modified_on),
        ...envelopeWho(env),
      });
    }
  }
  const inGit = new Map(desired.ssp.map((d) => [d.name, d]));
  for (const [name, lp] of live.ssp) {
    const d = inGit.get(name);
    const envelope = {
      version_id: lp.envelope.version_id ?? null,
      last_modified_on: numberOrNull(lp.envelope.last_modified_on),
    };
    if (!d) {
      if (!targeted(address.ssp(name), targets)) continue;
      const item = lp.item as unknown as Record<string, unknown>;
      out.push({
        address: address.ssp(name),
        name,
        kind: "policy",
        before: pick(item, ["method", "active", "hierarchy_no", "when"]),
        ...envelope,
        ...envelopeWho(lp.envelope),
      });
      continue;
    }
    // A live batch that git does not list, of a policy git manages.
    for (const lb of lp.batches ?? []) {
      const batch = batchNameOf(lb);
      const baddr = address.batch(name, batch);
      if (!targeted(baddr, targets) || d.batches.some((b) => b.name === batch)) continue;
      out.push({
        address: baddr,
        kind: "batch",
        before: { status: lb.status ?? null },
        ...envelope,
        ...batchWho(lb),
        name,
      });
    }
  }
  return out;
}
