/** A saved plan's SSP changes against what git asks for now: a create against the policy git's file
 *  describes (every field of the create body, and each batch that goes up with it by its file, dates and
 *  the checksum of its values), a review or approve against the batch's status in git and the checksum of
 *  git's values file. docs/decisions.md, "A saved plan is held to git". */
import { sameJson } from "../../canonical-json.js";
import type { BatchStatus } from "../../api/service-choices.js";
import type { SspCreateBatch } from "../../schema/generated/api.js";
import type { Change } from "../../shared/entries.js";
import { notGits, NOT_IN_GIT_NOW, show } from "../words.js";
import { createBody, createItem } from "./create-body.js";
import type { DesiredSsp } from "./files.js";
import { batchPayload, createdItem, createPayload, type BatchPayload, type CreatePayload } from "./payload.js";
import { valuesChecksum } from "./values.js";

/** How far along its lifecycle a batch status is: a review needs git to ask for reviewed or more. */
const STEP: Record<BatchStatus, number> = { "file uploaded": 0, reviewed: 1, approved: 2 };

/** A batch a create uploads, as compared: its file, dates and values by their checksum. */
const uploaded = (b: SspCreateBatch): Record<string, unknown> => ({
  file_name: b.file_name,
  effective_start_date: b.effective_start_date,
  effective_end_date: b.effective_end_date,
  values_checksum: valuesChecksum(b.ssp_values),
});

/** The batches a create uploads against those git's policy would upload. */
function batchesAgainstGit(sent: readonly SspCreateBatch[], want: readonly SspCreateBatch[]): string[] {
  const out: string[] = [];
  const byName = new Map(sent.map((b) => [b.batch_name, b]));
  for (const w of want) {
    const s = byName.get(w.batch_name);
    byName.delete(w.batch_name);
    if (!s) {
      out.push(`batch ${w.batch_name}: git uploads it with the policy, the plan does not`);
      continue;
    }
    const [a, b] = [uploaded(s), uploaded(w)];
    for (const k of Object.keys(b)) if (!sameJson(a[k], b[k])) out.push(`batch ${w.batch_name}: ${notGits(k, a[k], b[k])}`);
  }
  for (const name of byName.keys()) out.push(`batch ${name}: the plan uploads it with the policy, git does not`);
  return out;
}

/** A create against git's policy: the body git's file makes now, field by field, and its batches. */
function createAgainstGit(p: CreatePayload, d: DesiredSsp): string[] {
  if (d.spec.method === "calculator") return ["git asks for a calculator policy, which the interface cannot create"];
  const made = createItem(d);
  if (!made.item) return [`git's policy lacks ${made.missing.join(", ")}, which its create needs`];
  const { batches: want = [], ...wantItem } = createBody(d, made.item).body.compliance_spec[0] as ReturnType<typeof createdItem>;
  const { batches: sent = [], ...sentItem } = createdItem(p);
  const out: string[] = [];
  const fields = new Set([...Object.keys(wantItem), ...Object.keys(sentItem)]);
  const w = wantItem as Record<string, unknown>;
  const s = sentItem as Record<string, unknown>;
  for (const k of fields) if (!sameJson(s[k], w[k])) out.push(notGits(k, s[k], w[k]));
  if (p.hierarchy_no !== made.item.hierarchy_no) out.push(notGits("hierarchy_no", p.hierarchy_no, made.item.hierarchy_no));
  return [...out, ...batchesAgainstGit(sent, want)];
}

/** A review or approve against git's batch: the status git asks for reaches the step, and the values the
 *  plan moves forward are git's (by their checksum). */
function batchAgainstGit(c: Change, p: BatchPayload, d: DesiredSsp): string[] {
  const b = d.batches.find((x) => x.name === p.batch);
  if (!b) return [`git no longer lists the batch ${p.batch} of ${d.name}`];
  const out: string[] = [];
  const need = c.action === "approve" ? STEP.approved : STEP.reviewed;
  if (STEP[b.status] < need) out.push(`status: the plan ${c.action}s the batch, git asks for ${show(b.status)}`);
  const gits = b.values ? valuesChecksum(b.values.rows) : null;
  const moved = `values: the plan moves values ${p.values_checksum ?? "of no checksum"} forward`;
  if (gits === null) out.push(`${moved}, git holds no values file for the batch`);
  else if (p.values_checksum !== gits) out.push(`${moved}, git's ${b.valuesShown ?? b.values?.file} holds ${gits}`);
  return out;
}

/** An SSP change of a saved plan against git's policies now, in words (none when it writes what git asks). */
export function sspGitProblems(c: Change, desired: readonly DesiredSsp[]): string[] {
  const create = createPayload(c);
  const batch = batchPayload(c);
  const name = create?.body.compliance_name ?? batch?.policy;
  const d = name === undefined ? undefined : desired.find((x) => x.name === name);
  if (!d) return [NOT_IN_GIT_NOW];
  if (create) return createAgainstGit(create, d);
  if (batch) return batchAgainstGit(c, batch, d);
  return [`a ${c.payload?.kind} payload`];
}
