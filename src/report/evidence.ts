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
  `${q.method} ${q.path} ${q.status ?? (q.in_flight ? "no answer yet: in flight when the run stopped" : "no answer")}${q.error ? ` (${q.error})` : ""}, ${q.started_at}, ${q.duration_ms} ms${q.resend ? ", resend" : ""}${q.user === undefined ? "" : `, as ${q.user ?? "(no user named)"}`}`;

const named = (u: string | null | undefined): string => u ?? "(not named)";

/** An approve's people in words: "reviewed by alice, policy created by alice, approved by bob". */
function peopleWords(c: EvidenceChange): string | undefined {
  const f = c.four_eyes;
  if (!f) return undefined;
  const rule =
    f.rule === "blocked"
      ? "; blocked by revsync: it would have gone as its preparer"
      : f.rule === "refused"
        ? "; refused by the service: it went as its preparer"
        : "";
  return `reviewed by ${named(f.reviewed_by)}, policy created by ${named(f.policy_created_by)}, ${c.outcome === "done" || c.outcome === "confirmed" ? "approved" : "to be approved"} by ${named(f.approved_by)}${rule}`;
}

/** The pull (merge) request's approval in words. */
function pullRequestWords(r: EvidenceRecord): string {
  const pr = r.pull_request_approval;
  if (!pr) return r.ci ? "not read" : "not checked: the run was not in CI";
  const name = pr.number === null ? "none named" : `${pr.provider === "gitlab" ? "merge request !" : "pull request #"}${pr.number}`;
  const approvals = pr.approvals.length
    ? pr.approvals.map((a) => `${a.user}${a.at ? ` at ${a.at}` : ""} on ${a.commit ? a.commit.slice(0, 12) : "an unnamed commit"}`).join("; ")
    : "none";
  // Nothing read (no token, the API unreachable): the reason alone.
  if (!pr.author && !pr.head_commit && !pr.approvals.length) return `${name}: not read (${pr.problem ?? "no answer"})`;
  const verdict = pr.holds ? `independent approval by ${pr.independent.join(", ")}` : `no independent approval: ${pr.problem ?? ""}`;
  return `${name} by ${named(pr.author)}, head ${pr.head_commit?.slice(0, 12) ?? "unknown"}, applied ${pr.applied_commit?.slice(0, 12) ?? "unknown"}; approvals: ${approvals}; ${verdict}`;
}

/** The record's four-eyes lines for text: the rule, who prepared and approved, the pull request. */
function fourEyesText(r: EvidenceRecord): string[] {
  if (r.four_eyes === undefined) return [];
  return [
    `  four eyes   ${r.four_eyes ? "required (four_eyes: true)" : "not required"}; prepared as ${named(r.service_user)}, approves as ${r.approver_user ?? `${named(r.service_user)} (no approver identity)`}`,
    `  pull req.   ${pullRequestWords(r)}`,
  ];
}

/** The "Four eyes" section of a record in markdown: what an auditor pastes into a control test. */
function fourEyesMarkdown(r: EvidenceRecord): string[] {
  if (r.four_eyes === undefined) return [];
  const approves = r.changes.filter((c) => c.action === "approve");
  const rows = approves.map(
    (c) =>
      `| \`${cell(c.address)}\` | ${cell(named(c.four_eyes?.reviewed_by))} | ${cell(named(c.four_eyes?.policy_created_by))} | ${cell(named(c.four_eyes?.approved_by))} | **${c.outcome}**${c.four_eyes?.rule ? ` (${c.four_eyes.rule} by the four-eyes rule)` : ""} |`,
  );
  return [
    "#### Four eyes",
    "",
    `- **Control**: ${r.four_eyes ? "required for this environment (`four_eyes: true`): no SSP batch is approved by the user who reviewed it or created its policy, and in CI the pull request needs an approval by someone other than its author, at the commit applied" : "not required for this environment (`four_eyes` is off); who prepared and who approved is recorded all the same"}.`,
    `- **Prepared as**: \`${cell(named(r.service_user))}\` (creates, updates, reviews); **approves sent as**: \`${cell(r.approver_user ?? named(r.service_user))}\`${r.approver_user ? " (the approver identity)" : " (no approver identity)"}.`,
    `- **Pull request**: ${cell(pullRequestWords(r))}.`,
    "",
    ...(rows.length
      ? ["| batch | reviewed by | policy created by | approved by | outcome |", "|---|---|---|---|---|", ...rows]
      : ["No batch was to be approved."]),
    "",
  ];
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
    `  plan        ${r.plan.checksum}, ${r.plan.file ? `saved plan ${r.plan.file}` : "planned in this run"}, made ${r.plan.created_at}${r.plan.made_by ? ` as ${r.plan.made_by}` : ""}`,
    `  approved    ${approvedWords(r)}`,
    `  git         ${gitWords(r)}`,
    `  outcome     ${countLine(r)}${r.error ? `; error: ${r.error}` : ""}`,
    ...fourEyesText(r),
  ];
  if (r.changes.length) lines.push("", "  changes:");
  for (const c of r.changes) {
    lines.push(`    ${c.outcome.padEnd(9)} ${c.action} ${c.address}: ${c.why}`);
    if (c.values)
      lines.push(`                values: ${c.values.file}, ${plural(c.values.rows, "row")}, checksum ${c.values.checksum ?? "(none: uploaded by this plan)"}`);
    const people = peopleWords(c);
    if (people) lines.push(`                four eyes: ${people}`);
    for (const d of c.diff) lines.push(`                ${d.path}: ${show(d.before)} -> ${show(d.after)}`);
    for (const q of c.requests) lines.push(`                ${out.paint("dim", requestWords(q))}`);
  }
  lines.push("", `  other requests: ${plural(r.other_requests.length, "request")} (the plan's reads, the sign-in)`);
  return lines.join("\n");
}

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

function changeRows(c: EvidenceChange): string {
  const sent = c.requests
    .map(
      (q) => `${q.method} ${q.path} → ${q.status ?? (q.in_flight ? "in flight" : "no answer")}${q.resend ? " (resend)" : ""}${q.user ? ` as ${q.user}` : ""}`,
    )
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
    `- **Outcome**: ${countLine(r)}${r.error ? `; error: ${r.error}` : ""}`,
    "",
    ...(r.changes.length
      ? ["| action | address | what was approved | what was sent | outcome |", "|---|---|---|---|---|", ...r.changes.map(changeRows)]
      : ["No changes were applied."]),
    "",
    ...fourEyesMarkdown(r),
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
