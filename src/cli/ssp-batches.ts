import type { ApiCore } from "../api/core.js";
import { ssp } from "../kinds/ssp/service.js";
import { nearest } from "../did-you-mean.js";
import { shellQuote } from "../shell-quote.js";
import { UserError } from "../errors.js";
import { mapLimit } from "../map-limit.js";
import type { SspItem } from "../schema/generated/api.js";
import { batchNameOf, byCodePoint } from "../shared/address.js";
import { time } from "../report/table.js";
import { pickView } from "../report/view.js";
import { sspBatchesViews, type BatchRow } from "../report/views/ssp.js";
import { concurrencyOf } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";
import { withClient } from "./service-command.js";

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** revsync ssp batches [POLICY]: every batch of one SSP policy, or of all, with its status, file id,
 *  rows and dates: what `ssp download` needs, and what a policy file's batches: can name. Read-only. */
export async function runSspBatches(flags: GlobalFlags, out: Output, args: string[]): Promise<number> {
  const view = await pickView(sspBatchesViews, flags.format);
  const wanted = args[0];
  return withClient(flags, out, async (core) => {
    const names = (await ssp.list(core)).map((e) => e.compliance_name ?? "").filter((n) => n !== "");
    if (wanted !== undefined && !names.includes(wanted)) {
      const near = nearest(wanted, names);
      throw new UserError(
        `no SSP policy named ${JSON.stringify(wanted)} in the service (names are exact and case-sensitive)${near.length ? `; did you mean revsync ssp batches ${near.map((n) => shellQuote(n)).join(" or ")}?` : ""}`,
      );
    }
    const chosen = (wanted === undefined ? names : [wanted]).sort(byCodePoint);
    view({ policy: wanted, rows: await batchRows(core, chosen, concurrencyOf(flags)) }, out);
    return 0;
  });
}

/** The batches of these policies, by policy and batch name, each with its values counted. The list
 *  leaves batches out (docs/decisions.md, "Which reads"): each policy's details give them, each batch
 *  its values. */
async function batchRows(core: ApiCore, policies: string[], concurrency: number): Promise<BatchRow[]> {
  const perPolicy = await mapLimit(policies, concurrency, async (policy) => {
    const batches = (await ssp.get(core, policy))?.compliance_spec?.[0]?.batches ?? [];
    return batches.map((b) => ({ policy, b }));
  });
  const all = perPolicy.flat().sort((x, y) => byCodePoint(x.policy, y.policy) || byCodePoint(batchNameOf(x.b), batchNameOf(y.b)));
  return mapLimit(all, concurrency, async ({ policy, b }) => {
    const detail: SspItem | undefined = await ssp.batch(core, policy, batchNameOf(b));
    return batchRow(policy, b, detail?.ssp_values ?? b.ssp_values);
  });
}

function batchRow(policy: string, b: SspItem, values: unknown): BatchRow {
  return {
    policy,
    batch: batchNameOf(b),
    status: text(b.status),
    file_id: text(b.file_id),
    file_name: text(b.file_name),
    rows: Array.isArray(values) ? values.length : null,
    effective_start_date: text(b.effective_start_date),
    effective_end_date: text(b.effective_end_date),
    updated_by: text(b.updated_by),
    updated_at: typeof b.updated_at === "number" ? time(b.updated_at) : null,
  };
}
