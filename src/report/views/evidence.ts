import type { LiveFinding } from "../../evidence/live.js";
import type { EvidenceRecord } from "../../evidence/record.js";
import type { ChainReport, VerifiedRecord } from "../../evidence/verify.js";
import type { Doubt } from "../evidence.js";
import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** A record as evidence show prints it: with what evidence verify says of it, and the doubt that says. */
export interface ShownRecord {
  file: string;
  record: EvidenceRecord;
  verdict: VerifiedRecord | undefined;
  doubt: Doubt | null;
}

export type EvidenceShowView = (records: ShownRecord[], out: Sink) => void;

/** revsync evidence show: for an auditor's reading, an audit file, or a program. */
export const evidenceShowViews: Views<EvidenceShowView> = {
  text: async () => {
    const { evidenceText } = await import("../evidence.js");
    return (records, out) => out.out(records.map((s) => evidenceText(s.file, s.record, out, s.doubt)).join("\n\n"));
  },
  markdown: async () => {
    const { evidenceMarkdown } = await import("../evidence.js");
    return (records, out) => out.out(records.map((s) => evidenceMarkdown(s.file, s.record, s.doubt)).join("\n"));
  },
  json: async () => (records, out) =>
    out.json({
      records: records.map((s) => ({
        file: s.file,
        edited: s.verdict?.findings.includes("edited") ? (s.verdict.problems.find((p) => p.startsWith("edited")) ?? "edited") : null,
        verify: { findings: s.verdict?.findings ?? [], problems: s.verdict?.problems ?? [] },
        doubt: s.doubt ?? null,
        ...s.record,
      })),
    }),
};

/** The chain check of a folder, and with --live what each record applied that still holds. */
export interface Verified {
  folder: string;
  report: ChainReport;
  live: Map<string, LiveFinding[]> | undefined;
}

export type EvidenceVerifyView = (verified: Verified, out: Sink) => void;

/** revsync evidence verify. */
export const evidenceVerifyViews: Views<EvidenceVerifyView> = {
  text: async () => {
    const { verifyText } = await import("../evidence.js");
    return ({ report, live }, out) => out.out(verifyText(report, out, live));
  },
  json: async () => {
    const { liveChanged } = await import("../evidence.js");
    return ({ folder, report, live }, out) =>
      out.json({
        folder,
        ok: report.ok && !liveChanged(live),
        records: report.records.map((v) => ({ ...v, ...(live ? { live: live.get(v.file) ?? null } : {}) })),
        heads: Object.fromEntries(
          Object.entries(report.heads).map(([env, h]) => [
            env,
            env in report.broken ? { ...h, holds: false, last_holding: report.broken[env] ?? null } : { ...h, holds: true },
          ]),
        ),
      });
  },
};
