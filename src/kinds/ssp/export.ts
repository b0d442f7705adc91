/** The service's SSP policies as policy files: each policy's fields, its batches with their dates, and
 *  their values as files beside it. Pure, so that plan right after export finds no change. */
import { posix } from "node:path";
import { BATCH_STATUSES } from "../../api/service-choices.js";
import { unsafeName } from "../../config/rules.js";
import { checkValuesText } from "../../config/values.js";
import type { SspItem } from "../../schema/generated/api.js";
import { batchNameOf, byCodePoint, slug, targeted, touchedBy, valuesFileFor } from "../../shared/address.js";
import { formulaCells, valuesFromCsv, valuesToCsv } from "../../ssp/csv.js";
import { fitSpec, heldTwiceRefusal, newFile, type ExportedBatch, type ExportedFile } from "../export-file.js";
import { batchesHeldTwice } from "./held-twice.js";
import type { ExportContext } from "../kind.js";
import { BATCH_DATES, serviceDate, SSP_EXPORT_FIELDS } from "./compare.js";
import { sspAddress, type ShownValues, type SspLive } from "./read.js";
import { valuesChecksum } from "./values.js";

/** The batch statuses a policy file can hold (revsync moves a batch forward through them). */
const LISTED_STATUSES = new Set<string>(BATCH_STATUSES);

const show = (v: unknown): string => JSON.stringify(v) ?? "undefined";

/** Why a batch cannot be listed in a policy file (its name, or a status no file holds), said in the
 *  file and in what export prints; undefined when it can. */
function unlisted(f: ExportedFile, policy: string, b: SspItem): boolean {
  const batchName = batchNameOf(b);
  const badName = unsafeName(batchName);
  if (badName) {
    f.batchComments.push(` batch ${show(batchName)}: not listed, its name cannot be used in a policy file (${badName})`);
    f.leftOut.push(`${f.address}: batch ${show(batchName)} (its name cannot be used in a policy file: ${badName})`);
    return true;
  }
  if (b.status && LISTED_STATUSES.has(b.status)) return false;
  f.batchComments.push(
    ` batch ${show(batchName)}: not listed, its status in the service is ${show(b.status ?? null)}; a policy file lists file uploaded, reviewed or approved batches: add it with the status it should reach`,
  );
  f.leftOut.push(`${sspAddress.batch(policy, batchName)} (status ${show(b.status ?? null)})`);
  return true;
}

/** The text of a batch's values file: the uploaded file as it is, where the batch's own values (what
 *  pricing uses) are the same or not shown; the batch's own values where it names no file, or where they
 *  differ from its file (`split`: the service then holds two sets of values, which the file's comment and
 *  plan say). Undefined when the service shows neither. */
function valuesText(held: ShownValues): { text: string; split: boolean } | undefined {
  const { file, values } = held;
  if (!values) return file && { text: file.csv, split: false };
  if (file && valuesChecksum(file) === valuesChecksum(values)) return { text: file.csv, split: false };
  return { text: valuesToCsv(values), split: !!file };
}

/** The values a batch holds, kept in git beside the policy file: what a reviewer reads before a review or
 *  approve, and what plan compares with the service. Left out when they do not pass revsync's checks. */
function batchValues(f: ExportedFile, entry: ExportedBatch, policy: string, live: SspLive, unique: ExportContext["unique"]): void {
  const held = live.values.get(`${policy}/${entry.name}`);
  const shown = held && valuesText(held);
  if (!shown) return;
  // The service's file as it is, unless a cell of it would run as a formula in a spreadsheet: then its
  // values as revsync writes every CSV (csvCell), which the values reader takes back to the same text.
  const text = formulaCells(shown.text) ? valuesToCsv(valuesFromCsv(shown.text)) : shown.text;
  const file = unique(posix.join(posix.dirname(f.file), valuesFileFor(policy, entry.name)));
  const problem = checkValuesText(text, file).diagnostics[0];
  if (problem) {
    f.batchComments.push(
      ` batch ${show(entry.name)}: values left out, the service's values do not pass revsync's checks (line ${problem.line}: ${problem.message}); git cannot review or approve them`,
    );
    f.leftOut.push(`${sspAddress.batch(policy, entry.name)}: values (line ${problem.line}: ${problem.message})`);
    return;
  }
  if (shown.split) {
    f.batchComments.push(
      ` batch ${show(entry.name)}: the service holds two sets of values: its uploaded file differs from its own values (ssp_values, what pricing uses); the values file holds the batch's own, and plan shows the difference`,
    );
    f.leftOut.push(`${sspAddress.batch(policy, entry.name)}: its uploaded file (it differs from the batch's own values, which were written)`);
  }
  entry.values = posix.relative(posix.dirname(f.file), file);
  f.valuesFiles.push({ file, text });
  f.batchValues.set(entry.name, text);
}

/** A batch's dates, as plan compares them: written where the service shows a date; text that is no date
 *  is named where it would stand. */
function batchDates(f: ExportedFile, entry: ExportedBatch, policy: string, b: SspItem): void {
  for (const k of BATCH_DATES) {
    const held = serviceDate((b as unknown as Record<string, unknown>)[k]);
    if ("date" in held) {
      entry[k] = held.date;
      continue;
    }
    f.batchDatesUnknown.set(entry.name, [...(f.batchDatesUnknown.get(entry.name) ?? []), { field: k, ...held.unknown }]);
    if (held.unknown.unreadable === undefined) continue;
    f.batchComments.push(` batch ${show(entry.name)}: ${k} left out, the service shows ${show(held.unknown.unreadable)}, which is no date`);
    f.leftOut.push(`${sspAddress.batch(policy, entry.name)}: ${k} (the service shows ${show(held.unknown.unreadable)}, not comparable)`);
  }
}

/** The service's SSP policies as policy files (`schema`: the policy file's). */
export function exportSsp(live: SspLive, ctx: ExportContext, schema: ExportedFile["schema"]): ExportedFile[] {
  const files: ExportedFile[] = [];
  for (const [name, lp] of live.ssp) {
    const addr = sspAddress.policy(name);
    // A batch's target exports its policy's file too, which lists it (only the batch, in a file git holds).
    if (!touchedBy(addr, ctx.targets)) continue;
    const copies = live.copies?.get(name);
    if (copies) {
      for (const c of copies) ctx.refused.push(heldTwiceRefusal(`SSP policy ${show(name)} (compliance_id ${show(c.envelope.compliance_id ?? null)})`));
      continue;
    }
    const twice = batchesHeldTwice(lp.batches ?? []);
    const bad = unsafeName(name);
    if (bad) {
      ctx.unnamed.push(`SSP policy ${show(name)} (its name cannot be used in a policy file: ${bad})`);
      continue;
    }
    const f = newFile(ctx.unique(`ssp/${slug(name)}.yaml`), addr, schema, "SspPolicy", name, (batch) => sspAddress.batch(name, batch));
    // A field the service does not show keeps git's value in a file git holds.
    fitSpec(f, lp.item as unknown as Record<string, unknown>, SSP_EXPORT_FIELDS, true);
    const batches: ExportedBatch[] = [];
    // In name order, whatever order the service lists them in: the same files from the same state.
    for (const b of [...(lp.batches ?? [])].sort((x, y) => byCodePoint(batchNameOf(x), batchNameOf(y)))) {
      if (!targeted(sspAddress.batch(name, batchNameOf(b)), ctx.targets)) continue;
      if (twice.has(batchNameOf(b))) {
        ctx.refused.push(
          heldTwiceRefusal(`batch ${show(batchNameOf(b))} of SSP policy ${show(name)} (file_id ${show(b.file_id ?? null)}, status ${show(b.status ?? null)})`),
        );
        continue;
      }
      if (unlisted(f, name, b)) continue;
      const entry: ExportedBatch = { name: batchNameOf(b), status: b.status ?? "" };
      batchValues(f, entry, name, live, ctx.unique);
      batchDates(f, entry, name, b);
      batches.push(entry);
    }
    if (batches.length) f.value.batches = batches;
    if (!targeted(addr, ctx.targets)) f.batchesOnly = true;
    files.push(f);
  }
  return files;
}
