import type { Sink } from "../painter.js";
import type { Views } from "../view.js";

/** One SSP batch as ssp batches lists it. */
export interface BatchRow {
  policy: string;
  batch: string;
  status: string | null;
  /** What `revsync ssp download` takes; null for a batch without an uploaded file (a calculator's). */
  file_id: string | null;
  file_name: string | null;
  /** The values the batch holds; null when the service does not show them. */
  rows: number | null;
  effective_start_date: string | null;
  effective_end_date: string | null;
  updated_by: string | null;
  updated_at: string | null;
}

/** The batches of every SSP policy, or of the one `policy` names. */
export interface BatchList {
  policy: string | undefined;
  rows: BatchRow[];
}

export type SspBatchesView = (list: BatchList, out: Sink) => void;

/** revsync ssp batches. */
export const sspBatchesViews: Views<SspBatchesView> = {
  text: async () => {
    const [{ table }, { plural }] = await Promise.all([import("../table.js"), import("../../words.js")]);
    return ({ policy, rows }, out) => {
      if (!rows.length) return out.out(policy === undefined ? "No SSP policy in the service has batches." : `${policy} has no batches.`);
      out.out(
        table([
          ["POLICY", "BATCH", "STATUS", "FILE ID", "ROWS", "FROM", "TO", "UPDATED"],
          ...rows.map((r) => [
            r.policy,
            r.batch,
            r.status ?? "",
            r.file_id ?? "(no file)",
            r.rows === null ? "" : String(r.rows),
            r.effective_start_date ?? "",
            r.effective_end_date ?? "",
            [r.updated_at, r.updated_by ? `by ${r.updated_by}` : ""].filter(Boolean).join(" "),
          ]),
        ]),
      );
      out.out(`\n${plural(rows.length, "batch", "batches")}. revsync ssp download FILE_ID gets a batch's values.`);
    };
  },
  json:
    async () =>
    ({ rows }, out) =>
      out.json({ batches: rows }),
};
