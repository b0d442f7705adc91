import type { EvidenceChange, EvidenceRecord, EvidenceRequest } from "../evidence/record.js";
import type { ChainReport } from "../evidence/verify.js";
import type { LiveFinding } from "../evidence/live.js";
import { plural } from "../words.js";
import type { Painter } from "./painter.js";

const seconds = (a: string, b: string): string => `${((Date.parse(b) - Date.parse(a)) / 1000).toFixed(1)}s`;
const show = (v: unknown): string => (v === undefined ? "(unset)" : JSON.stringify(v));

function approvedWords(r: EvidenceRecord): string {
  const how = {
    "auto-approve": "confirmed by --auto-approve",
    prompt: `confirmed by a person answering yes at the prompt${r.service_user ? ` (signed in as ${r.service_user})` : ""}`,
    declined: "declined at the prompt: nothing was applied",
    cancelled: "cancelled at the prompt (Ctrl-C or end of input): nothing was applied",
    "not asked": "not asked: nothing was to be applied",
  }[r.approval];
  const ci = r.ci;
  if (!ci) return how;
  const pr = ci.pull_request !== null ? `, ${ci.provider === "gitlab" ? "merge request !" : "pull request #"}${ci.pull_request}` : "";
  return `${how}; ${ci.provider === "gitlab" ? "GitLab CI" : "GitHub Actions"} run${ci.run_url ? ` ${ci.run_url}` : ""}${ci.actor ? ` started by ${ci.actor}` : ""}${pr}`;
}

function gitWords(r: EvidenceRecord): string {
  if (!r.git.commit) return `unknown (${r.git.note ?? "no commit"})`;
  const tree = r.git.clean === true ? "working tree clean" : r.git.clean === false ? "working tree had changes not committed" : "working tree state unknown";
  return `${r.git.commit} (${tree})`;
}

const requestWords = (q: EvidenceRequest): string =>
  `${q.method} ${q.path} ${q.status ?? (q.in_flight ? "no answer yet: in flight when the run stopped" : "no answer")}${q.error ? ` (${q.error})` : ""}, ${q.started_at}, ${q.duration_ms} ms${q.resend ? ", resend" : ""}`;

/** The environment's lock the run held, in words; undefined for a record without one. */
function lockWords(r: EvidenceRecord): string | undefined {
  const l = r.lock;
  if (!l) return undefined;
  if ("disabled" in l) return `none: ${l.note}`;
  const waited = l.waited_ms >= 1000 ? `, after waiting ${(l.waited_ms / 1000).toFixed(1)}s` : "";
  return `${l.where}, id ${l.id}, taken ${l.acquired_at}${waited}${l.released ? "" : ", not released"}${l.note ? `; ${l.note}` : ""}`;
}

function countLine(r: EvidenceRecord): string {
  const parts = Object.entries(r.summary)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`);
  return parts.length ? parts.join(", ") : "no changes";
}

/** One record for a reader: what was approved, by whom, when, what was sent, and what became of it. */
export function evidenceText(file: string, r: EvidenceRecord, out: Painter, edited: string | null = null): string {
  const lines = [
    out.paint("bold", `Evidence ${file}: run ${r.sequence} of environment ${JSON.stringify(r.environment)}`),
    ...(edited ? [out.paint("red", `  EDITED: this record was changed after it was written (${edited}); what follows is not what revsync recorded`)] : []),
    `  hash        ${r.hash}`,
    `  prev        ${r.prev ?? `none: this record starts a new chain because ${r.chain_note ?? "it is the first record of this environment"}`}`,
    `  when        ${r.started_at} to ${r.finished_at} (${seconds(r.started_at, r.finished_at)}), exit ${r.exit_code}${r.interrupted ? ", interrupted" : ""}`,
    `  where       ${r.base_url}, realm ${r.realm}, as ${r.service_user ?? "(no user named)"}`,
    ...(lockWords(r) ? [`  lock        ${lockWords(r)}`] : []),
    `  plan        ${r.plan.checksum}, ${r.plan.file ? `saved plan ${r.plan.file}` : "planned in this run"}, made ${r.plan.created_at}${r.plan.made_by ? ` as ${r.plan.made_by}` : ""}`,
    `  approved    ${approvedWords(r)}`,
    `  git         ${gitWords(r)}`,
    `  outcome     ${countLine(r)}${r.error ? `; error: ${r.error}` : ""}`,
  ];
  if (r.changes.length) lines.push("", "  changes:");
  for (const c of r.changes) {
    lines.push(`    ${c.outcome.padEnd(9)} ${c.action} ${c.address}: ${c.why}`);
    if (c.values)
      lines.push(`                values: ${c.values.file}, ${plural(c.values.rows, "row")}, checksum ${c.values.checksum ?? "(none: uploaded by this plan)"}`);
    for (const d of c.diff) lines.push(`                ${d.path}: ${show(d.before)} -> ${show(d.after)}`);
    for (const q of c.requests) lines.push(`                ${out.paint("dim", requestWords(q))}`);
  }
  lines.push("", `  other requests: ${plural(r.other_requests.length, "request")} (the plan's reads, the sign-in)`);
  return lines.join("\n");
}

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

function changeRows(c: EvidenceChange): string {
  const sent = c.requests
    .map((q) => `${q.method} ${q.path} → ${q.status ?? (q.in_flight ? "in flight" : "no answer")}${q.resend ? " (resend)" : ""}`)
    .join("<br>");
  const values = c.values ? [`values: ${c.values.file}, ${plural(c.values.rows, "row")}, checksum ${c.values.checksum ?? "none"}`] : [];
  const diff = [...values, ...c.diff.map((d) => `${d.path}: ${show(d.before)} → ${show(d.after)}`)].join("<br>");
  return `| \`${cell(c.action)}\` | \`${cell(c.address)}\` | ${cell(diff) || "—"} | ${cell(sent) || "—"} | **${c.outcome}**: ${cell(c.why)} |`;
}

/** One record as markdown, for an audit file or a ticket. */
export function evidenceMarkdown(file: string, r: EvidenceRecord, edited: string | null = null): string {
  return [
    `### Apply ${r.sequence} of \`${r.environment}\` — ${r.finished_at}`,
    "",
    ...(edited ? [`> **EDITED**: this record was changed after it was written (${cell(edited)}); what follows is not what revsync recorded.`, ""] : []),
    `- **Record**: \`${file}\`, hash \`${r.hash}\`, prev \`${r.prev ?? "none"}\`${r.prev === null ? ` (this record starts a new chain because ${r.chain_note ?? "it is the first record of this environment"})` : ""}`,
    `- **What was approved**: plan \`${r.plan.checksum}\` (${r.plan.file ? `saved plan \`${r.plan.file}\`` : "planned in this run"}, made ${r.plan.created_at}${r.plan.made_by ? ` as ${r.plan.made_by}` : ""}) at git commit ${r.git.commit ? `\`${r.git.commit}\` ${gitWords(r).replace(/^\S+ /, "")}` : gitWords(r)}`,
    `- **By whom**: ${approvedWords(r)}`,
    `- **When**: ${r.started_at} to ${r.finished_at}, exit ${r.exit_code}${r.interrupted ? " (interrupted)" : ""}`,
    `- **Where**: ${r.base_url}, realm \`${r.realm}\`, as \`${r.service_user ?? "(none)"}\``,
    ...(lockWords(r) ? [`- **Lock**: ${cell(lockWords(r) ?? "")}`] : []),
    `- **Outcome**: ${countLine(r)}${r.error ? `; error: ${r.error}` : ""}`,
    "",
    ...(r.changes.length
      ? ["| action | address | what was approved | what was sent | outcome |", "|---|---|---|---|---|", ...r.changes.map(changeRows)]
      : ["No changes were applied."]),
    "",
  ].join("\n");
}

/** The chain check, record by record, and the heads to anchor. */
export function verifyText(report: ChainReport, out: Painter, live?: Map<string, LiveFinding[]>): string {
  const lines: string[] = [];
  for (const v of report.records) {
    const ok = v.findings[0] === "intact";
    const tag = ok ? out.paint("green", "intact   ") : out.paint("red", v.findings.join("+").toUpperCase().padEnd(9));
    lines.push(`${tag} ${v.file}${v.environment ? ` (${v.environment} #${v.sequence ?? "?"})` : ""}`);
    if (v.note) lines.push(`          ${/could not be fetched/.test(v.note) ? out.paint("yellow", v.note) : v.note}`);
    for (const p of v.problems) lines.push(`          ${p}`);
    for (const f of live?.get(v.file) ?? []) lines.push(`          ${liveWords(f)}`);
  }
  const bad = report.records.filter((v) => v.findings[0] !== "intact").length;
  lines.push(
    "",
    bad
      ? out.paint("red", `${plural(bad, "record")} of ${report.records.length} failed the check.`)
      : `${plural(report.records.length, "record")}: every hash and every link holds.`,
  );
  for (const [env, h] of Object.entries(report.heads)) lines.push(`Latest of ${env}: ${h.hash} (${h.file}); anchor it where the team cannot edit it.`);
  return lines.join("\n");
}

export function liveWords(f: LiveFinding): string {
  const who =
    f.modified_by || f.modified_on ? ` (last changed${f.modified_by ? ` by ${f.modified_by}` : ""}${f.modified_on ? ` at ${f.modified_on}` : ""})` : "";
  const later = f.later.length ? ` (then ${f.later.join(", ")})` : "";
  if (f.holds) return `live: holds  ${f.action} ${f.address}${later}`;
  const what = f.note ?? `changed since${who}: ${f.differs.map((d) => `${d.path} ${show(d.applied)} -> ${show(d.now)}`).join(", ")}`;
  return `live: CHANGED ${f.action} ${f.address}: ${what}${later}`;
}
