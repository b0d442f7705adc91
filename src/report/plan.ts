import type { Painter } from "./painter.js";
import { planImpactMarkdown } from "./policy-test.js";
import { OUTCOMES, type ApplyReport, type Outcome } from "../apply/run.js";
import {
  actionWords,
  impactOf,
  isApplied,
  type Action,
  type DriftClass,
  type DriftItem,
  type DriftReport,
  type Plan,
  type ValuesSummary,
} from "../plan/model.js";
import { unknownCaveat } from "../plan/unknown.js";
import { plural } from "../words.js";
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
const MARKDOWN_LIMIT = 60_000;

const show = (v: unknown): string => (v === undefined ? "(unset)" : JSON.stringify(v));

function diffLines(diff: FieldDiff[], indent: string, limit = 40): string[] {
  const lines = diff.slice(0, limit).map((d) => {
    if (d.before === undefined && d.after === undefined)
      return `${indent}${d.path}: ${d.kind === "added" ? "only in git" : d.kind === "removed" ? "only in the service" : "differs"}`;
    if (d.kind === "added" && d.before === undefined) return `${indent}${d.path}: ${show(d.after)}`;
    return `${indent}${d.path}: ${show(d.before)} -> ${show(d.after)}`;
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

/** What a review or approve moves forward: "12 rows, 6 products, currencies EUR, USD, 2026-01-01 to 2026-06-30". */
export function valuesLine(v: ValuesSummary): string {
  return `${plural(v.rows, "row")}, ${plural(v.products, "product")}, ${v.currencies.length === 1 ? "currency" : "currencies"} ${v.currencies.join(", ") || "(none)"}, ${v.from} to ${v.to}, as in ${v.file}`;
}

export function summaryLine(plan: Plan): string {
  const s = plan.summary;
  const parts = [`${s.create} to create`, `${s.update} to update`, `${s.review} to review`, `${s.approve} to approve`];
  const shownOnly = (["blocked", "not_in_git", "unsupported"] as const).filter((a) => s[a]).map((a) => `${s[a]} ${actionWords(a)}`);
  const total = (["blocked", "not_in_git", "unsupported"] as const).reduce((n, a) => n + (s[a] ?? 0), 0);
  return `Plan: ${parts.join(", ")}${shownOnly.length ? `; ${shownOnly.join(", ")} (shown with ${total === 1 ? "the reason" : "their reasons"}, not applied)` : ""}.`;
}

export function hasChanges(plan: Plan): boolean {
  return plan.changes.length > 0;
}

/** Whether apply would act on anything in this plan. */
export function hasApplied(plan: Plan): boolean {
  return plan.changes.some(isApplied);
}

/** "matches the policy repo", or, when some fields could not be compared (src/plan/unknown.ts), the
 *  same words with that caveat: no report says "matches" about what the service does not show. */
function matchesWords(notes: readonly string[] | undefined): string {
  return notes?.length ? `matches the policy repo in every field it shows, ${unknownCaveat(notes.length)}` : "matches the policy repo";
}

/** The notes of a report, one per line, for text. */
const noteLines = (notes: readonly string[] | undefined): string[] => (notes ?? []).map((n) => `Note: ${n}`);

export function planText(plan: Plan, out: Painter): string {
  const lines: string[] = [];
  if (!hasChanges(plan)) {
    lines.push(`No changes. Environment ${JSON.stringify(plan.environment)} ${matchesWords(plan.notes)}.`, ...noteLines(plan.notes));
    return lines.join("\n");
  }
  const where = `environment ${JSON.stringify(plan.environment)} (${plan.base_url}, realm ${plan.realm})`;
  // Never "No changes" while the plan holds entries: what apply cannot do is still the truth.
  lines.push(
    hasApplied(plan) ? `revsync will make these changes in ${where}:` : `Nothing for revsync to apply in ${where}, but the service and git differ:`,
    "",
  );
  for (const c of plan.changes) {
    const sym = out.paint(COLOR[c.action], SYMBOL[c.action].padStart(2));
    lines.push(`${sym} ${out.paint("bold", c.address)} ${out.paint("dim", `(${actionWords(c.action)})`)}`);
    if (!isApplied(c)) lines.push(`      ${out.paint(COLOR[c.action], "reason:")} ${c.reason ?? ""}`);
    lines.push(...entryDiffLines(c, "      ", 40));
    if (c.values) lines.push(`      values: ${valuesLine(c.values)}`);
    lines.push("");
  }
  lines.push(summaryLine(plan), ...noteLines(plan.notes));
  return lines.join("\n");
}

/** Text in a markdown table cell: a | would end the cell. */
const esc = (t: string): string => t.replace(/\|/g, "\\|").replace(/\n/g, " ");

function cell(v: unknown): string {
  return (v === undefined ? "" : `\`${JSON.stringify(v)}\``).replace(/\|/g, "\\|").replace(/\n/g, " ");
}

export function planMarkdown(plan: Plan, jsonHint = "the JSON plan artifact"): string {
  const head = [`<!-- revsync-plan:${plan.environment} -->`, `### revsync plan for \`${plan.environment}\``, ""];
  if (!hasChanges(plan)) {
    const notes = (plan.notes ?? []).flatMap((n) => [`> Note: ${n}`, ""]);
    return [...head, `**No changes.** The service ${matchesWords(plan.notes)}.`, "", ...notes].join("\n");
  }
  head.push("| Action | Count |", "|---|---|");
  for (const [k, v] of Object.entries(plan.summary)) if (v) head.push(`| ${SYMBOL[k as Action]} ${actionWords(k as Action)} | ${v} |`);
  head.push("");
  const blocks: string[] = [];
  for (const c of plan.changes) {
    const b = [`<details><summary><code>${SYMBOL[c.action]}</code> <b>${actionWords(c.action)}</b> <code>${c.address}</code></summary>`, ""];
    if (c.reason) b.push(`> ${c.reason}`, "");
    if (c.values) b.push(`Values: ${valuesLine(c.values)}.`, "");
    if (c.diff.length) {
      b.push("| Field | Before | After |", "|---|---|---|");
      for (const d of c.diff.slice(0, 100)) b.push(`| \`${esc(d.path)}\` | ${cell(d.before)} | ${cell(d.after)} |`);
      if (c.diff.length > 100) b.push(`| … ${c.diff.length - 100} more | | |`);
      const rest = c.diff_rows ? c.diff_rows.total - c.diff_rows.shown : 0;
      if (rest > 0) b.push(`| … and ${plural(rest, "more row")} (${c.diff_rows?.total} in all) | | |`);
    }
    b.push("", "</details>", "");
    blocks.push(b.join("\n"));
  }
  const notes = (plan.notes ?? []).map((n) => `> Note: ${n}\n`).join("");
  const impact = planImpactMarkdown(impactOf(plan));
  if (impact) head.push(impact);
  const tail = `\n${summaryLine(plan)}\n${notes ? `\n${notes}` : ""}`;
  let body = head.join("\n");
  let shown = 0;
  for (const block of blocks) {
    if (body.length + block.length + tail.length + 300 > MARKDOWN_LIMIT) break;
    body += block;
    shown++;
  }
  if (shown < blocks.length)
    body += `\n_${plural(blocks.length - shown, "more change")} not shown: the comment would pass ${MARKDOWN_LIMIT.toLocaleString("en")} characters. See ${jsonHint} for the whole plan._\n`;
  return body + tail;
}

export function driftText(report: DriftReport, out: Painter): string {
  if (!report.drift.length) {
    const ignored = report.ignored?.length ? ` (${plural(report.ignored.length, "accepted difference")} ignored, drift.ignore of revsync.yaml)` : "";
    const head = report.notes?.length ? "No drift in what the service shows." : "No drift.";
    return [
      `${head} Environment ${JSON.stringify(report.environment)} ${matchesWords(report.notes)}${ignored}.`,
      ...ignoredText(report),
      ...noteLines(report.notes),
    ].join("\n");
  }
  const lines = [`Drift in environment ${JSON.stringify(report.environment)}:`, ""];
  for (const d of report.drift) {
    lines.push(`${out.paint("yellow", d.class.padEnd(15))} ${out.paint("bold", d.address)}: ${d.message}`);
    lines.push(...entryDiffLines(d, "      ", 20).map((l) => l.replace(/: (.*) -> (.*)$/, ": git $1, service $2")));
    const who = attribution(d);
    if (who) lines.push(`      ${out.paint("dim", who)}`);
  }
  lines.push(...ignoredText(report), "", driftSummaryLine(report), ...noteLines(report.notes));
  return lines.join("\n");
}

/** The accepted drift, listed apart, whether or not other drift is found. */
function ignoredText(report: DriftReport): string[] {
  if (!report.ignored?.length) return [];
  return [
    "",
    `Ignored (accepted drift, drift.ignore of revsync.yaml): ${report.ignored.length}`,
    ...report.ignored.map((d) => `  ${d.class.padEnd(15)} ${d.address}: ${d.message} (${d.reason})`),
  ];
}

function ignoredMarkdown(report: DriftReport): string[] {
  if (!report.ignored?.length) return [];
  return [
    "",
    `<details><summary>Ignored (accepted drift): ${report.ignored.length}</summary>`,
    "",
    "| Class | Address | What | Reason |",
    "|---|---|---|---|",
    ...report.ignored.map((d) => `| ${d.class} | \`${esc(d.address)}\` | ${esc(d.message)} | ${esc(d.reason)} |`),
    "",
    "</details>",
  ];
}

/** A count of one drift class in words: "1 changed", "2 unmanaged batches", "4 batch statuses". */
const DRIFT_WORDS: Record<DriftClass, [string, string]> = {
  changed: ["changed", "changed"],
  unmanaged: ["unmanaged", "unmanaged"],
  unmanaged_batch: ["unmanaged batch", "unmanaged batches"],
  missing: ["missing", "missing"],
  batch_status: ["batch status", "batch statuses"],
  batch_values: ["batch's values", "batches' values"],
};

export function driftSummaryLine(report: DriftReport): string {
  const parts = (Object.entries(report.summary) as [DriftClass, number][])
    .filter(([, v]) => v)
    .map(([k, v]) => plural(v, ...(DRIFT_WORDS[k] ?? [k.replace(/_/g, " "), k.replace(/_/g, " ")])));
  return `Drift: ${parts.join(", ")}${report.ignored?.length ? `; ${report.ignored.length} ignored (accepted)` : ""}.`;
}

/** Who changed a drifted resource last, and when. */
export function attribution(d: DriftItem): string {
  if (!d.modified_by && !d.modified_on) return "";
  return `last modified${d.modified_by ? ` by ${d.modified_by}` : ""}${d.modified_on ? ` at ${d.modified_on.replace(".000Z", "Z")}` : ""}`;
}

export function driftMarkdown(report: DriftReport): string {
  const lines = [`<!-- revsync-drift:${report.environment} -->`, `### revsync drift in \`${report.environment}\``, ""];
  const notes = (report.notes ?? []).flatMap((n) => [`> Note: ${n}`, ""]);
  if (!report.drift.length) {
    const head = report.notes?.length ? `**No drift** in what the service shows: it ${matchesWords(report.notes)}.` : "**No drift.**";
    return [...lines, head, ...ignoredMarkdown(report), "", ...notes].join("\n");
  }
  lines.push("| Class | Address | What | Last modified | Field | Git | Service |", "|---|---|---|---|---|---|---|");
  for (const d of report.drift) {
    const head = `| ${d.class} | \`${esc(d.address)}\` | ${esc(d.message)} | ${esc(attribution(d).replace(/^last modified /, ""))} |`;
    if (!d.diff.length) lines.push(`${head} | | |`);
    const limit = d.diff_rows ? Infinity : 20;
    d.diff.slice(0, limit).forEach((x, i) => {
      const row = `\`${esc(x.path)}\` | ${cell(x.before)} | ${cell(x.after)} |`;
      lines.push(i === 0 ? `${head} ${row}` : `| | | | | ${row}`);
    });
    if (d.diff.length > limit) lines.push(`| | | | | … ${d.diff.length - limit} more | | |`);
    const rest = d.diff_rows ? d.diff_rows.total - d.diff_rows.shown : 0;
    if (rest > 0) lines.push(`| | | | | … and ${plural(rest, "more row")} (${d.diff_rows?.total} in all) | | |`);
  }
  lines.push(...ignoredMarkdown(report), "", driftSummaryLine(report), ...(notes.length ? ["", ...notes] : []));
  let text = lines.join("\n") + "\n";
  if (text.length > MARKDOWN_LIMIT) text = text.slice(0, MARKDOWN_LIMIT - 200) + "\n\n_Truncated: see the JSON report._\n";
  return text;
}

/** Apply's report in text: each step marked by what became of its write, and a closing line that counts
 *  the outcomes by the names the JSON report and the evidence record count them by (report.summary:
 *  one count for all three). */
export function applyText(report: ApplyReport, out: Painter): string {
  const color = (o: Outcome): "green" | "red" | "yellow" =>
    o === "done" || o === "already" || o === "confirmed" ? "green" : o === "skipped" ? "yellow" : "red";
  const lines = report.outcomes.map((o) => `${out.paint(color(o.outcome), o.outcome.padEnd(7))} ${o.action.padEnd(8)} ${o.address}: ${o.message}`);
  const s = report.summary;
  const undone = s.failed + s.unknown + s.overwritten;
  const head = report.interrupted ? "interrupted" : undone ? "finished with failures" : s.blocked ? "finished with blocked writes" : "complete";
  // done, failed and skipped always; the other outcomes where some change has them.
  const counts = OUTCOMES.filter((o) => s[o] || o === "done" || o === "failed" || o === "skipped").map((o) => `${s[o]} ${o}`);
  const sent = OUTCOMES.some((o) => o !== "already" && s[o]);
  lines.push("", `Apply ${head}: ${counts.join(", ")}${!sent && s.already ? "; nothing was sent" : ""}.`);
  if (s.overwritten)
    lines.push("Someone else's write undid a write of this apply right after it (named above): run `revsync plan` to see the service as it is now.");
  if (s.blocked) lines.push("Someone changed what a blocked write was to change: run `revsync plan` to review the service as it is now, then apply that plan.");
  else if (!s.overwritten && (s.failed || s.unknown || s.skipped))
    lines.push("Run `revsync plan` to see exactly what is left; `revsync apply` again finishes it.");
  return lines.join("\n");
}
