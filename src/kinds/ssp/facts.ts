/** What guardrails read of an SSP change beyond every change's facts (docs/guardrails.md, "Facts"): how
 *  far the values a batch moves forward (or a create uploads) move each mid point from the policy's last
 *  approved batch, how wide their bands are, the rows added and removed, and their effective dates. */
import type { Change } from "../../shared/entries.js";
import type { FactDoc, Facts } from "../../shared/facts.js";
import { batchNameOf } from "../../shared/address.js";
import { valuesFromCsv } from "../../ssp/csv.js";
import type { DesiredSsp } from "./files.js";
import { batchPayload, createdItem, createPayload } from "./payload.js";
import { lastApproved, type SspLive } from "./read.js";

/** A value row as the facts read it. */
interface Row {
  product_id: string;
  currency_code: string;
  value_type: string;
  below_mid_point: number;
  mid_point: number;
  above_mid_point: number;
  effective_start_date: string;
  effective_end_date: string;
}

export const SSP_FACTS: readonly FactDoc[] = [
  {
    name: "mid_point_move_pct",
    kind: "number",
    about:
      "the largest move of a mid point, in percent (up or down, as a positive number), of a row of the values this change moves forward against the same product, currency and value type in the policy's last approved batch in the service; null without such a batch (a new policy) or a row to compare",
    needs: "baseline",
  },
  {
    name: "rows_added",
    kind: "number",
    about: "rows (product, currency, value type) of the change's values that the last approved batch does not hold; null without that batch",
    needs: "baseline",
  },
  {
    name: "rows_removed",
    kind: "number",
    about: "rows of the last approved batch that the change's values do not hold; null without that batch",
    needs: "baseline",
  },
  {
    name: "baseline_batch",
    kind: "text",
    about: "the name of the last approved batch the moves are measured against; null without one",
    needs: "baseline",
  },
  { name: "rows", kind: "number", about: "rows of the values the change moves forward (a create: every batch it uploads); null without values" },
  {
    name: "band_width_pct",
    kind: "number",
    about: "the widest band of the change's values: above_mid_point minus below_mid_point, in percent of the mid point, the largest of its rows",
  },
  { name: "effective_start", kind: "text", about: "the earliest effective_start_date of the change's values (YYYY-MM-DD); null without values" },
  { name: "effective_end", kind: "text", about: "the latest effective_end_date of the change's values (YYYY-MM-DD); null without values" },
];

/** The batch fields a step of a batch has before and after. */
export const SSP_FACT_FIELDS: readonly string[] = ["status", "batches"];

const key = (r: Pick<Row, "product_id" | "currency_code" | "value_type">): string => `${r.product_id}|${r.currency_code}|${r.value_type}`;

/** What the service shows of a batch's values, as rows: its own values, else its file. */
function heldRows(live: SspLive, policy: string, batch: string): Row[] | undefined {
  const held = live.values.get(`${policy}/${batch}`);
  if (held?.values) return held.values as Row[];
  return held?.file ? (valuesFromCsv(held.file.csv) as Row[]) : undefined;
}

/** The values a change moves forward (or uploads), its policy, and its batch (none for a create). */
function changeRows(c: Change, desired: readonly DesiredSsp[]): { policy: string; batch?: string; rows: Row[] } | undefined {
  const create = createPayload(c);
  if (create) {
    const item = createdItem(create);
    return { policy: item.name, rows: (item.batches ?? []).flatMap((b) => b.ssp_values as Row[]) };
  }
  const p = batchPayload(c);
  const d = p && desired.find((x) => x.name === p.policy);
  const b = d?.batches.find((x) => x.name === p?.batch);
  return p && b?.values ? { policy: p.policy, batch: p.batch, rows: b.values.rows as Row[] } : undefined;
}

/** The moves of `rows` against `base`: the largest mid point move in percent, rows added and removed. */
function moves(rows: readonly Row[], base: readonly Row[]): Pick<Facts, "mid_point_move_pct" | "rows_added" | "rows_removed"> {
  const before = new Map<string, Row>();
  for (const r of base) {
    const was = before.get(key(r));
    if (!was || r.effective_start_date > was.effective_start_date) before.set(key(r), r);
  }
  const mine = new Set(rows.map(key));
  let largest: number | null = null;
  let added = 0;
  for (const r of rows) {
    const b = before.get(key(r));
    if (!b) {
      added++;
      continue;
    }
    if (!Number.isFinite(b.mid_point) || b.mid_point === 0 || !Number.isFinite(r.mid_point)) continue;
    const move = (Math.abs(r.mid_point - b.mid_point) / Math.abs(b.mid_point)) * 100;
    if (largest === null || move > largest) largest = move;
  }
  const removed = [...before.keys()].filter((k) => !mine.has(k)).length;
  return { mid_point_move_pct: largest, rows_added: added, rows_removed: removed };
}

/** The widest band of the rows, in percent of their mid points. */
function bandWidth(rows: readonly Row[]): number | null {
  let widest: number | null = null;
  for (const r of rows) {
    if (![r.below_mid_point, r.mid_point, r.above_mid_point].every(Number.isFinite) || r.mid_point === 0) continue;
    const w = ((r.above_mid_point - r.below_mid_point) / Math.abs(r.mid_point)) * 100;
    if (widest === null || w > widest) widest = w;
  }
  return widest;
}

/** An SSP change's facts (SSP_FACTS), from git's values and the policy's last approved batch as read. */
export function sspFacts(c: Change, desired: readonly DesiredSsp[], live: SspLive): Facts {
  const none: Facts = Object.fromEntries(SSP_FACTS.map((f) => [f.name, null]));
  const found = changeRows(c, desired);
  if (!found?.rows.length) return none;
  const { rows } = found;
  const starts = rows.map((r) => r.effective_start_date).sort();
  const ends = rows.map((r) => r.effective_end_date).sort();
  const out: Facts = {
    ...none,
    rows: rows.length,
    band_width_pct: bandWidth(rows),
    effective_start: starts[0] ?? null,
    effective_end: ends[ends.length - 1] ?? null,
  };
  const lp = live.ssp.get(found.policy);
  const base = lp && lastApproved(lp, found.batch);
  const baseRows = base && heldRows(live, found.policy, batchNameOf(base));
  if (!base || !baseRows) return out;
  return { ...out, ...moves(rows, baseRows), baseline_batch: batchNameOf(base) };
}

/** The policy (as the policy tests name it) an SSP change concerns. */
export function sspConcerns(c: Change): string[] {
  const create = createPayload(c);
  if (create) return [createdItem(create).name];
  const p = batchPayload(c);
  return p ? [p.policy] : [];
}
