import { codeText, commentText, htmlCode, markdownCode, markdownText as md, terminalText as t } from "./escape.js";
import type { Painter } from "./painter.js";
import { planImpactMarkdown } from "./policy-test.js";
import type { ApplyReport, Outcome } from "../apply/run.js";
import {
  ACTIONS,
  APPLIED_ACTIONS,
  actionWords,
  impactOf,
  isApplied,
  type Action,
  type Change,
  type DriftClass,
  type DriftItem,
  type DriftReport,
  type KeptLive,
  type Plan,
} from "../plan/model.js";
import { unknownCaveat } from "../shared/unknown.js";
import { keptCount, type Unread } from "../shared/entries.js";
import { unreadWhat } from "./unread.js";
import { modifiedWords, whoWords } from "../shared/who.js";
import { owns, type KindWords } from "../kinds/kind.js";
import { KINDS, kindOf } from "../kinds/registry.js";
import { lookAlikeWords, type LookAlike } from "../plan/look-alike.js";
import { plural } from "../words.js";
import { fitPieces, fitTiers, MARKDOWN_LIMIT, nameCap, SECTION_BUDGET, type Fitted, type Tiers } from "./budget.js";
import { changeGuardrailLines, guardrailsMarkdown, guardrailsText } from "./guardrails.js";
import { changePromotionLines, promotionMarkdown, promotionText } from "./promotion.js";
import type { FieldDiff } from "../shared/normalize.js";

export const SYMBOL: Record<Action, string> = { create: "+", update: "~", review: ">", approve: ">>", blocked: "x", not_in_git: "?", unsupported: "!" };
const COLOR: Record<Action, "green" | "yellow" | "cyan" | "red"> = {
  create: "green",
  update: "yellow",
  review: "cyan",
  approve: "cyan",
  blocked: "red",
  not_in_git: "yellow",
  unsupported: "red",
};

const show = (v: unknown): string => (v === undefined ? "(unset)" : JSON.stringify(v));

function diffLines(diff: FieldDiff[], indent: string, limit = 40): string[] {
  const lines = diff.slice(0, limit).map((d) => {
    if (d.before === undefined && d.after === undefined)
      return `${indent}${t(d.path)}: ${d.kind === "added" ? "only in git" : d.kind === "removed" ? "only in the service" : "differs"}`;
    if (d.kind === "added" && d.before === undefined) return `${indent}${t(d.path)}: ${show(d.after)}`;
    return `${indent}${t(d.path)}: ${show(d.before)} -> ${show(d.after)}`;
  });
  if (diff.length > limit) lines.push(`${indent}… and ${diff.length - limit} more`);
  return lines;
}

/** The diff of an entry, values row by row (already capped, with the count of the rest), else capped here. */
function entryDiffLines(e: { diff: FieldDiff[]; diff_rows?: { shown: number; total: number } }, indent: string, limit: number): string[] {
  if (!e.diff_rows) return diffLines(e.diff, indent, limit);
  const lines = diffLines(e.diff, indent, Infinity);
  const rest = e.diff_rows.total - e.diff_rows.shown;
  if (rest > 0) lines.push(`${indent}… and ${plural(rest, "more row")} that ${rest === 1 ? "differs" : "differ"} (${e.diff_rows.total} in all)`);
  return lines;
}

/** The plan in one line: the writes it makes, each action that occurs once (a plan without SSP changes
 *  says nothing of reviews), then what it shows and never applies. */
export function summaryLine(plan: Plan): string {
  const s = plan.summary;
  const count = (a: Action): number => s[a] ?? 0;
  const writes = APPLIED_ACTIONS.filter((a) => count(a)).map((a) => `${count(a)} to ${actionWords(a)}`);
  const shown = ACTIONS.filter((a) => !APPLIED_ACTIONS.includes(a) && count(a));
  const total = shown.reduce((n, a) => n + count(a), 0);
  const shownOnly = shown.map((a) => `${count(a)} ${actionWords(a)}`);
  const unread = plan.unread?.length
    ? `; ${plan.unread.length} not read (the service did not answer: the plan says nothing of ${plan.unread.length === 1 ? "it" : "them"})`
    : "";
  return `Plan: ${writes.length ? writes.join(", ") : "nothing to apply"}${shownOnly.length ? `; ${shownOnly.join(", ")} (shown with ${total === 1 ? "the reason" : "their reasons"}, not applied)` : ""}${unread}.`;
}

/** Whether the plan holds anything: an entry, or what could not be read (never "No changes" then). */
export function hasChanges(plan: Plan): boolean {
  return plan.changes.length > 0 || !!plan.unread?.length;
}

/** What a plan or drift report could not read, one entry each, for text. */
export function unreadText(unread: readonly Unread[] | undefined, out: Painter): string[] {
  return (unread ?? []).flatMap((u) => [
    `${out.paint("red", " -")} ${out.paint("bold", t(unreadWhat(u)))} ${out.paint("dim", "(not read)")}`,
    `      ${out.paint("red", "reason:")} ${t(u.error)}; nothing is said of it or of what lies below it: run again to read it`,
    "",
  ]);
}

/** What a plan or drift report could not read, in markdown, within the notes' budget. */
export const unreadMarkdown = (unread: readonly Unread[] | undefined, whole: string): string =>
  unread?.length
    ? fitPieces(
        unread.map((u) => `> **Not read**: ${markdownCode(unreadWhat(u))}: ${md(u.error)}; nothing is said of it or of what lies below it.\n\n`),
        SECTION_BUDGET.notes,
        (n) => `_${plural(n, "more address")} not read: every one is in ${whole} (unread)._\n`,
      ).text
    : "";

/** Whether apply would act on anything in this plan. */
export function hasApplied(plan: Plan): boolean {
  return plan.changes.some(isApplied);
}

/** "matches the policy repo", or, when some fields could not be compared (src/shared/unknown.ts), the
 *  same words with that caveat: no report says "matches" about what the service does not show. */
function matchesWords(notes: readonly string[] | undefined): string {
  return notes?.length ? `matches the policy repo in every field it shows, ${unknownCaveat(notes.length)}` : "matches the policy repo";
}

/** The words a change's kind says of it beyond its own (none for a kind the registry does not hold). */
const kindWords = (c: Pick<Change, "address">): KindWords | undefined => kindOf(KINDS, c.address)?.words;

/** Lines a change's kind says under it. */
const linesOf = (c: Change, plan: Pick<Plan, "four_eyes">): string[] => kindWords(c)?.lines?.(c, plan) ?? [];

/** What each kind says once above its first change it selects (four eyes above the first approve), by
 *  the index of that change. */
function headsAbove(plan: Pick<Plan, "four_eyes">, changes: readonly Change[]): Map<number, string[]> {
  const heads = new Map<number, string[]>();
  for (const k of KINDS) {
    const head = k.words?.head?.(plan);
    const i = head ? changes.findIndex((c) => owns(k, c.address) && head.above(c)) : -1;
    if (head && i >= 0) heads.set(i, [...(heads.get(i) ?? []), ...head.lines]);
  }
  return heads;
}

/** "1 field the service holds is not in git (shown above)": what a report says in place of "matches"
 *  alone when git's files leave out fields the service holds (KeptLive). */
function keptWords(kept: readonly KeptLive[] | undefined): string {
  const n = keptCount(kept);
  return `${plural(n, "field")} the service holds ${n === 1 ? "is" : "are"} not in git (shown above)`;
}

/** One resource's fields kept as the service holds them, as plain text (escaped by the caller's rule). */
const keptFieldsText = (k: KeptLive, value: (v: unknown) => string): string =>
  Object.entries(k.fields)
    .map(([f, v]) => `${f}: ${value(v)}`)
    .join(", ");

/** The fields the service holds that git's files leave out, one line per resource, for text. */
function keptText(kept: readonly KeptLive[] | undefined, out: Painter): string[] {
  if (!kept?.length) return [];
  return [
    ...kept.map(
      (k) =>
        `${out.paint("dim", " i")} ${out.paint("bold", t(k.address))}: kept as the service holds it, not in git: ${t(keptFieldsText(k, show))}${t(whoWords(k))}`,
    ),
    "",
  ];
}

/** The kept fields in markdown, within their budget (SECTION_BUDGET.kept): one line per resource, each
 *  value cut to a line's share; what does not fit is counted, and the JSON holds it all. */
function keptMarkdown(kept: readonly KeptLive[] | undefined, whole: string): string {
  if (!kept?.length) return "";
  const value = (v: unknown): string => markdownCut(JSON.stringify(v) ?? "", LINE_REASON, (x) => markdownCode(x)).md;
  const lines = fitPieces(
    kept.map((k) => {
      const who = whoWords(k).trimStart();
      const fields = Object.entries(k.fields).map(([f, v]) => `${markdownCode(f)}: ${value(v)}`);
      return `- ${markdownCut(k.address, LINE_NAME, (x) => markdownCode(x)).md}: ${fields.join(", ")}${who ? ` ${md(who)}` : ""}\n`;
    }),
    SECTION_BUDGET.kept,
    (n) => `\n_${plural(n, "more resource")} with fields not in git: every one is in ${whole} (kept_live)._\n`,
  );
  return `**Kept as the service holds them, not in git** (information: each keeps its live value, and apply writes none of them):\n\n${lines.text}\n`;
}

/** The notes of a report, one per line, for text: its warnings of names that look alike first. */
const noteLines = (notes: readonly string[] | undefined, alike?: readonly LookAlike[]): string[] => [
  ...(alike ?? []).map((l) => `Warning: ${t(lookAlikeWords(l))}`),
  ...(notes ?? []).map((n) => `Note: ${t(n)}`),
];

/** The warnings of names that look alike, in markdown (before the notes). */
const alikeMarkdown = (alike: readonly LookAlike[] | undefined): string => (alike ?? []).map((l) => `> **Warning:** ${md(lookAlikeWords(l))}\n\n`).join("");

export function planText(plan: Plan, out: Painter): string {
  const lines: string[] = [];
  if (!hasChanges(plan)) {
    const env = `${JSON.stringify(plan.environment)} ${matchesWords(plan.notes)}`;
    // "No changes" never says "matches" alone while the service holds fields git leaves out: they are shown.
    const head = plan.kept_live?.length
      ? `No changes. ${keptWords(plan.kept_live)}; in every field git sets, environment ${env}.`
      : `No changes. Environment ${env}.`;
    lines.push(...promotionText(plan, out), ...guardrailsText(plan, out), ...keptText(plan.kept_live, out), head, ...noteLines(plan.notes, plan.look_alike));
    return lines.join("\n");
  }
  const where = `environment ${JSON.stringify(plan.environment)} (${t(plan.base_url)}, realm ${t(plan.realm)})`;
  // Never "No changes" while the plan holds entries: what apply cannot do is still the truth.
  lines.push(
    ...promotionText(plan, out),
    ...guardrailsText(plan, out),
    hasApplied(plan)
      ? `revsync will make these changes in ${where}:`
      : plan.changes.length
        ? `Nothing for revsync to apply in ${where}, but the service and git differ:`
        : `Nothing for revsync to apply in ${where}, but part of the service could not be read:`,
    "",
  );
  const heads = headsAbove(plan, plan.changes);
  for (const [i, c] of plan.changes.entries()) {
    const head = heads.get(i);
    if (head) lines.push(...head.map((l) => out.paint("bold", l)), "");
    const sym = out.paint(COLOR[c.action], SYMBOL[c.action].padStart(2));
    lines.push(`${sym} ${out.paint("bold", t(c.address))} ${out.paint("dim", `(${entryWords(c)})`)}`);
    if (!isApplied(c)) lines.push(`      ${out.paint(COLOR[c.action], "reason:")} ${t(c.reason ?? "")}`);
    else if (c.reason) lines.push(`      note: ${t(c.reason)}`);
    lines.push(...entryDiffLines(c, "      ", 40));
    const who = changeWho(c);
    if (who) lines.push(`      ${out.paint("dim", t(who))}`);
    for (const l of linesOf(c, plan)) lines.push(`      ${t(l)}`);
    lines.push(...changePromotionLines(c, out), ...changeGuardrailLines(c, out), "");
  }
  lines.push(...unreadText(plan.unread, out), ...keptText(plan.kept_live, out), summaryLine(plan), ...noteLines(plan.notes, plan.look_alike));
  return lines.join("\n");
}

/** A value in a markdown table cell: its JSON, as code. */
const cell = (v: unknown): string => (v === undefined ? "" : markdownCode(JSON.stringify(v), { cell: true }));

/** A change's action in words; a write promotion blocks names the write it would be too (a batch's review
 *  and approve are otherwise two alike lines), as apply's refusal names it. */
const entryWords = (c: Change): string =>
  c.promotion?.status === "blocked" ? `${actionWords(c.promotion.action)}, ${actionWords(c.action)}` : actionWords(c.action);

/** A change's title in markdown: its symbol, its action and its address. */
const changeTitle = (c: Change): string => `<code>${SYMBOL[c.action]}</code> <b>${entryWords(c)}</b> ${htmlCode(c.address)}`;

/** How long outside text may be in a list of one line each, in characters of markdown: a name up to
 *  LINE_NAME, a reason up to LINE_REASON; when many long names share the comment (one line each without
 *  reasons), the longest are cut as far as every line needs, never under LEAST_NAME. Text cut short ends
 *  in …, and the list says where it is whole. So the length of names never costs a change its line:
 *  only their count can. */
const LINE_NAME = 240;
const LINE_REASON = 200;
const LEAST_NAME = 20;

/** Outside text as markdown (markdownText) of at most `max` characters: whole when it fits, else its
 *  longest beginning that fits, and "…". Cut before it is escaped, so that no character reference is
 *  cut in two (escaping a `<` makes four characters of one). */
export function markdownCut(text: string, max: number, esc: (text: string) => string = md): { md: string; cut: boolean } {
  const whole = esc(text);
  if (whole.length <= max) return { md: whole, cut: false };
  // Escaping never shortens text: a beginning longer than max is never the answer.
  const chars: string[] = [];
  let units = 0;
  for (const c of text) {
    if (units + c.length > max) break;
    chars.push(c);
    units += c.length;
  }
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (esc(chars.slice(0, mid).join("")).length + 1 <= max) lo = mid;
    else hi = mid - 1;
  }
  return { md: `${esc(chars.slice(0, lo).join(""))}…`, cut: true };
}

/** Lines of a list, one per entry: `line(i, name)` writes the i-th around its name (markdown), and each
 *  name is cut as far as lets every line fit in `room` characters (nameCap). */
function linesWithNames(names: readonly string[], room: number, line: (i: number, name: string) => string): { lines: string[]; cut: boolean } {
  const around = names.reduce((n, _, i) => n + line(i, "").length, 0);
  const cap = nameCap(
    names.map((n) => codeText(n).length),
    room - around,
    LEAST_NAME,
    LINE_NAME,
  );
  let cut = false;
  const lines = names.map((n, i) => {
    const c = markdownCut(n, cap, codeText);
    cut ||= c.cut;
    return line(i, c.md);
  });
  return { lines, cut };
}

/** What a list of shorter lines says of names and reasons it cut short. */
const cutWords = (whole: string): string => ` _A name or reason too long for its line is cut short, ending in …: each is whole in ${whole}._`;

/** Each change in full: a details block with its reason, its kind's lines (the values an approve moves,
 *  its four-eyes line) and fields. What a kind says once above a change (four eyes above the first
 *  approve) is in that change's block, so that the size limit never parts them. */
function fullChanges(changes: readonly Change[], plan: Pick<Plan, "four_eyes">): string[] {
  const heads = headsAbove(plan, changes);
  const sentence = (l: string): string => `${md(l.charAt(0).toUpperCase() + l.slice(1))}.`;
  return changes.map((c, i) => {
    const said = heads.get(i);
    const head = said ? [`> **${md(said.join(" "))}**`, ""] : [];
    const b = [...head, `<details><summary>${changeTitle(c)}</summary>`, ""];
    if (c.reason) b.push(`> ${md(c.reason)}`, "");
    const who = changeWho(c);
    if (who) b.push(sentence(who), "");
    for (const l of linesOf(c, plan)) b.push(sentence(l), "");
    if (c.diff.length) {
      b.push("| Field | Before | After |", "|---|---|---|");
      for (const d of c.diff.slice(0, 100)) b.push(`| ${markdownCode(d.path, { cell: true })} | ${cell(d.before)} | ${cell(d.after)} |`);
      if (c.diff.length > 100) b.push(`| … ${c.diff.length - 100} more | | |`);
      const rest = c.diff_rows ? c.diff_rows.total - c.diff_rows.shown : 0;
      if (rest > 0) b.push(`| … and ${plural(rest, "more row")} (${c.diff_rows?.total} in all) | | |`);
    }
    b.push("", "</details>", "");
    return b.join("\n");
  });
}

/** Each change in one line: its action, address and reason (or its kind's summary of it: the values an
 *  approve moves), each cut to its line's share. */
function changeLines(changes: readonly Change[]): { lines: string[]; cut: boolean } {
  let cut = false;
  const lines = changes.map((c) => {
    const address = markdownCut(c.address, LINE_NAME, codeText);
    const why = c.reason ?? kindWords(c)?.summary?.(c) ?? (changeWho(c) || undefined);
    const reason = why === undefined ? undefined : markdownCut(why, LINE_REASON);
    cut ||= address.cut || !!reason?.cut;
    return `- \`${SYMBOL[c.action]}\` ${entryWords(c)} <code>${address.md}</code>${reason ? `: ${reason.md}` : ""}\n`;
  });
  return { lines, cut };
}

/** The changes of a plan in markdown within `budget` characters, each listed: in full (a details block
 *  each) when they fit; else as many in full as leave room for the rest in one line each; else one line
 *  each without reasons, the longest addresses cut as far as they must; only past that, as many lines as
 *  fit and the count of the rest. */
function changesMarkdown(changes: readonly Change[], budget: number, whole: string, plan: Pick<Plan, "four_eyes">, max: number): Fitted {
  const limit = max.toLocaleString("en");
  const line = changeLines(changes);
  const headOf = (rest: "line" | "bare", shown: number, cut: boolean): string => {
    const what = rest === "line" ? "one line each" : "one line each, without their reasons";
    const said = cut ? cutWords(whole) : "";
    return shown
      ? `\n#### The other ${plural(changes.length - shown, "change")}, ${what}\n\n_In full, the changes would pass the comment's ${limit} characters: the first ${shown} are in full above, every change in full is in ${whole}._${said}\n\n`
      : `#### Changes, ${what}\n\n_In full, the changes would pass the comment's ${limit} characters: each is listed here, in full in ${whole}._${said}\n\n`;
  };
  // The bare lines share what the heading leaves (when a name is cut, the heading says so).
  const bare = linesWithNames(
    changes.map((c) => c.address),
    budget - headOf("bare", 0, true).length,
    (i, name) => `- \`${SYMBOL[(changes[i] as Change).action]}\` <code>${name}</code>\n`,
  );
  const between = (rest: "line" | "bare", shown: number): string => headOf(rest, shown, rest === "line" ? line.cut : bare.cut);
  const leftOut = (n: number): string =>
    `\n_${plural(n, "more change")} not listed: even one line each, the changes pass the comment's ${limit} characters. Every change is in ${whole}._\n`;
  return fitTiers({ full: fullChanges(changes, plan), line: line.lines, bare: bare.lines }, budget, between, leftOut);
}

/** A report's notes in markdown, within their budget (SECTION_BUDGET.notes). */
const notesMarkdown = (notes: readonly string[] | undefined, whole: string): string =>
  fitPieces(
    (notes ?? []).map((n) => `> Note: ${md(n)}\n\n`),
    SECTION_BUDGET.notes,
    (n) => `_${plural(n, "more note")} in ${whole} (notes)._\n`,
  ).text;

/** The plan in markdown, for a pull request's comment: never over MARKDOWN_LIMIT characters. The changes
 *  come first and each is listed (in less detail when there are many); the impact on the policy tests
 *  follows, each of its sections within its own budget, and gives way to the changes when they need the
 *  room; `file` names where the whole plan is (the JSON plan file; else how to get it). `max`: the
 *  characters the changes are fitted to instead (an environment's share of a fleet's comment), which the
 *  notes' and impact's own budgets may pass: the fleet's summary measures what it gets. */
export function planMarkdown(plan: Plan, file?: string, max = MARKDOWN_LIMIT): string {
  const whole = file === undefined ? "the JSON plan (`revsync plan --format json`)" : md(file);
  const head = [`<!-- revsync-plan:${commentText(plan.environment)} -->`, `### revsync plan for ${markdownCode(plan.environment)}`, ""];
  const notes = alikeMarkdown(plan.look_alike) + notesMarkdown(plan.notes, whole);
  const kept = keptMarkdown(plan.kept_live, whole);
  // The promotion and the guardrails come first: what holds the plan back is what a reviewer reads first.
  const promotion = promotionMarkdown(plan, whole);
  if (promotion) head.push(promotion);
  const guardrails = guardrailsMarkdown(plan, whole);
  if (guardrails) head.push(guardrails);
  if (!hasChanges(plan)) {
    const words = plan.kept_live?.length
      ? `**No changes.** ${keptWords(plan.kept_live).replace("shown above", "shown below")}; in every field git sets, the service ${matchesWords(plan.notes)}.`
      : `**No changes.** The service ${matchesWords(plan.notes)}.`;
    return [...head, words, "", ...(kept ? [kept] : []), notes].join("\n");
  }
  head.push("| Action | Count |", "|---|---|");
  for (const [k, v] of Object.entries(plan.summary)) if (v) head.push(`| ${SYMBOL[k as Action]} ${actionWords(k as Action)} | ${v} |`);
  head.push("", "");
  head.push(unreadMarkdown(plan.unread, whole));
  const top = head.join("\n");
  const tail = `\n${summaryLine(plan)}\n${kept ? `\n${kept}` : ""}${notes ? `\n${notes}` : ""}`;
  // One character short of the limit: the line's end that prints it.
  const room = max - 1 - top.length - tail.length;
  let impact = planImpactMarkdown(impactOf(plan), whole);
  let changes = changesMarkdown(plan.changes, room - impact.length, whole, plan, max);
  if (changes.listed < plan.changes.length && impact) {
    // The changes are never left out for the impact: it gives way, and says where it is.
    impact = `\n#### Impact\n\n_Not shown: the changes fill the comment. What the plan does to the policy test cases and contracts is in ${whole} (impact)._\n`;
    changes = changesMarkdown(plan.changes, room - impact.length, whole, plan, max);
  }
  return top + changes.text + (impact ? `\n${impact}` : "") + tail;
}

export function driftText(report: DriftReport, out: Painter): string {
  if (!report.drift.length && !report.unread?.length) {
    const ignored = report.ignored?.length ? ` (${plural(report.ignored.length, "accepted difference")} ignored, drift.ignore of revsync.yaml)` : "";
    const head = report.kept_live?.length ? "No drift in the fields git sets." : report.notes?.length ? "No drift in what the service shows." : "No drift.";
    const kept = report.kept_live?.length ? `; ${keptWords(report.kept_live)}` : "";
    return [
      ...keptText(report.kept_live, out),
      `${head} Environment ${JSON.stringify(report.environment)} ${matchesWords(report.notes)}${ignored}${kept}.`,
      ...ignoredText(report),
      ...noteLines(report.notes, report.look_alike),
    ].join("\n");
  }
  const lines = [`Drift in environment ${JSON.stringify(report.environment)}:`, ""];
  for (const d of report.drift) {
    lines.push(`${out.paint("yellow", d.class.padEnd(15))} ${out.paint("bold", t(d.address))}: ${t(d.message)}`);
    lines.push(...entryDiffLines(d, "      ", 20).map((l) => l.replace(/: (.*) -> (.*)$/, ": git $1, service $2")));
    const who = attribution(d);
    if (who) lines.push(`      ${out.paint("dim", t(who))}`);
  }
  lines.push(
    ...ignoredText(report),
    "",
    ...unreadText(report.unread, out),
    ...keptText(report.kept_live, out),
    driftSummaryLine(report),
    ...noteLines(report.notes, report.look_alike),
  );
  return lines.join("\n");
}

/** The accepted drift, listed apart, whether or not other drift is found. */
function ignoredText(report: DriftReport): string[] {
  if (!report.ignored?.length) return [];
  return [
    "",
    `Ignored (accepted drift, drift.ignore of revsync.yaml): ${report.ignored.length}`,
    ...report.ignored.map((d) => `  ${d.class.padEnd(15)} ${t(d.address)}: ${t(d.message)} (${t(d.reason)})`),
  ];
}

/** The accepted drift, in markdown, within its budget (SECTION_BUDGET.ignored). */
function ignoredMarkdown(report: DriftReport, whole: string): string {
  if (!report.ignored?.length) return "";
  const rows = fitPieces(
    report.ignored.map((d) => `| ${d.class} | ${markdownCode(d.address, { cell: true })} | ${md(d.message)} | ${md(d.reason)} |\n`),
    SECTION_BUDGET.ignored - 300,
    (n) => `\n_${plural(n, "more accepted difference")} not shown here: every one is in ${whole} (ignored)._\n`,
  );
  return [
    "",
    `<details><summary>Ignored (accepted drift): ${report.ignored.length}</summary>`,
    "",
    "| Class | Address | What | Reason |",
    "|---|---|---|---|",
    rows.text,
    "</details>",
  ].join("\n");
}

/** A count of one drift class in words: "1 changed", "2 names held twice"; the classes a kind reports
 *  of its own, in its words ("2 unmanaged batches"). */
const DRIFT_WORDS: Partial<Record<DriftClass, readonly [string, string]>> = {
  changed: ["changed", "changed"],
  unmanaged: ["unmanaged", "unmanaged"],
  duplicate: ["name held twice", "names held twice"],
  missing: ["missing", "missing"],
};
const driftWords = (k: DriftClass): readonly [string, string] =>
  DRIFT_WORDS[k] ?? KINDS.map((x) => x.words?.drift?.[k]).find((w) => w !== undefined) ?? [k.replace(/_/g, " "), k.replace(/_/g, " ")];

export function driftSummaryLine(report: DriftReport): string {
  const parts = (Object.entries(report.summary) as [DriftClass, number][]).filter(([, v]) => v).map(([k, v]) => plural(v, ...driftWords(k)));
  const unread = report.unread?.length ? `; ${report.unread.length} not read (the service did not answer)` : "";
  return `Drift: ${parts.join(", ") || "none in what was read"}${report.ignored?.length ? `; ${report.ignored.length} ignored (accepted)` : ""}${unread}.`;
}

/** Who changed a drifted resource, or the live resource of a plan entry, last, and when. */
export function attribution(d: Pick<DriftItem, "modified_by" | "modified_on">): string {
  return modifiedWords({ modified_by: d.modified_by ?? null, modified_on: d.modified_on ?? null });
}

/** Who last changed the live resource of a plan entry, where its reason does not say it already (a not
 *  in git entry's does). */
const changeWho = (c: Change): string => (c.action === "not_in_git" ? "" : attribution(c));

/** The drift report in markdown: never over MARKDOWN_LIMIT characters. Each drifted resource is listed
 *  (with its fields that differ while they fit, else one row each); the accepted drift and the notes
 *  follow, each within its own budget; `file` names where the whole report is (else how to get it).
 *  `max`: the characters the drifted resources are fitted to instead (as planMarkdown's). */
export function driftMarkdown(report: DriftReport, file?: string, max = MARKDOWN_LIMIT): string {
  const whole = file === undefined ? "the JSON report (`revsync drift --format json`)" : md(file);
  const lines = [`<!-- revsync-drift:${commentText(report.environment)} -->`, `### revsync drift in ${markdownCode(report.environment)}`, ""];
  const notes = alikeMarkdown(report.look_alike) + notesMarkdown(report.notes, whole);
  const ignored = ignoredMarkdown(report, whole);
  const kept = keptMarkdown(report.kept_live, whole);
  if (!report.drift.length && !report.unread?.length) {
    const head = report.kept_live?.length
      ? `**No drift** in the fields git sets: the service ${matchesWords(report.notes)} in them; ${keptWords(report.kept_live).replace("shown above", "shown below")}.`
      : report.notes?.length
        ? `**No drift** in what the service shows: it ${matchesWords(report.notes)}.`
        : "**No drift.**";
    return [...lines, head, ...(ignored ? [ignored] : []), "", ...(kept ? [kept] : []), notes].join("\n");
  }
  const unread = unreadMarkdown(report.unread, whole);
  if (unread) lines.splice(3, 0, unread);
  lines.push("| Class | Address | What | Last modified | Field | Git | Service |", "|---|---|---|---|---|---|---|", "");
  const top = lines.join("\n");
  const limit = max.toLocaleString("en");
  const leftOut = (n: number): string =>
    `\n_${plural(n, "more drifted resource")} not listed: even one row each, the drift passes the comment's ${limit} characters. Every one is in ${whole}._\n`;
  const tail = `${ignored}\n\n${driftSummaryLine(report)}\n${kept ? `\n${kept}` : ""}${notes ? `\n${notes}` : ""}`;
  // The shorter rows stay in the same table; what they leave out (and what they cut short) is said below it.
  const said = (f: Pick<Fitted, "full" | "rest" | "listed">, cut: boolean): string =>
    f.rest === null || f.listed < report.drift.length
      ? ""
      : `\n_With every field that differs, the drift would pass the comment's ${limit} characters: ${f.full ? `the first ${f.full} are shown with their fields, the rest` : "each is listed"} in one row${f.rest === "bare" ? ", without what drifted" : ""}. Every field is in ${whole}._${cut ? cutWords(whole) : ""}\n`;
  const room = max - 1 - top.length - tail.length - said({ full: report.drift.length, rest: "bare", listed: report.drift.length }, true).length;
  const rows = driftRows(report.drift, room);
  const fitted = fitTiers(rows, room, () => "", leftOut);
  return top + fitted.text + said(fitted, fitted.rest === "line" ? rows.cut.line : fitted.rest === "bare" && rows.cut.bare) + tail;
}

/** Drifted resources as rows of the drift table, three ways: with their fields; one row each (address,
 *  what and who cut to a line's share); one row each without what drifted, the longest addresses cut as
 *  far as lets every row fit in `room` characters. */
function driftRows(drift: readonly DriftItem[], room: number): Tiers & { cut: { line: boolean; bare: boolean } } {
  const row = (d: DriftItem): string =>
    `| ${d.class} | ${markdownCode(d.address, { cell: true })} | ${md(d.message)} | ${md(attribution(d).replace(/^last modified /, ""))} |`;
  const full = drift.map((d) => {
    const head = row(d);
    const out: string[] = [];
    if (!d.diff.length) out.push(`${head} | | |`);
    const limit = d.diff_rows ? Infinity : 20;
    d.diff.slice(0, limit).forEach((x, i) => {
      const r = `${markdownCode(x.path, { cell: true })} | ${cell(x.before)} | ${cell(x.after)} |`;
      out.push(i === 0 ? `${head} ${r}` : `| | | | | ${r}`);
    });
    if (d.diff.length > limit) out.push(`| | | | | … ${d.diff.length - limit} more | | |`);
    const rest = d.diff_rows ? d.diff_rows.total - d.diff_rows.shown : 0;
    if (rest > 0) out.push(`| | | | | … and ${plural(rest, "more row")} (${d.diff_rows?.total} in all) | | |`);
    return out.join("\n") + "\n";
  });
  const fields = (d: DriftItem): string => (d.diff.length ? `${plural(d.diff_rows?.total ?? d.diff.length, "field")} differ` : "");
  let lineCut = false;
  const line = drift.map((d) => {
    const [address, what, who] = [
      markdownCut(d.address, LINE_NAME, codeText),
      markdownCut(d.message, LINE_REASON),
      markdownCut(attribution(d).replace(/^last modified /, ""), LINE_NAME),
    ];
    lineCut ||= address.cut || what.cut || who.cut;
    return `| ${d.class} | <code>${address.md}</code> | ${what.md} | ${who.md} | ${fields(d)} | | |\n`;
  });
  const bare = linesWithNames(
    drift.map((d) => d.address),
    room,
    (i, name) => `| ${(drift[i] as DriftItem).class} | <code>${name}</code> | | | | | |\n`,
  );
  return { full, line, bare: bare.lines, cut: { line: lineCut, bare: bare.cut } };
}

type ApplyEntry = ApplyReport["outcomes"][number];

/** One step of apply's report in text: what became of its write (by the names of OUTCOMES), its action,
 *  address and message. */
export function applyLine(o: ApplyEntry, out: Painter): string {
  const color = o.outcome === "done" || o.outcome === "already" || o.outcome === "confirmed" ? "green" : o.outcome === "skipped" ? "yellow" : "red";
  return `${out.paint(color, o.outcome.padEnd(7))} ${o.action.padEnd(8)} ${t(o.address)}: ${t(o.message)}`;
}

/** Apply's report in text: each step marked by what became of its write, and a closing line that counts
 *  the outcomes by the names the JSON report and the evidence record count them by (report.summary:
 *  one count for all three). */
export function applyText(report: ApplyReport, out: Painter): string {
  const lines = report.outcomes.map((o) => applyLine(o, out));
  const s = report.summary;
  const undone = s.failed + s.unknown + s.overwritten + s.breached;
  const head = report.interrupted ? "interrupted" : undone ? "finished with failures" : s.blocked ? "finished with blocked writes" : "complete";
  // Every outcome, in the order the summary counts them (apply's OUTCOMES: a type here, so that the
  // report's views load without the client); done, failed and skipped always, the others where some
  // change has them.
  const names = Object.keys(s) as Outcome[];
  const counts = names.filter((o) => s[o] || o === "done" || o === "failed" || o === "skipped").map((o) => `${s[o]} ${o}`);
  const sent = names.some((o) => o !== "already" && s[o]) || report.outcomes.some((o) => o.answered !== undefined);
  lines.push("", `Apply ${head}: ${counts.join(", ")}${!sent && s.already ? "; nothing was sent" : ""}.`);
  // What each kind's outcomes call for (four eyes: writes its rule held back, whose fix is another
  // approver, not another plan).
  const said = KINDS.flatMap((k) => k.words?.applied?.(report.outcomes.filter((o) => owns(k, o.address))) ?? []);
  lines.push(...said.flatMap((w) => w.notes));
  const held = said.reduce((n, w) => n + w.held, 0);
  if (s.overwritten)
    lines.push(
      "Someone else's write met a write of this apply (named above): run `revsync plan` to see the service as it is now; a change of theirs that this apply's write may have undone does not show there: read the service and ask them.",
    );
  if (s.blocked > said.reduce((n, w) => n + w.ruleBlocked, 0))
    lines.push("Someone changed what a blocked write was to change: run `revsync plan` to review the service as it is now, then apply that plan.");
  else if (!s.overwritten && !s.breached && !held && (s.failed || s.unknown || s.skipped))
    lines.push("Run `revsync plan` to see exactly what is left; `revsync apply` again finishes it.");
  return lines.join("\n");
}
