/** What the reports say of the SSP kind's entries beyond every entry's own words (Kind.words): the values
 *  a review or approve moves forward, four eyes above the approves and beside each one, its drift classes
 *  counted, and what an apply's approves and batch writes call for. Plain text: each report escapes it. */
import { APPROVER_FIX } from "../../api/auth.js";
import type { Change, PlanFourEyes, ValuesSummary } from "../../shared/entries.js";
import { plural } from "../../words.js";
import type { AppliedOutcome, AppliedWords, KindWords, RecordedChange } from "../kind.js";

/** What a review or approve moves forward: "12 rows, 6 products, currencies EUR, USD, 2026-01-01 to 2026-06-30". */
export function valuesLine(v: ValuesSummary): string {
  return `${plural(v.rows, "row")}, ${plural(v.products, "product")}, ${v.currencies.length === 1 ? "currency" : "currencies"} ${v.currencies.join(", ") || "(none)"}, ${v.from} to ${v.to}, as in ${v.file}`;
}

/** What four eyes asks of the approves, said once above them: the rule, and who they would go as. */
export function fourEyesHead(f: PlanFourEyes): string[] {
  const who = f.approver_configured
    ? `approves go as the approver identity, ${f.approver ?? "a user its token does not name"}; everything else as ${f.sign_in ?? "the sign-in"}.`
    : f.approver_known === false
      ? `the approver identity is not known to this job (it names no REVSYNC_APPROVER_USERNAME): approves go as the apply job's approver, so whether apply blocks one is not known here; everything else as ${f.sign_in ?? "the sign-in"} (give the plan job the approver's user name in REVSYNC_APPROVER_USERNAME).`
      : `no approver identity is configured: approves would go as the sign-in, ${f.sign_in ?? "a user its token does not name"}, and apply blocks each one that user prepared (${APPROVER_FIX}).`;
  return [`Four eyes (four_eyes: true): each approve below needs an approver other than its batch's reviewer, its uploader and its policy's creator; ${who}`];
}

/** One approve's four-eyes line: who prepared its batch, and whether apply would block it. */
export function fourEyesLine(f: PlanFourEyes, address: string): string | undefined {
  const a = f.approves.find((x) => x.address === address);
  if (!a) return undefined;
  const signIn = f.sign_in ?? "the sign-in";
  const reviewer = a.reviewed_in_plan ? `reviewed by this apply (as ${signIn})` : `reviewed by ${a.reviewed_by ?? "a user the service does not name"}`;
  const uploader = a.uploaded_in_plan
    ? `uploaded by this apply's create (as ${signIn})`
    : a.uploaded_by !== undefined
      ? `uploaded by ${a.uploaded_by ?? "a user the service does not name"}`
      : undefined;
  const creator = a.created_in_plan
    ? `policy created by this apply (as ${signIn})`
    : `policy created by ${a.policy_created_by ?? "a user the service does not name"}`;
  const as =
    f.approver_known === false
      ? "the apply job's approver, not known here"
      : ((f.approver_configured ? f.approver : f.sign_in) ?? "a user the token does not name");
  return `four eyes: ${[reviewer, uploader, creator].filter(Boolean).join(", ")}; approve as ${as}${a.blocked ? ": apply would block it" : ""}`;
}

/** After an apply: the approves four eyes held back (their fix is another approver, not another plan),
 *  those that broke it, and batch writes that moved something other than what was reviewed. */
function appliedWords(outcomes: readonly AppliedOutcome[]): AppliedWords {
  const notes: string[] = [];
  const held = outcomes.filter((o) => o.four_eyes?.rule === "blocked" || o.four_eyes?.rule === "refused").length;
  if (held)
    notes.push(
      `Four eyes held back ${plural(held, "approve")}: ${APPROVER_FIX}, then \`revsync apply\` again approves ${held === 1 ? "it" : "them"}; what this run did stays done.`,
    );
  const broken = outcomes.filter((o) => o.outcome === "breached" && o.four_eyes?.rule === "breached").length;
  if (broken)
    notes.push(
      `Four eyes is broken by ${plural(broken, "approve")} that landed or were found made (named above): the service shows ${broken === 1 ? "it" : "them"} approved by the batch's preparer, or by another user than the approver identity; review ${broken === 1 ? "that approval" : "those approvals"} in the service.`,
    );
  const moved = outcomes.filter((o) => o.outcome === "breached").length - broken;
  if (moved > 0)
    notes.push(
      `A batch other than the one reviewed, or other values, may have moved (named above): the interface names a batch by its name alone; check ${moved === 1 ? "that batch" : "those batches"} in the service.`,
    );
  return { notes, held, ruleBlocked: outcomes.filter((o) => o.four_eyes?.rule === "blocked").length };
}

const named = (u: string | null | undefined): string => u ?? "(not named)";

/** An approve's people in words: "reviewed by alice, policy created by alice, approved by bob". */
function peopleWords(c: RecordedChange, esc: (text: string) => string): string | undefined {
  const f = c.four_eyes;
  if (!f) return undefined;
  const rule =
    f.rule === "blocked"
      ? "; blocked by revsync: it would have gone as its preparer"
      : f.rule === "refused"
        ? "; refused by the service: it went as its preparer"
        : f.rule === "breached"
          ? `; four eyes broken: the service shows it approved by ${esc(named(f.approved_by))}${f.sent_as ? `, sent as ${esc(f.sent_as)}` : ""}`
          : "";
  const landed = c.outcome === "done" || c.outcome === "confirmed" || c.outcome === "breached";
  const uploaded = f.uploaded_by !== undefined ? `, uploaded by ${esc(named(f.uploaded_by))}` : "";
  const unconfirmed = landed && f.confirmed === false ? " (not confirmed by the service's answer)" : "";
  return `reviewed by ${esc(named(f.reviewed_by))}${uploaded}, policy created by ${esc(named(f.policy_created_by))}, ${landed ? "approved" : "to be approved"} by ${esc(named(f.approved_by))}${unconfirmed}${rule}`;
}

/** The approves of a record, one row each: who prepared the batch, who approved it, what became of it. */
function approvesTable(changes: readonly RecordedChange[], md: (text: string) => string, code: (text: string) => string): string[] {
  const rows = changes
    .filter((c) => c.action === "approve")
    .map((c) => {
      const f = c.four_eyes;
      const rule = f?.rule
        ? ` (${f.rule === "breached" ? `four eyes broken${f.sent_as ? `: sent as ${md(f.sent_as)}` : ""}` : `${f.rule} by the four-eyes rule`})`
        : "";
      return `| ${code(c.address)} | ${md(named(f?.reviewed_by))} | ${md(f?.uploaded_by === undefined ? "(not recorded)" : named(f.uploaded_by))} | ${md(named(f?.policy_created_by))} | ${md(named(f?.approved_by))}${f?.confirmed === false ? " (not confirmed by the service)" : ""} | **${md(c.outcome)}**${rule} |`;
    });
  if (!rows.length) return ["No batch was to be approved."];
  return ["| batch | reviewed by | uploaded by | policy created by | approved by | outcome |", "|---|---|---|---|---|---|", ...rows];
}

/** What an evidence record's reader is told of the SSP kind's changes. */
const SSP_RECORD_WORDS: Pick<KindWords, "fourEyesRule" | "recordLines" | "recordTable"> = {
  fourEyesRule:
    "no SSP batch is approved by the user who reviewed it, uploaded it or created its policy (who approved it is what the service shows right after the approve)",
  recordLines: (c, esc) => {
    const people = peopleWords(c, esc);
    return people ? [`four eyes: ${people}`] : [];
  },
  recordTable: approvesTable,
};

export const SSP_WORDS: KindWords = {
  head: (plan) => (plan.four_eyes ? { lines: fourEyesHead(plan.four_eyes), above: (c: Change) => c.action === "approve" } : undefined),
  lines(c, plan) {
    const eyes = plan.four_eyes && c.action === "approve" ? fourEyesLine(plan.four_eyes, c.address) : undefined;
    return [...(c.values ? [`values: ${valuesLine(c.values)}`] : []), ...(eyes ? [eyes] : [])];
  },
  summary: (c) => (c.values ? valuesLine(c.values) : undefined),
  drift: {
    unmanaged_batch: ["unmanaged batch", "unmanaged batches"],
    batch_status: ["batch status", "batch statuses"],
    batch_values: ["batch's values", "batches' values"],
  },
  applied: appliedWords,
  ...SSP_RECORD_WORDS,
};
