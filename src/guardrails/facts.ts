/** The facts a guardrail's `when` reads: one table (FACTS, with each kind's own, docs/guardrails.md's
 *  "Facts" lists them all) and one place that computes them for a change (changeFacts, when the plan is
 *  made; factsAt, for the moment a rule is judged). Every fact of the table has a value for every
 *  change: null where it does not apply or is not known. A field's value before and after the change is
 *  `before.<field>` and `after.<field>`, read from the change itself. */
import type { Registry } from "../kinds/kind.js";
import { desiredOf, liveOf, owns, type DesiredState, type LiveState } from "../kinds/kind.js";
import { schemaJson } from "../schema/ajv.js";
import type { AllocationImpact } from "../policy-test/run.js";
import type { StaticKind, Value } from "../policy-test/expr.js";
import type { Change } from "../shared/entries.js";
import type { FactDoc, Facts } from "../shared/facts.js";
import { dayOf, daysBetween, quarterOf, readDay, type Calendar } from "./time.js";

/** Every change's facts, whatever its kind. */
const CHANGE_FACTS: readonly FactDoc[] = [
  { name: "kind", kind: "text", about: "the change's kind of resource, as its address begins (ssp, …)" },
  { name: "action", kind: "text", about: "create, update, review or approve" },
  { name: "address", kind: "text", about: "the change's address (ssp/Hardware SSP/batch/FY26-H1)" },
  { name: "environment", kind: "text", about: "the environment of revsync.yaml the plan is for" },
  { name: "fields_changed", kind: "number", about: "how many fields the change's diff holds" },
];

/** Facts of the policy tests' contracts (their allocation before and after the plan). */
const TEST_FACTS: readonly FactDoc[] = [
  {
    name: "allocation_shift",
    kind: "number",
    about:
      "with policy test contracts: the most revenue the plan moves between the lines of one contract the change concerns (its policy's, or every contract for a setting of the tenant's), in the contract's currency; 0 when none moves, null without contracts",
  },
  {
    name: "allocation_shift_pct",
    kind: "number",
    about: "that contract's shift in percent of its total sell price (the largest percent of any contract the change concerns); null without contracts",
  },
];

/** Facts of the moment a rule is judged, from the change's dates and the fiscal calendar's today. */
const CLOCK_FACTS: readonly FactDoc[] = [
  {
    name: "effective_start_days",
    kind: "number",
    about: "days from today (in the fiscal calendar's time zone) to effective_start: negative when it is past; null without it",
    needs: "clock",
  },
  { name: "effective_end_days", kind: "number", about: "days from today to effective_end; null without it", needs: "clock" },
  {
    name: "effective_start_quarter",
    kind: "number",
    about: "fiscal quarters from today's to effective_start's: 0 this quarter, -1 the one before (a closed period), 1 the next; null without it",
    needs: "clock",
  },
];

/** The whole table: every change's facts, each kind's of the registry, the tests' and the moment's. */
export function factTable(kinds: Registry): FactDoc[] {
  return [...CHANGE_FACTS, ...kinds.flatMap((k) => k.guardrails?.facts ?? []), ...TEST_FACTS, ...CLOCK_FACTS];
}

/** The fields a change can have before and after (before.<field>, after.<field>): each kind's file's spec
 *  fields, and those its changes have beyond them. */
export function factFields(kinds: Registry): string[] {
  const fields = new Set<string>();
  for (const k of kinds) {
    const spec = (schemaJson(k.schema) as { properties?: { spec?: { properties?: object } } }).properties?.spec?.properties;
    for (const f of Object.keys(spec ?? {})) fields.add(f);
    for (const f of k.guardrails?.fields ?? []) fields.add(f);
  }
  return [...fields].sort();
}

/** What a name of a `when` is, before any value is known; undefined: no such fact or field. */
export function factKind(name: string, table: readonly FactDoc[], fields: readonly string[]): StaticKind | undefined {
  const m = /^(before|after)\.(.+)$/.exec(name);
  if (m) return fields.includes(m[2] as string) ? "any" : undefined;
  return table.find((f) => f.name === name)?.kind;
}

/** The contracts' largest shift the change concerns, in amount and in percent of the contract's total. */
function shiftFacts(concerns: readonly string[] | "all", allocation: readonly AllocationImpact[] | undefined): Facts {
  if (!allocation) return { allocation_shift: null, allocation_shift_pct: null };
  let amount = 0;
  let pct = 0;
  for (const e of allocation) {
    if (e.moved === null) continue;
    const mine = concerns === "all" || e.lines.some((l) => concerns.includes(l.before.policy ?? "") || concerns.includes(l.after.policy ?? ""));
    if (!mine) continue;
    const total = e.lines.reduce((s, l) => s + (l.before.allocated ?? 0), 0);
    amount = Math.max(amount, e.moved);
    if (total > 0) pct = Math.max(pct, (e.moved / total) * 100);
  }
  return { allocation_shift: amount, allocation_shift_pct: pct };
}

/** What changeFacts reads besides the changes. */
export interface FactSources {
  environment: string;
  desired: DesiredState;
  live: LiveState;
  /** The plan's allocation impact (undefined: no policy test contracts). */
  allocation?: readonly AllocationImpact[];
  kinds: Registry;
}

/** Each applied change's facts (the plan saves them), computed once, here. */
export function changeFacts(c: Change, src: FactSources): Facts {
  const kind = src.kinds.find((k) => owns(k, c.address));
  const own = kind?.guardrails;
  const mine = own ? own.of(c, desiredOf(kind, src.desired), liveOf(kind, src.live)) : {};
  return {
    kind: kind?.name ?? c.address.split("/")[0] ?? null,
    action: c.action,
    address: c.address,
    environment: src.environment,
    fields_changed: c.diff.length,
    ...mine,
    ...shiftFacts(own?.concerns(c) ?? "all", src.allocation),
  };
}

/** The facts of the moment of judging, from a change's saved facts: days and quarters from today. */
export function factsAt(facts: Facts, now: number, cal: Calendar): Facts {
  const today = dayOf(now, cal.timezone);
  const start = typeof facts.effective_start === "string" ? readDay(facts.effective_start) : undefined;
  const end = typeof facts.effective_end === "string" ? readDay(facts.effective_end) : undefined;
  return {
    effective_start_days: start ? daysBetween(today, start) : null,
    effective_end_days: end ? daysBetween(today, end) : null,
    effective_start_quarter: start ? quarterOf(start, cal) - quarterOf(today, cal) : null,
  };
}

/** A field's value as a condition reads it: a number, a text, true or false as they are; a list or an
 *  object as its JSON text; absent, null. */
function fieldValue(side: unknown, field: string): Value {
  const v = side && typeof side === "object" ? (side as Record<string, unknown>)[field] : undefined;
  if (v === undefined || v === null) return null;
  if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") return v;
  return JSON.stringify(v);
}

/** How a condition reads one change's names: the table's facts (saved and of the moment), and its
 *  fields before and after; undefined for a name that is neither. */
export function lookupFor(c: Pick<Change, "before" | "after">, facts: Facts, table: ReadonlySet<string>): (name: string) => Value | undefined {
  return (name) => {
    if (name.startsWith("before.")) return fieldValue(c.before, name.slice(7));
    if (name.startsWith("after.")) return fieldValue(c.after, name.slice(6));
    return table.has(name) ? (facts[name] ?? null) : undefined;
  };
}
