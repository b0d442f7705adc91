/** Judging a plan's writes against one environment's guardrails at one moment: each rule that matches a
 *  write (its actions, addresses, fields, environments) and whose `when` holds denies it, warns of it or
 *  needs approvals; an exception in force excepts it; an override by one of override_by lets it pass;
 *  a freeze window in force holds back every write. Pure: the moment, who approves and the overrides
 *  are given. The plan judges when it is made; apply judges again, as time passes. */
import { UserError } from "../errors.js";
import { nearest } from "../did-you-mean.js";
import type { Registry } from "../kinds/kind.js";
import { conditionHolds, ExprError, namesOf, type Value } from "../policy-test/expr.js";
import { globMatch } from "../shared/address.js";
import { isApplied, type Change } from "../shared/entries.js";
import { HOLDS_BACK, type Facts, type GuardrailOutcome, type GuardrailResult } from "../shared/facts.js";
import { factsAt, factTable, lookupFor } from "./facts.js";
import { approverWords, listedIn, type Approver } from "./identity.js";
import type { GuardrailSetup, Rule, Window } from "./setup.js";
import { dayOf, dayText, localWords } from "./time.js";

/** apply --override NAME --reason TEXT. */
export interface Override {
  name: string;
  reason: string;
}

/** What judging is given: the moment, who approves, the overrides asked for. */
export interface Judging {
  now: number;
  approvers: readonly Approver[];
  overrides: readonly Override[];
}

/** A freeze window at the moment of judging: open (with when it ends) or not (with when it next opens). */
export interface WindowStatus {
  name: string;
  kind: Window["kind"];
  what: string;
  timezone: string;
  in_force: boolean;
  /** The opening that holds the moment, else the next one (ISO; null: none to come). */
  from: string | null;
  until: string | null;
  /** The same in the window's time zone, in words. */
  from_local: string | null;
  until_local: string | null;
  description?: string;
  override_by?: string[];
  overridden?: { by: string; reason: string };
  source: string;
}

/** A plan's guardrails as judged: when, every rule's name and effect, every window, who approved, the
 *  overrides granted, and why apply would refuse the plan (none: it would not). */
export interface PlanGuardrails {
  evaluated_at: string;
  timezone: string;
  rules: {
    name: string;
    effect: Rule["effect"];
    count?: number;
    from?: string[];
    override_by?: string[];
    when?: string;
    description?: string;
    source: string;
  }[];
  freeze: WindowStatus[];
  approvers: Approver[];
  overrides: { name: string; reason: string; by: string }[];
  held_back: string[];
}

/** An override of a rule or window, granted to the first approver override_by lists; a UserError in
 *  words for one that names nothing, cannot be overridden, or that no approver of the list asked. */
export function grantOverrides(setup: GuardrailSetup, judging: Judging): PlanGuardrails["overrides"] {
  return judging.overrides.map((o) => {
    const named = [...setup.rules, ...setup.windows];
    const target = named.find((x) => x.name === o.name);
    if (!target) {
      const near = nearest(
        o.name,
        named.map((x) => x.name),
        { max: 1 },
      )[0];
      throw new UserError(
        `--override ${o.name}: environment ${setup.environment} has no guardrail or freeze window of that name${near ? ` (did you mean ${near}?)` : ""}`,
        named.length ? `its rules and windows: ${named.map((x) => x.name).join(", ")}` : undefined,
      );
    }
    if (!target.override_by) throw new UserError(`--override ${o.name}: it has no override_by in revsync.yaml (${target.source}), so nobody may override it`);
    if (!o.reason.trim()) throw new UserError(`--override ${o.name} needs --reason TEXT: why it is overridden goes into the plan and the evidence`);
    const by = listedIn(judging.approvers, target.override_by)[0];
    if (!by)
      throw new UserError(
        `--override ${o.name}: only ${target.override_by.join(", ")} may override it, and ${judging.approvers.length ? `the approvers here are ${approverWords(judging.approvers)}` : "no approver is known to this run"}`,
        "the approver identity (REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD, or REVSYNC_APPROVER_TOKEN) or, in CI, an approval of the pull request must be one of override_by",
      );
    return { name: o.name, reason: o.reason, by: by.user };
  });
}

/** Whether a rule is about a change at all. */
function matches(rule: Rule, c: Change, env: string): boolean {
  const m = rule.match;
  if (m.actions && !m.actions.includes(c.action)) return false;
  if (m.environments && !m.environments.includes(env)) return false;
  if (m.addresses && !m.addresses.some((test) => test(c.address))) return false;
  if (m.fields && !c.diff.some((d) => m.fields?.some((f) => d.path === f || d.path.startsWith(`${f}.`) || d.path.startsWith(`${f}[`)))) return false;
  return true;
}

const shown = (v: Value): string => (typeof v === "number" ? String(Number(v.toFixed(4))) : JSON.stringify(v));

/** A rule's when at one change: whether it holds, and what it read, in words. */
function holds(rule: Rule, lookup: (name: string) => Value | undefined): { holds: boolean; words: string } | { error: string } {
  if (!rule.when) return { holds: true, words: "every change it matches" };
  try {
    const h = conditionHolds(rule.when.tree, lookup);
    const read = [...new Set(namesOf(rule.when.tree).map((n) => n.name))].map((n) => `${n} = ${shown(lookup(n) ?? null)}`);
    return { holds: h, words: `${rule.when.text}${read.length ? `: ${read.join(", ")}` : ""}` };
  } catch (e) {
    if (!(e instanceof ExprError)) throw e;
    return { error: `${rule.when.text} cannot be judged: ${e.message}` };
  }
}

/** One rule's outcome for one change it matches. */
function outcomeOf(
  rule: Rule,
  c: Change,
  lookup: (name: string) => Value | undefined,
  ctx: { today: string; judging: Judging; granted: PlanGuardrails["overrides"] },
): GuardrailOutcome {
  const base = { rule: rule.name, effect: rule.effect };
  const h = holds(rule, lookup);
  if ("error" in h) return { ...base, outcome: rule.effect === "warn" ? "warn" : "error", message: h.error };
  if (!h.holds) return { ...base, outcome: "pass", message: `${h.words} does not hold` };
  const exception = rule.exceptions.find((x) => globMatch(x.address, c.address) && ctx.today <= x.until);
  if (exception) return { ...base, outcome: "excepted", message: `excepted until ${exception.until}: ${exception.reason}; ${h.words}` };
  if (rule.effect === "warn") return { ...base, outcome: "warn", message: h.words };
  if (rule.effect === "require_approval") {
    const approved = listedIn(ctx.judging.approvers, rule.from ?? []);
    const count = rule.count ?? 1;
    const by = approved.map((a) => a.user);
    if (approved.length >= count) return { ...base, outcome: "approved", approved_by: by, message: `approved by ${approverWords(approved)}; ${h.words}` };
    const override = ctx.granted.find((o) => o.name === rule.name);
    if (override)
      return {
        ...base,
        outcome: "overridden",
        approved_by: by,
        override: { by: override.by, reason: override.reason },
        message: `overridden by ${override.by}: ${override.reason}; ${h.words}`,
      };
    const has = approved.length ? `; approved by ${approverWords(approved)}` : "";
    return {
      ...base,
      outcome: "approval_needed",
      approved_by: by,
      message: `needs ${count} approval${count === 1 ? "" : "s"} of ${(rule.from ?? []).join(", ")}${has}; ${h.words}`,
    };
  }
  const override = ctx.granted.find((o) => o.name === rule.name);
  if (override)
    return {
      ...base,
      outcome: "overridden",
      override: { by: override.by, reason: override.reason },
      message: `overridden by ${override.by}: ${override.reason}; ${h.words}`,
    };
  return { ...base, outcome: "deny", message: h.words };
}

/** A window at the moment of judging. */
function windowStatus(w: Window, now: number, granted: PlanGuardrails["overrides"]): WindowStatus {
  const { open, next } = w.time(now);
  const o = open ?? next;
  const iso = (t: number | undefined): string | null => (t === undefined ? null : new Date(t).toISOString());
  const local = (t: number | undefined): string | null => (t === undefined ? null : localWords(t, w.timezone));
  const override = open ? granted.find((g) => g.name === w.name) : undefined;
  return {
    name: w.name,
    kind: w.kind,
    what: w.what,
    timezone: w.timezone,
    in_force: !!open,
    from: iso(o?.from),
    until: iso(o?.until),
    from_local: local(o?.from),
    until_local: local(o?.until),
    ...(w.description ? { description: w.description } : {}),
    ...(w.override_by ? { override_by: w.override_by } : {}),
    ...(override ? { overridden: { by: override.by, reason: override.reason } } : {}),
    source: w.source,
  };
}

/** Why apply refuses the plan, in words: each window in force and not overridden, each outcome that
 *  holds a write back. */
function heldBack(freeze: readonly WindowStatus[], changes: readonly Change[], outcomes: readonly (GuardrailOutcome[] | undefined)[]): string[] {
  const out = freeze
    .filter((w) => w.in_force && !w.overridden)
    .map((w) => `freeze window ${w.name} is in force until ${w.until_local} (${w.what}): every write waits`);
  outcomes.forEach((list, i) => {
    for (const o of list ?? [])
      if (HOLDS_BACK.includes(o.outcome))
        out.push(
          `${o.rule} ${o.outcome === "deny" ? "denies" : o.outcome === "error" ? "cannot judge" : "needs approvals for"} ${changes[i]?.address} (${changes[i]?.action}): ${o.message}`,
        );
  });
  return out;
}

/** Each applied change's outcomes (undefined for an entry apply never acts on), and the plan's view. */
export function judgePlan(
  changes: readonly Change[],
  setup: GuardrailSetup,
  judging: Judging,
  kinds: Registry,
): { outcomes: (GuardrailOutcome[] | undefined)[]; guardrails: PlanGuardrails } {
  const granted = grantOverrides(setup, judging);
  const table = new Set(factTable(kinds).map((f) => f.name));
  const today = dayText(dayOf(judging.now, setup.calendar.timezone));
  const outcomes = changes.map((c) => {
    if (!isApplied(c)) return undefined;
    const facts: Facts = { ...(c.facts ?? {}), ...factsAt(c.facts ?? {}, judging.now, setup.calendar) };
    const lookup = lookupFor(c, facts, table);
    return setup.rules.filter((r) => matches(r, c, setup.environment)).map((r) => outcomeOf(r, c, lookup, { today, judging, granted }));
  });
  const freeze = setup.windows.map((w) => windowStatus(w, judging.now, granted));
  const rules = setup.rules.map((r) => ({
    name: r.name,
    effect: r.effect,
    ...(r.count !== undefined ? { count: r.count } : {}),
    ...(r.from ? { from: r.from } : {}),
    ...(r.override_by ? { override_by: r.override_by } : {}),
    ...(r.when ? { when: r.when.text } : {}),
    ...(r.description ? { description: r.description } : {}),
    source: r.source,
  }));
  const guardrails: PlanGuardrails = {
    evaluated_at: new Date(judging.now).toISOString(),
    timezone: setup.calendar.timezone,
    rules,
    freeze,
    approvers: [...judging.approvers],
    overrides: granted,
    held_back: heldBack(freeze, changes, outcomes),
  };
  return { outcomes, guardrails };
}

/** The worst of a rule's outcomes over the changes it matched (a GuardrailTest's expectation without an
 *  address): error, deny, approval_needed, warn, overridden, approved, excepted, pass. */
export function worstOutcome(results: readonly GuardrailResult[]): GuardrailResult {
  const order: GuardrailResult[] = ["error", "deny", "approval_needed", "warn", "overridden", "approved", "excepted", "pass"];
  return order.find((o) => results.includes(o)) ?? "pass";
}
