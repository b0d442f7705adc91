/** The guardrails of one environment, as revsync.yaml sets them (docs/guardrails.md): its rules (the
 *  top level's and its own), its freeze windows and its fiscal calendar, read and checked in one pass.
 *  Every problem is a diagnostic at its place in revsync.yaml (an unknown fact, an expression that cannot
 *  be read, an unknown environment, a window that cannot be read), found offline, as validate finds
 *  every other. */
import { relative } from "node:path";
import { isScalar } from "yaml";
import type { Diagnostic } from "../config/diagnostics.js";
import { PolicyProblems } from "../errors.js";
import type { Repo } from "../config/repo.js";
import { at } from "../config/schema-diagnostics.js";
import { nodeAt } from "../config/yaml-source.js";
import { nearest } from "../did-you-mean.js";
import type { Registry } from "../kinds/kind.js";
import { conditionKind, ExprError, namesOf, parseCondition, type Condition } from "../policy-test/expr.js";
import type { EnvironmentConfig, FiscalCalendar, FreezeWindow, Guardrail, GuardrailException } from "../schema/generated/policy.js";
import { globMatch } from "../shared/address.js";
import type { FactDoc } from "../shared/facts.js";
import { factFields, factKind, factTable } from "./facts.js";
import {
  cronOf,
  cronWindow,
  datesWindow,
  DEFAULT_CALENDAR,
  dayOf,
  dayText,
  knownZone,
  quarterEndWindow,
  readDay,
  readMoment,
  readSpan,
  type Calendar,
  type WindowTime,
} from "./time.js";

/** A rule, read: its condition parsed, its address globs as tests, where revsync.yaml holds it. */
export interface Rule {
  name: string;
  description?: string;
  effect: Guardrail["effect"];
  count?: number;
  from?: string[];
  override_by?: string[];
  match: { actions?: string[]; addresses?: ((a: string) => boolean)[]; fields?: string[]; environments?: string[] };
  when?: { text: string; tree: Condition };
  exceptions: GuardrailException[];
  /** revsync.yaml:line. */
  source: string;
}

/** A freeze window, read: when it is open, in words and as time. */
export interface Window {
  name: string;
  description?: string;
  /** quarter_end, dates (from, to) or cron. */
  kind: "quarter_end" | "dates" | "cron";
  /** What it is, in words ("5 days before to 3 days after each fiscal quarter's end"). */
  what: string;
  time: WindowTime;
  timezone: string;
  override_by?: string[];
  source: string;
}

/** One environment's guardrails. */
export interface GuardrailSetup {
  environment: string;
  calendar: Calendar;
  rules: Rule[];
  windows: Window[];
  /** A rule reads a fact whose value needs the last approved batches' values read. */
  needsBaseline: boolean;
  /** A rule reads the policy tests' allocation shift (the plan runs the tests' contracts for it). */
  needsTests: boolean;
}

/** Where problems are said, and the names a `when` may read. */
interface Reading {
  repo: Repo;
  file: string;
  table: readonly FactDoc[];
  fields: readonly string[];
  diagnostics: Diagnostic[];
  now: number;
}

const problem = (r: Reading, pointer: string, message: string, severity: Diagnostic["severity"] = "error", place?: { line: number; column: number }): void => {
  r.diagnostics.push({ file: r.file, ...(place ?? at(r.repo.configDoc, pointer)), pointer, severity, rule: "guardrails", message });
};

/** Where, in revsync.yaml, the character `index` of a one-line expression stands (its scalar's start
 *  when the text there is not the expression as written). */
function placeIn(r: Reading, pointer: string, index: number): { line: number; column: number } {
  const start = at(r.repo.configDoc, pointer);
  const node = nodeAt(r.repo.configDoc.doc, pointer.split("/").slice(1));
  if (!isScalar(node) || typeof node.value !== "string" || !node.range || node.value.includes("\n")) return start;
  // The text as written is the value (nothing escaped) when it is exactly as long, quotes aside.
  const quoted = node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE";
  const written = node.range[1] - node.range[0] - (quoted ? 2 : 0);
  if ((node.type !== "PLAIN" && !quoted) || written !== node.value.length) return start;
  return { line: start.line, column: start.column + index + (quoted ? 1 : 0) };
}

/** The fiscal calendar of an environment (its own, else the top level's, else the calendar year in UTC). */
function calendarOf(r: Reading, own: FiscalCalendar | undefined, top: FiscalCalendar | undefined, pointer: string): Calendar {
  const cal = own ?? top;
  if (!cal) return DEFAULT_CALENDAR;
  const base = own ? pointer : "/fiscal_calendar";
  const [m, d] = (cal.fiscal_year_start ?? "01-01").split("-").map(Number);
  const timezone = cal.timezone ?? "UTC";
  if (!knownZone(timezone)) {
    problem(
      r,
      `${base}/timezone`,
      `fiscal_calendar.timezone: ${JSON.stringify(timezone)} is not a time zone this machine knows (an IANA name: America/New_York, Europe/Berlin, UTC)`,
    );
    return { ...DEFAULT_CALENDAR, startMonth: m ?? 1, startDay: d ?? 1 };
  }
  return { startMonth: m ?? 1, startDay: d ?? 1, timezone };
}

/** A rule's `when`: parsed, each name a fact or a field, its kinds consistent; undefined on a problem. */
function readWhen(r: Reading, text: string, pointer: string, name: string): Rule["when"] {
  let tree: Condition;
  try {
    tree = parseCondition(text);
  } catch (e) {
    if (!(e instanceof ExprError)) throw e;
    problem(r, pointer, `guardrail ${name}: when: ${e.message}`, "error", e.index === undefined ? undefined : placeIn(r, pointer, e.index));
    return undefined;
  }
  let ok = true;
  for (const { name: n, at: i } of namesOf(tree)) {
    if (factKind(n, r.table, r.fields)) continue;
    ok = false;
    const field = /^(before|after)\.(.+)$/.exec(n);
    const candidates = field ? r.fields.map((f) => `${field[1]}.${f}`) : r.table.map((f) => f.name);
    const near = nearest(n, candidates, { max: 1 })[0];
    const what = field ? `unknown field ${JSON.stringify(field[2])}` : `unknown fact ${JSON.stringify(n)}`;
    problem(
      r,
      pointer,
      `guardrail ${name}: when: ${what}${near ? ` (did you mean ${near}?)` : ""}; docs/guardrails.md lists the facts`,
      "error",
      placeIn(r, pointer, i),
    );
  }
  if (!ok) return undefined;
  const kinds: string[] = [];
  conditionKind(tree, (n) => factKind(n, r.table, r.fields) ?? "any", kinds);
  for (const k of kinds) problem(r, pointer, `guardrail ${name}: when: ${k}`);
  return kinds.length ? undefined : { text, tree };
}

/** Exceptions: their until days that are no days, and those past (a warning: they apply no more). */
function checkExceptions(r: Reading, list: readonly GuardrailException[], pointer: string, name: string, cal: Calendar): void {
  const today = dayText(dayOf(r.now, cal.timezone));
  list.forEach((x, i) => {
    if (!readDay(x.until))
      problem(r, `${pointer}/${i}/until`, `guardrail ${name}: exceptions.${i}.until: ${JSON.stringify(x.until)} is not a day (YYYY-MM-DD)`);
    else if (x.until < today)
      problem(r, `${pointer}/${i}/until`, `guardrail ${name}: the exception for ${x.address} lapsed after ${x.until}: the rule applies to it again`, "warning");
  });
}

/** One rule of revsync.yaml, read and checked; undefined when it cannot be used. */
function readRule(r: Reading, g: Guardrail, pointer: string, cal: Calendar): Rule | undefined {
  const envs = Object.keys(r.repo.config.environments);
  (g.match?.environments ?? []).forEach((e, i) => {
    if (!envs.includes(e)) {
      const near = nearest(e, envs, { max: 1 })[0];
      problem(
        r,
        `${pointer}/match/environments/${i}`,
        `guardrail ${g.name}: match.environments: no environment ${JSON.stringify(e)} in revsync.yaml${near ? ` (did you mean ${near}?)` : ""}; it has: ${envs.join(", ")}`,
      );
    }
  });
  if (g.effect === "require_approval" && g.count !== undefined && g.from && new Set(g.from.map((u) => u.toLowerCase())).size < g.count)
    problem(
      r,
      `${pointer}/count`,
      `guardrail ${g.name}: count ${g.count} is more than the ${g.from.length} identities of from: no plan could ever be approved`,
    );
  checkExceptions(r, g.exceptions ?? [], `${pointer}/exceptions`, g.name, cal);
  const when = g.when === undefined ? undefined : readWhen(r, g.when, `${pointer}/when`, g.name);
  if (g.when !== undefined && !when) return undefined;
  const globs = g.match?.addresses?.map((p) => (a: string) => globMatch(p, a));
  return {
    name: g.name,
    ...(g.description ? { description: g.description } : {}),
    effect: g.effect,
    ...(g.count !== undefined ? { count: g.count } : {}),
    ...(g.from ? { from: g.from } : {}),
    ...(g.override_by ? { override_by: g.override_by } : {}),
    match: {
      ...(g.match?.actions ? { actions: g.match.actions } : {}),
      ...(globs ? { addresses: globs } : {}),
      ...(g.match?.fields ? { fields: g.match.fields } : {}),
      ...(g.match?.environments ? { environments: g.match.environments } : {}),
    },
    ...(when ? { when } : {}),
    exceptions: g.exceptions ?? [],
    source: `${r.file}:${at(r.repo.configDoc, pointer).line}`,
  };
}

/** A window's kind and time from what it sets: exactly one of quarter_end, from and to, cron and duration. */
function windowTime(r: Reading, w: FreezeWindow, pointer: string, cal: Calendar, tz: string): Pick<Window, "kind" | "what" | "time"> | undefined {
  const kinds = [w.quarter_end ? "quarter_end" : "", w.from !== undefined || w.to !== undefined ? "from/to" : "", w.cron !== undefined ? "cron" : ""].filter(
    Boolean,
  );
  if (kinds.length !== 1) {
    problem(
      r,
      pointer,
      `freeze window ${w.name}: give exactly one of quarter_end, from and to, or cron with duration${kinds.length ? `; it gives ${kinds.join(" and ")}` : ""}`,
    );
    return undefined;
  }
  if (w.quarter_end) {
    const { days_before: b, days_after: a } = w.quarter_end;
    return {
      kind: "quarter_end",
      what: `${b} days before to ${a} days after each fiscal quarter's end`,
      time: quarterEndWindow(b, a, { ...cal, timezone: tz }),
    };
  }
  if (w.cron !== undefined) return cronTime(r, w, pointer, tz);
  const from = w.from === undefined ? undefined : readMoment(w.from, tz);
  const to = w.to === undefined ? undefined : readMoment(w.to, tz, true);
  for (const [field, text, read] of [
    ["from", w.from, from],
    ["to", w.to, to],
  ] as const) {
    if (text === undefined) problem(r, pointer, `freeze window ${w.name}: ${field} is missing: a one-off window needs from and to`);
    else if (read === undefined)
      problem(r, `${pointer}/${field}`, `freeze window ${w.name}: ${field}: ${JSON.stringify(text)} is not a day (YYYY-MM-DD) or a time (YYYY-MM-DDTHH:MM)`);
  }
  if (from === undefined || to === undefined) return undefined;
  if (to <= from) {
    problem(r, `${pointer}/to`, `freeze window ${w.name}: to (${w.to}) is not after from (${w.from})`);
    return undefined;
  }
  return { kind: "dates", what: `from ${w.from} to ${w.to}`, time: datesWindow(from, to) };
}

function cronTime(r: Reading, w: FreezeWindow, pointer: string, tz: string): Pick<Window, "kind" | "what" | "time"> | undefined {
  const span = w.duration === undefined ? undefined : readSpan(w.duration);
  if (span === undefined) {
    problem(r, w.duration === undefined ? pointer : `${pointer}/duration`, `freeze window ${w.name}: a cron window needs a duration (60h, 2d12h, 90m)`);
    return undefined;
  }
  try {
    const cron = cronOf(w.cron ?? "", tz);
    if (!cron.nextRun(new Date(r.now)) && !cron.previousRuns(1, new Date(r.now)).length)
      problem(r, `${pointer}/cron`, `freeze window ${w.name}: cron ${JSON.stringify(w.cron)} never opens`, "warning");
    return { kind: "cron", what: `${w.duration} from each ${JSON.stringify(w.cron)}`, time: cronWindow(cron, span) };
  } catch (e) {
    problem(r, `${pointer}/cron`, `freeze window ${w.name}: cron ${JSON.stringify(w.cron)} cannot be read: ${(e as Error).message}`);
    return undefined;
  }
}

function readWindow(r: Reading, w: FreezeWindow, pointer: string, cal: Calendar): Window | undefined {
  const tz = w.timezone ?? cal.timezone;
  if (!knownZone(tz)) {
    problem(
      r,
      `${pointer}/timezone`,
      `freeze window ${w.name}: timezone ${JSON.stringify(tz)} is not a time zone this machine knows (an IANA name: America/New_York, UTC)`,
    );
    return undefined;
  }
  const time = windowTime(r, w, pointer, cal, tz);
  if (!time) return undefined;
  return {
    name: w.name,
    ...(w.description ? { description: w.description } : {}),
    ...time,
    timezone: tz,
    ...(w.override_by ? { override_by: w.override_by } : {}),
    source: `${r.file}:${at(r.repo.configDoc, pointer).line}`,
  };
}

/** Names shared by two rules or windows of an environment: --override, the plan and the tests name them. */
function sameNames(r: Reading, named: { name: string; pointer: string }[], env: string): void {
  const seen = new Map<string, string>();
  for (const n of named) {
    const first = seen.get(n.name);
    if (first === undefined) seen.set(n.name, n.pointer);
    else
      problem(
        r,
        `${n.pointer}/name`,
        `${JSON.stringify(n.name)} names two rules or windows of environment ${env} (the other at ${first}): each needs its own name`,
      );
  }
}

/** The guardrails of environment `env`, and every problem of them (and of the top level's). */
export function guardrailSetup(repo: Repo, env: string, kinds: Registry, now: number): { setup: GuardrailSetup; diagnostics: Diagnostic[] } {
  const table = factTable(kinds);
  const r: Reading = { repo, file: relative(repo.cwd, repo.configFile) || "revsync.yaml", table, fields: factFields(kinds), diagnostics: [], now };
  const own = (repo.config.environments[env] ?? {}) as EnvironmentConfig;
  const base = `/environments/${env}`;
  const calendar = calendarOf(r, own.fiscal_calendar, repo.config.fiscal_calendar, `${base}/fiscal_calendar`);
  const listed = [
    ...(repo.config.guardrails ?? []).map((g, i) => ({ g, pointer: `/guardrails/${i}` })),
    ...(own.guardrails ?? []).map((g, i) => ({ g, pointer: `${base}/guardrails/${i}` })),
  ];
  const rules = listed.flatMap(({ g, pointer }) => readRule(r, g, pointer, calendar) ?? []);
  const windows = (own.freeze ?? []).flatMap((w, i) => readWindow(r, w, `${base}/freeze/${i}`, calendar) ?? []);
  sameNames(
    r,
    [...listed.map((l) => ({ name: l.g.name, pointer: l.pointer })), ...(own.freeze ?? []).map((w, i) => ({ name: w.name, pointer: `${base}/freeze/${i}` }))],
    env,
  );
  const baseline = new Set(table.filter((f) => f.needs === "baseline").map((f) => f.name));
  const reads = (names: ReadonlySet<string>): boolean => rules.some((x) => x.when && namesOf(x.when.tree).some((n) => names.has(n.name)));
  const setup = {
    environment: env,
    calendar,
    rules,
    windows,
    needsBaseline: reads(baseline),
    needsTests: reads(new Set(["allocation_shift", "allocation_shift_pct"])),
  };
  return { setup, diagnostics: r.diagnostics };
}

/** The guardrails of an environment for a plan or an apply: undefined when it has none; a repo whose
 *  guardrails have an error is refused (exit 1, nothing sent), as one with a broken policy file is. */
export function loadGuardrails(repo: Repo, env: string, kinds: Registry, now: number): GuardrailSetup | undefined {
  if (!hasGuardrails(repo, env)) return undefined;
  const { setup, diagnostics } = guardrailSetup(repo, env, kinds, now);
  if (diagnostics.some((d) => d.severity === "error"))
    throw new PolicyProblems("the guardrails of revsync.yaml have errors: nothing was sent to the service", diagnostics, "run revsync validate");
  return setup;
}

/** Whether an environment has any guardrail or freeze window (revsync.yaml as written). */
export function hasGuardrails(repo: Repo, env: string): boolean {
  const own = repo.config.environments[env] as EnvironmentConfig | undefined;
  return !!(repo.config.guardrails?.length || own?.guardrails?.length || own?.freeze?.length);
}
