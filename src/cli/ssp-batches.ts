import { ssp } from "../api/resources.js";
import { nearest } from "../did-you-mean.js";
import { UserError } from "../errors.js";
import { mapLimit } from "../map-limit.js";
import type { SspItem } from "../schema/generated/api.js";
import { batchNameOf, byCodePoint } from "../shared/address.js";
import { plural } from "../words.js";
import { concurrencyOf } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { table, time, withClient } from "./service-command.js";

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

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** revsync ssp batches [POLICY]: every batch of one SSP policy, or of all, with its status, file id,
 *  rows and dates: what `ssp download` needs, and what a policy file's batches: can name. Read-only. */
export async function runSspBatches(flags: GlobalFlags, out: Output, args: string[]): Promise<number> {
  const wanted = args[0];
  return withClient(flags, out, async (core) => {
    const names = (await ssp.list(core)).map((e) => e.compliance_name ?? "").filter((n) => n !== "");
    if (wanted !== undefined && !names.includes(wanted)) {
      const near = nearest(wanted, names);
      throw new UserError(
        `no SSP policy named ${JSON.stringify(wanted)} in the service (names are exact and case-sensitive)${near.length ? `; did you mean ${near.map((n) => JSON.stringify(n)).join(" or ")}?` : ""}`,
      );
    }
    const chosen = (wanted === undefined ? names : [wanted]).sort(byCodePoint);
    const concurrency = concurrencyOf(flags);
    // The list leaves batches out (docs/decisions.md, "Which reads"): each policy's details give them, each batch its values.
    const perPolicy = await mapLimit(chosen, concurrency, async (policy) => {
      const batches = (await ssp.get(core, policy))?.compliance_spec?.[0]?.batches ?? [];
      return batches.map((b) => ({ policy, b }));
    });
    const all = perPolicy.flat().sort((x, y) => byCodePoint(x.policy, y.policy) || byCodePoint(batchNameOf(x.b), batchNameOf(y.b)));
    const rows = await mapLimit(all, concurrency, async ({ policy, b }): Promise<BatchRow> => {
      const name = batchNameOf(b);
      const detail: SspItem | undefined = await ssp.batch(core, policy, name);
      const values = detail?.ssp_values ?? b.ssp_values;
      return {
        policy,
        batch: name,
        status: text(b.status),
        file_id: text(b.file_id),
        file_name: text(b.file_name),
        rows: Array.isArray(values) ? values.length : null,
        effective_start_date: text(b.effective_start_date),
        effective_end_date: text(b.effective_end_date),
        updated_by: text(b.updated_by),
        updated_at: typeof b.updated_at === "number" ? time(b.updated_at) : null,
      };
    });
    if (flags.format === "json") {
      out.json({ batches: rows });
      return 0;
    }
    if (!rows.length) {
      out.out(wanted === undefined ? "No SSP policy in the service has batches." : `${wanted} has no batches.`);
      return 0;
    }
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
    return 0;
  });
}
