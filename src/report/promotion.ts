/** A plan's promotion as the reports show it: at the top of the text and of the pull request's comment
 *  ("Promotion from <source>"): the source, the commit, how many writes are promoted and blocked, the
 *  policy tests run live there; under each write, what the source holds of it. Names, values and reasons
 *  come from revsync.yaml, git and the service: each goes through the escape of its report. */
import type { Change, Plan, PlanPromotion } from "../plan/model.js";
import { plural } from "../words.js";
import { fitPieces, SECTION_BUDGET } from "./budget.js";
import { markdownCode, markdownText as md, terminalText as t } from "./escape.js";
import type { Painter } from "./painter.js";

/** A value the source holds, short: a checksum's first 12 hex digits, other JSON cut past 60 characters. */
function short(v: unknown): string {
  if (typeof v === "string" && /^sha256:[0-9a-f]{64}$/.test(v)) return `${v.slice(0, 19)}…`;
  const s = JSON.stringify(v) ?? "null";
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

/** What the source holds of a write, in words: "carves_allocation true", "status "approved", values_checksum
 *  sha256:…"; a policy's many fields (a create) counted, as the diff shows them already, its batches named. */
export function comparedWords(compared: Record<string, unknown>): string {
  const { batches, ...fields } = compared;
  const names = Object.keys(fields);
  const own =
    names.length > 4
      ? `all ${names.length} fields git sets`
      : Object.entries(fields)
          .map(([k, v]) => `${k} ${short(v)}`)
          .join(", ");
  const each =
    batches && typeof batches === "object"
      ? Object.entries(batches as Record<string, Record<string, unknown> | null>).map(
          ([b, v]) => `batch ${JSON.stringify(b)}: ${v ? comparedWords(v) : "none"}`,
        )
      : [];
  return [own, ...each].filter(Boolean).join("; ");
}

/** The commit, short, and the files that differ from it. */
function commitWords(p: PlanPromotion): string {
  const commit = p.commit ? `commit ${p.commit.slice(0, 12)}` : "a commit git cannot name";
  return p.uncommitted?.length
    ? `${commit}, with ${plural(p.uncommitted.length, "policy file")} that ${p.uncommitted.length === 1 ? "differs" : "differ"} from it`
    : commit;
}

/** What the policy tests came to in the source, in one sentence. */
function testsSentence(p: PlanPromotion): string {
  const tests = p.tests;
  if (!tests) return p.read_at === null ? "" : "The repo has no policy tests to run there.";
  const what = [tests.cases ? plural(tests.cases, "case") : "", tests.contracts ? plural(tests.contracts, "contract") : ""].filter(Boolean).join(" and ");
  return tests.failed.length
    ? `Policy tests fail live in ${p.from} (${plural(tests.failed.length, "failure")}), so nothing is promoted: ${tests.failed.join("; ")}.`
    : `Policy tests pass live in ${p.from}${what ? ` (${what})` : ""}.`;
}

/** The promotion in one or two sentences (the text's head line, the comment's lead). */
export function promotionSentences(p: PlanPromotion): string[] {
  const where = `${p.from} (${p.base_url}, realm ${p.realm})`;
  if (p.read_at === null) return [`Promotion from ${where} at ${commitWords(p)}: nothing to promote, so ${p.from} was not read.`];
  const counts = `${p.promoted} promoted, ${p.blocked} blocked`;
  return [
    `Promotion from ${where}, read ${p.read_at.replace(/\.\d{3}Z$/, "Z")} at ${commitWords(p)}: ${counts}; apply checks ${p.from} again right before each write.`,
    testsSentence(p),
  ].filter(Boolean);
}

/** The promotion at the top of the plan's text (none without promote_from). */
export function promotionText(plan: Plan, out: Painter): string[] {
  const p = plan.promotion;
  if (!p) return [];
  const [head, ...rest] = promotionSentences(p);
  const bad = p.blocked > 0 || !!p.tests?.failed.length;
  const lines = [out.paint(bad ? "red" : "bold", t(head ?? "")), ...rest.map((l) => `  ${t(l)}`)];
  for (const f of p.uncommitted ?? []) lines.push(`  ${out.paint("yellow", "not committed:")} ${t(f)}`);
  return [...lines, ""];
}

/** A write's promotion, under it in the text: what the source holds of it (a blocked one's reason says why). */
export function changePromotionLines(c: Change, out: Painter): string[] {
  const p = c.promotion;
  if (!p) return [];
  const unseen = p.not_shown?.length ? `; not compared, as ${p.from} does not show ${p.not_shown.length === 1 ? "it" : "them"}: ${p.not_shown.join(", ")}` : "";
  if (p.status === "blocked") return [`      ${out.paint("red", `blocked for promotion (the ${p.action} it would be)`)}${t(unseen)}`];
  const holds = Object.keys(p.compared).length ? `: ${p.from} holds ${comparedWords(p.compared)}` : "";
  return [`      ${out.paint("green", `promoted from ${t(p.from)}`)}${t(holds)}${t(unseen)}`];
}

/** The "Promotion" section at the top of the pull request's comment, within its budget. */
export function promotionMarkdown(plan: Plan, whole: string): string {
  const p = plan.promotion;
  if (!p) return "";
  const [head, ...rest] = promotionSentences(p);
  const lead = p.blocked || p.tests?.failed.length ? `> **${md(head ?? "")}**` : `> ${md(head ?? "")}`;
  const marked = plan.changes.filter((c) => c.promotion);
  const rows = marked.map((c) => {
    const m = c.promotion as NonNullable<Change["promotion"]>;
    const holds = m.status === "promoted" ? comparedWords(m.compared) : (c.reason ?? "");
    return `| ${markdownCode(c.address, { cell: true })} (${m.action}) | **${m.status}** | ${md(holds)} |\n`;
  });
  const table = rows.length
    ? [
        `| Change | Promotion | What ${md(p.from)} holds, or why not |`,
        "|---|---|---|",
        fitPieces(rows, SECTION_BUDGET.promotion, (n) => `\n_${plural(n, "more write")} in ${whole} (each change's promotion)._\n`).text,
      ]
    : [];
  const files = (p.uncommitted ?? []).map((f) => `- not committed: ${md(f)}`);
  return [
    `#### Promotion from ${markdownCode(p.from)}`,
    "",
    lead,
    ...rest.map((l) => `> ${md(l)}`),
    "",
    ...(files.length ? [...files, ""] : []),
    ...table,
    "",
  ].join("\n");
}
