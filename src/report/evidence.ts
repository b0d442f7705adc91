import type { EvidenceChange, EvidenceRecord, EvidenceRequest } from "../evidence/record.js";
import type { ChainReport } from "../evidence/verify.js";
import type { LiveFinding } from "../evidence/live.js";
import { owns } from "../kinds/kind.js";
import { KINDS, kindOf } from "../kinds/registry.js";
import { plural } from "../words.js";
import { markdownCode, markdownText as md, terminalText as t } from "./escape.js";
import type { Painter } from "./painter.js";

/** What show says above a record evidence verify does not hold: its findings, in capitals, and why. */
export interface Doubt {
  tag: string;
  words: string;
}

const seconds = (a: string, b: string): string => `${((Date.parse(b) - Date.parse(a)) / 1000).toFixed(1)}s`;
const show = (v: unknown): string => (v === undefined ? "(unset)" : JSON.stringify(v));

/** The record's words, with each value it holds passed through `esc` (the report's escape). */
type Esc = (text: string) => string;

function approvedWords(r: EvidenceRecord, esc: Esc): string {
  const how = {
    "auto-approve": "confirmed by --auto-approve",
    prompt: `confirmed by a person answering yes at the prompt${r.service_user ? ` (signed in as ${esc(r.service_user)})` : ""}`,
    declined: "declined at the prompt: nothing was applied",
    cancelled: "cancelled at the prompt (Ctrl-C or end of input): nothing was applied",
    "not asked": "not asked: nothing was to be applied",
  }[r.approval];
  const ci = r.ci;
  if (!ci) return how;
  const pr = ci.pull_request !== null ? `, ${ci.provider === "gitlab" ? "merge request !" : "pull request #"}${ci.pull_request}` : "";
  return `${how}; ${ci.provider === "gitlab" ? "GitLab CI" : "GitHub Actions"} run${ci.run_url ? ` ${esc(ci.run_url)}` : ""}${ci.actor ? ` started by ${esc(ci.actor)}` : ""}${pr}`;
}

function gitWords(r: EvidenceRecord, esc: Esc): string {
  if (!r.git.commit) return `unknown (${esc(r.git.note ?? "no commit")})`;
  const tree =
    r.git.clean === true
      ? "working tree clean"
      : r.git.clean === false
        ? "working tree not clean (files changed or not tracked)"
        : "working tree state unknown";
  return `${r.git.commit} (${tree})`;
}

/** The paths that were not clean, in words: each with what became of it, a policy or values file said so;
 *  "" when the record lists none (a clean tree, or a record written before they were listed). */
function notCleanWords(r: EvidenceRecord, esc: Esc): string {
  const list = r.git.not_clean ?? [];
  if (!list.length) return "";
  const more = (r.git.not_clean_total ?? list.length) - list.length;
  const each = list.map((p) => `${esc(p.path)} (${p.what}${p.policy ? ", a policy file" : ""})`);
  return `${each.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

const requestWords = (q: EvidenceRequest): string =>
  `${t(q.method)} ${t(q.path)} ${q.status ?? (q.in_flight ? "no answer yet: in flight when the run stopped" : "no answer")}${q.error ? ` (${t(q.error)})` : ""}, ${t(q.started_at)}, ${q.duration_ms} ms${q.resend ? ", resend" : ""}${q.user === undefined ? "" : `, as ${t(q.user ?? "(no user named)")}`}`;

const named = (u: string | null | undefined): string => u ?? "(not named)";

/** What a change's kind says of it in a record, beyond its own lines (an approve's people). */
const recordLines = (c: EvidenceChange, esc: Esc): string[] => kindOf(KINDS, c.address)?.words?.recordLines?.(c, esc) ?? [];

/** The pull (merge) request's approval in words, each value passed through `esc`. */
function pullRequestWords(r: EvidenceRecord, esc: Esc): string {
  const pr = r.pull_request_approval;
  if (!pr) return r.ci ? "not read" : "not checked: the run was not in CI";
  const name = pr.number === null ? "none named" : `${pr.provider === "gitlab" ? "merge request !" : "pull request #"}${esc(String(pr.number))}`;
  const approvals = pr.approvals.length
    ? pr.approvals.map((a) => `${esc(a.user)}${a.at ? ` at ${esc(a.at)}` : ""} on ${a.commit ? esc(a.commit.slice(0, 12)) : "an unnamed commit"}`).join("; ")
    : "none";
  // Nothing read (no token, the API unreachable): the reason alone.
  if (!pr.author && !pr.head_commit && !pr.approvals.length) return `${name}: not read (${esc(pr.problem ?? "no answer")})`;
  const verdict = pr.holds ? `independent approval by ${pr.independent.map(esc).join(", ")}` : `no independent approval: ${esc(pr.problem ?? "")}`;
  return `${name} by ${esc(named(pr.author))}, head ${esc(pr.head_commit?.slice(0, 12) ?? "unknown")}, applied ${esc(pr.applied_commit?.slice(0, 12) ?? "unknown")}; approvals: ${approvals}; ${verdict}`;
}

/** The record's four-eyes lines for text: the rule, who prepared and approved, the pull request. */
function fourEyesText(r: EvidenceRecord): string[] {
  if (r.four_eyes === undefined) return [];
  return [
    `  four eyes   ${r.four_eyes ? "required (four_eyes: true)" : "not required"}; prepared as ${t(named(r.service_user))}, approves as ${r.approver_user ? t(r.approver_user) : `${t(named(r.service_user))} (no approver identity)`}`,
    `  pull req.   ${pullRequestWords(r, t)}`,
  ];
}

/** The "Four eyes" section of a record in markdown: what an auditor pastes into a control test. */
function fourEyesMarkdown(r: EvidenceRecord): string[] {
  if (r.four_eyes === undefined) return [];
  const code = (text: string): string => markdownCode(text, { cell: true });
  // Each kind's table of its changes (the approves: who prepared the batch, who approved it).
  const tables = KINDS.flatMap((k) => {
    const table = k.words?.recordTable?.(
      r.changes.filter((c) => owns(k, c.address)),
      md,
      code,
    );
    return table?.length ? [...table, ""] : [];
  });
  const rules = KINDS.flatMap((k) => (k.words?.fourEyesRule ? [k.words.fourEyesRule] : []));
  return [
    "#### Four eyes",
    "",
    `- **Control**: ${r.four_eyes ? `required for this environment (\`four_eyes: true\`): ${rules.join("; ")}, and in CI the pull request needs an approval by someone other than its author, at the commit applied` : "not required for this environment (`four_eyes` is off); who prepared and who approved is recorded all the same"}.`,
    `- **Prepared as**: ${markdownCode(named(r.service_user))} (creates, updates, reviews); **approves sent as**: ${markdownCode(r.approver_user ?? named(r.service_user))}${r.approver_user ? " (the approver identity)" : " (no approver identity)"}.`,
    `- **Pull request**: ${pullRequestWords(r, md)}.`,
    "",
    ...tables,
  ];
}

/** How apply judged the record's guardrails, in words (esc: the report's escape); undefined without any. */
function guardrailWords(r: EvidenceRecord, esc: Esc): string | undefined {
  const g = r.guardrails;
  if (!g) return undefined;
  const overrides = g.overrides.map((o) => `${esc(o.name)} overridden by ${esc(o.by)}: ${esc(o.reason)}`);
  const approvers = g.approvers.map((a) => `${esc(a.user)} (${a.via})`);
  const open = g.freeze.filter((w) => w.in_force).map((w) => `${esc(w.name)} in force until ${esc(w.until_local ?? "")}${w.overridden ? " (overridden)" : ""}`);
  return [
    `judged ${esc(g.evaluated_at)} (${plural(g.rules.length, "rule")}, ${plural(g.freeze.length, "freeze window")})`,
    approvers.length ? `approvers ${approvers.join(", ")}` : "no approvers",
    ...open,
    ...overrides,
    g.held_back.length ? `held back: ${g.held_back.map(esc).join("; ")}` : "nothing held the plan back",
  ].join("; ");
}

/** The record's promotion, in words (esc: the report's escape); undefined without one. */
function promotionWords(r: EvidenceRecord, esc: Esc): string | undefined {
  const p = r.promotion;
  if (!p) return undefined;
  const tests = p.tests
    ? p.tests.failed.length
      ? `policy tests failed there: ${p.tests.failed.map(esc).join("; ")}`
      : `policy tests passed there (${plural(p.tests.cases, "case")}, ${plural(p.tests.contracts, "contract")})`
    : "no policy tests";
  const again = r.promotion_tests_at_apply ? `; again before the writes: ${r.promotion_tests_at_apply.failed.length ? "failed" : "passed"}` : "";
  return `from ${esc(p.from)} (${esc(p.base_url)}, realm ${esc(p.realm)}), read ${esc(p.read_at ?? "never: nothing to promote")} at commit ${esc(p.commit ?? "unknown")}: ${p.promoted} promoted, ${p.blocked} blocked; compared ${esc(p.compared_checksum)}; ${tests}${again}`;
}

/** A change's guardrail outcomes other than pass, in words. */
const outcomeWords = (c: EvidenceChange, esc: Esc): string =>
  (c.guardrails ?? [])
    .filter((o) => o.outcome !== "pass")
    .map((o) => `${esc(o.rule)} ${o.outcome}: ${esc(o.message)}`)
    .join("; ");

/** The environment's lock the run held, in words; undefined for a record without one. */
function lockWords(r: EvidenceRecord): string | undefined {
  const l = r.lock;
  if (!l) return undefined;
  if ("disabled" in l) return `none: ${l.note}`;
  const waited = l.waited_ms >= 1000 ? `, after waiting ${(l.waited_ms / 1000).toFixed(1)}s` : "";
  return `${l.where}, id ${l.id}, taken ${l.acquired_at}${waited}${l.released ? "" : ", not released"}${l.note ? `; ${l.note}` : ""}`;
}

/** The counts of a record (its keys are its schema's: fixed words). */
function countLine(r: EvidenceRecord): string {
  const parts = Object.entries(r.summary)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`);
  return parts.length ? parts.join(", ") : "no changes";
}

/** One record for a reader: what was approved, by whom, when, what was sent, and what became of it.
 *  `doubt`: what evidence verify says of a record it does not hold, said first. Every value of the
 *  record is outside text (a record can be edited, a name can hold anything): escaped as it is shown. */
export function evidenceText(file: string, r: EvidenceRecord, out: Painter, doubt: Doubt | null = null): string {
  const lines = [
    out.paint("bold", `Evidence ${t(file)}: run ${r.sequence} of environment ${JSON.stringify(r.environment)}`),
    ...(doubt ? [out.paint("red", `  ${doubt.tag}: ${t(doubt.words)}`)] : []),
    `  hash        ${t(r.hash)}`,
    `  prev        ${r.prev !== null ? t(r.prev) : `none: this record starts a new chain because ${t(r.chain_note ?? "it is the first record of this environment")}`}`,
    `  when        ${t(r.started_at)} to ${t(r.finished_at)} (${seconds(r.started_at, r.finished_at)}), exit ${r.exit_code}${r.interrupted ? ", interrupted" : ""}`,
    `  where       ${t(r.base_url)}, realm ${t(r.realm)}, as ${t(r.service_user ?? "(no user named)")}`,
    ...(lockWords(r) ? [`  lock        ${t(lockWords(r) ?? "")}`] : []),
    `  plan        ${t(r.plan.checksum)}, ${r.plan.file ? `saved plan ${t(r.plan.file)}` : "planned in this run"}, made ${t(r.plan.created_at)}${r.plan.made_by ? ` as ${t(r.plan.made_by)}` : ""}`,
    `  approved    ${approvedWords(r, t)}`,
    `  git         ${gitWords(r, t)}`,
    ...(r.git.commit && r.git.note ? [`  git note    ${t(r.git.note)}`] : []),
    ...(notCleanWords(r, t) ? [`  not clean   ${notCleanWords(r, t)}`] : []),
    `  outcome     ${countLine(r)}${r.error ? `; error: ${t(r.error)}` : ""}`,
    ...fourEyesText(r),
    ...(guardrailWords(r, t) ? [`  guardrails  ${guardrailWords(r, t)}`] : []),
    ...(promotionWords(r, t) ? [`  promotion   ${promotionWords(r, t)}`] : []),
  ];
  if (r.changes.length) lines.push("", "  changes:");
  for (const c of r.changes) {
    lines.push(`    ${c.outcome.padEnd(9)} ${t(c.action)} ${t(c.address)}: ${t(c.why)}`);
    if (c.values)
      lines.push(
        `                values: ${t(c.values.file)}, ${plural(c.values.rows, "row")}, checksum ${t(c.values.checksum ?? "(none: uploaded by this plan)")}`,
      );
    for (const l of recordLines(c, t)) lines.push(`                ${l}`);
    if (outcomeWords(c, t)) lines.push(`                guardrails: ${outcomeWords(c, t)}`);
    if (c.promotion) lines.push(`                promotion: ${c.promotion.status} from ${t(c.promotion.from)}: ${t(JSON.stringify(c.promotion.compared))}`);
    for (const d of c.diff) lines.push(`                ${t(d.path)}: ${show(d.before)} -> ${show(d.after)}`);
    for (const q of c.requests) lines.push(`                ${out.paint("dim", requestWords(q))}`);
  }
  lines.push("", `  other requests: ${plural(r.other_requests.length, "request")} (the plan's reads, the sign-in)`);
  return lines.join("\n");
}

function changeRows(c: EvidenceChange): string {
  const sent = c.requests
    .map(
      (q) =>
        `${md(q.method)} ${md(q.path)} → ${q.status ?? (q.in_flight ? "in flight" : "no answer")}${q.resend ? " (resend)" : ""}${q.user ? ` as ${md(q.user)}` : ""}`,
    )
    .join("<br>");
  const values = c.values ? [`values: ${md(c.values.file)}, ${plural(c.values.rows, "row")}, checksum ${md(c.values.checksum ?? "none")}`] : [];
  const guarded = [
    ...(outcomeWords(c, md) ? [`guardrails: ${outcomeWords(c, md)}`] : []),
    ...(c.promotion ? [`promotion: ${c.promotion.status} from ${md(c.promotion.from)}`] : []),
  ];
  const diff = [...values, ...guarded, ...c.diff.map((d) => `${md(d.path)}: ${md(show(d.before))} → ${md(show(d.after))}`)].join("<br>");
  return `| ${markdownCode(c.action, { cell: true })} | ${markdownCode(c.address, { cell: true })} | ${diff || "—"} | ${sent || "—"} | **${c.outcome}**: ${md(c.why)} |`;
}

/** One record as markdown, for an audit file or a ticket: every value of the record escaped
 *  (markdownText), so that a name or an edited record renders as text and opens nothing. */
export function evidenceMarkdown(file: string, r: EvidenceRecord, doubt: Doubt | null = null): string {
  return [
    `### Apply ${r.sequence} of ${markdownCode(r.environment)} — ${md(r.finished_at)}`,
    "",
    ...(doubt ? [`> **${doubt.tag}**: ${md(doubt.words)}.`, ""] : []),
    `- **Record**: ${markdownCode(file)}, hash ${markdownCode(r.hash)}, prev ${markdownCode(r.prev ?? "none")}${r.prev === null ? ` (this record starts a new chain because ${md(r.chain_note ?? "it is the first record of this environment")})` : ""}`,
    `- **What was approved**: plan ${markdownCode(r.plan.checksum)} (${r.plan.file ? `saved plan ${markdownCode(r.plan.file)}` : "planned in this run"}, made ${md(r.plan.created_at)}${r.plan.made_by ? ` as ${md(r.plan.made_by)}` : ""}) at git commit ${r.git.commit ? `${markdownCode(r.git.commit)} ${gitWords(r, md).replace(/^\S+ /, "")}` : gitWords(r, md)}${notCleanWords(r, md) ? `; not clean: ${notCleanWords(r, md)}` : ""}`,
    `- **By whom**: ${approvedWords(r, md)}`,
    `- **When**: ${md(r.started_at)} to ${md(r.finished_at)}, exit ${r.exit_code}${r.interrupted ? " (interrupted)" : ""}`,
    `- **Where**: ${md(r.base_url)}, realm ${markdownCode(r.realm)}, as ${markdownCode(r.service_user ?? "(none)")}`,
    ...(lockWords(r) ? [`- **Lock**: ${md(lockWords(r) ?? "")}`] : []),
    ...(guardrailWords(r, md) ? [`- **Guardrails**: ${guardrailWords(r, md)}`] : []),
    ...(promotionWords(r, md) ? [`- **Promotion**: ${promotionWords(r, md)}`] : []),
    `- **Outcome**: ${countLine(r)}${r.error ? `; error: ${md(r.error)}` : ""}`,
    "",
    ...(r.changes.length
      ? ["| action | address | what was approved | what was sent | outcome |", "|---|---|---|---|---|", ...r.changes.map(changeRows)]
      : ["No changes were applied."]),
    "",
    ...fourEyesMarkdown(r),
  ].join("\n");
}

/** The chain check, record by record, and the heads to anchor. */
/** With --live, how many changes the records applied no longer hold in the service (0 without --live):
 *  any makes verify exit 1 and its JSON `ok` false, as a broken chain does. */
export const liveChanged = (live: Map<string, LiveFinding[]> | undefined): number => [...(live?.values() ?? [])].flat().filter((f) => !f.holds).length;

export function verifyText(report: ChainReport, out: Painter, live?: Map<string, LiveFinding[]>): string {
  const lines: string[] = [];
  for (const v of report.records) {
    const ok = v.findings[0] === "intact";
    const tag = ok ? out.paint("green", "intact   ") : out.paint("red", v.findings.join("+").toUpperCase().padEnd(9));
    lines.push(`${tag} ${t(v.file)}${v.environment ? ` (${t(v.environment)} #${v.sequence ?? "?"})` : ""}`);
    if (v.note) lines.push(`          ${/could not be fetched/.test(v.note) ? out.paint("yellow", t(v.note)) : t(v.note)}`);
    for (const p of v.problems) lines.push(`          ${t(p)}`);
    for (const f of live?.get(v.file) ?? []) lines.push(`          ${liveWords(f)}`);
  }
  const bad = report.records.filter((v) => v.findings[0] !== "intact").length;
  lines.push(
    "",
    bad
      ? out.paint("red", `${plural(bad, "record")} of ${report.records.length} failed the check.`)
      : `${plural(report.records.length, "record")}: every hash and every link holds.`,
  );
  for (const [env, h] of Object.entries(report.heads)) lines.push(headWords(report, env, h));
  const changed = liveChanged(live);
  if (changed)
    lines.push(
      out.paint(
        "red",
        `live: ${plural(changed, "change")} applied by these records no longer ${changed === 1 ? "holds" : "hold"} in the service (named above).`,
      ),
    );
  return lines.join("\n");
}

/** The hash to anchor of one environment's chain, or, when its chain does not hold, that it is none:
 *  anchoring the head of a chain that failed would vouch for what failed. */
function headWords(report: ChainReport, env: string, h: ChainReport["heads"][string]): string {
  if (!(env in report.broken)) return `Latest of ${t(env)}: ${h.hash} (${t(h.file)}); anchor it where the team cannot edit it.`;
  const last = report.broken[env];
  const held = last ? `the last record that holds is #${last.sequence} ${t(last.file)} (${last.hash})` : "no record of it holds";
  return `The chain of ${t(env)} does not hold: do not anchor its latest hash; ${held}.`;
}

export function liveWords(f: LiveFinding): string {
  const who =
    f.modified_by || f.modified_on ? ` (last changed${f.modified_by ? ` by ${t(f.modified_by)}` : ""}${f.modified_on ? ` at ${t(f.modified_on)}` : ""})` : "";
  const later = f.later.length ? ` (then ${t(f.later.join(", "))})` : "";
  if (f.holds) return `live: holds  ${t(f.action)} ${t(f.address)}${later}`;
  const what = f.note ? t(f.note) : `changed since${who}: ${f.differs.map((d) => `${t(d.path)} ${show(d.applied)} -> ${show(d.now)}`).join(", ")}`;
  return `live: CHANGED ${t(f.action)} ${t(f.address)}: ${what}${later}`;
}
