/** Promotion of an SSP policy's writes: the source environment must hold what git asks of it there (the
 *  same files, its own ${VAR}s). A create: the policy, in every field git sets, and each batch the create
 *  uploads, with git's dates and values. A review or approve: the batch of that name, with git's dates and
 *  values (by their checksum), at that status or beyond (a batch approved in the source has been reviewed
 *  there). Both environments must read the policy from the same document, a batch with the same dates.
 *  Pure. */
import type { Change } from "../../shared/entries.js";
import { normalizeSspFields } from "../../shared/normalize.js";
import { otherOrigin, type SourceFinding } from "../../shared/promotion.js";
import type { Unknown } from "../../shared/unknown.js";
import { plural } from "../../words.js";
import { batchDatesDiff, liveBatch, shownValuesDiff, sspFieldDiff } from "./compare.js";
import type { DesiredBatch, DesiredSsp } from "./files.js";
import { batchPayload } from "./payload.js";
import { sspAddress, type LivePolicy, type SspLive } from "./read.js";

/** How far each status is along a batch's way: the source must have got at least as far. */
const REACHED: Record<string, number> = { "file uploaded": 0, reviewed: 1, approved: 2 };

const empty = (): SourceFinding => ({ compared: {}, notYet: [], differs: [], notShown: [] });

/** The fields the source does not show, by the unknown notes of one address. */
const unshown = (unknown: Unknown): string[] => [...unknown.values()].flatMap((list) => list.map((u) => u.field));

/** A batch of the source against git's: its dates, its values (what it holds, by their checksum). */
function batchHolds(b: DesiredBatch, lp: LivePolicy, live: SspLive, policy: string, out: SourceFinding, prefix = ""): Record<string, unknown> | undefined {
  const lb = liveBatch(lp, b.name);
  if (!lb) {
    out.notYet.push(`no batch ${JSON.stringify(b.name)} of ${JSON.stringify(policy)} (upload it there first)`);
    return undefined;
  }
  const addr = sspAddress.batch(policy, b.name);
  const unknown: Unknown = new Map();
  for (const x of batchDatesDiff(b, lb, addr, unknown)) out.differs.push({ field: `${prefix}${x.path}`, source: x.before, git: x.after });
  const held = live.values.get(`${policy}/${b.name}`);
  const compared: Record<string, unknown> = { status: lb.status ?? null };
  if (!b.values || !held) {
    out.differs.push({
      field: `${prefix}values`,
      source: held ? "values revsync could not compare" : "values not read",
      git: b.values ? b.values.file : "no values file",
    });
    return compared;
  }
  const vd = shownValuesDiff(b.values, held, addr, "plan", unknown);
  out.notShown.push(...unshown(unknown).map((f) => `${prefix}${f}`));
  if (vd.shown === "none") out.differs.push({ field: `${prefix}values`, source: "no values shown", git: b.valuesShown ?? b.values.file });
  else if (vd.split)
    out.differs.push({ field: `${prefix}values`, source: `two sets of values that differ in ${plural(vd.split, "row")}`, git: b.valuesShown ?? b.values.file });
  else if (vd.total)
    out.differs.push({ field: `${prefix}values`, source: `values that differ in ${plural(vd.total, "row")}`, git: b.valuesShown ?? b.values.file });
  compared.values_checksum = vd.checksum ?? null;
  return compared;
}

/** A create: the policy's fields, then each batch it uploads. */
function createHolds(c: Change, d: DesiredSsp, live: SspLive): SourceFinding {
  const out = empty();
  const lp = live.ssp.get(d.name);
  if (!lp) return { ...out, notYet: [`no SSP policy ${JSON.stringify(d.name)}`] };
  if (live.copies?.has(d.name))
    return { ...out, differs: [{ field: "name", source: `${plural(live.copies.get(d.name)?.length ?? 2, "policy", "policies")} of this name`, git: d.name }] };
  const unknown: Unknown = new Map();
  for (const x of sspFieldDiff(d, lp, unknown)) out.differs.push({ field: x.path, source: x.before ?? null, git: x.after ?? null });
  out.notShown.push(...unshown(unknown));
  out.compared = normalizeSspFields(
    lp.item,
    Object.keys(d.spec).filter((k) => !out.notShown.includes(k)),
  );
  const sent = ((c.after as { batches?: { batch_name: string }[] } | null)?.batches ?? []).map((b) => b.batch_name);
  const batches: Record<string, unknown> = {};
  for (const name of sent) {
    const b = d.batches.find((x) => x.name === name);
    if (!b) out.differs.push({ field: `batches.${name}`, source: "a batch git does not list there", git: name });
    else batches[name] = batchHolds(b, lp, live, d.name, out, `batches.${name}.`) ?? null;
  }
  if (sent.length) out.compared.batches = batches;
  return out;
}

/** A review or approve: the batch, at its status or beyond, with git's values. */
function batchStepHolds(c: Change, d: DesiredSsp, live: SspLive): SourceFinding {
  const out = empty();
  const p = batchPayload(c);
  const b = d.batches.find((x) => x.name === p?.batch);
  if (!p || !b) return { ...out, leftOut: true };
  const lp = live.ssp.get(d.name);
  if (!lp) return { ...out, notYet: [`no SSP policy ${JSON.stringify(d.name)}`] };
  const compared = batchHolds(b, lp, live, d.name, out);
  if (!compared) return out;
  out.compared = compared;
  const need = (c.after as { status?: string } | null)?.status ?? "";
  const has = typeof compared.status === "string" ? compared.status : "";
  if (REACHED[has] === undefined) out.differs.push({ field: "status", source: compared.status, git: need });
  else if (has !== need && (REACHED[has] ?? 0) < (REACHED[need] ?? 0)) out.notYet.push(`batch ${JSON.stringify(b.name)} is ${has} there, not yet ${need}`);
  // The values this write moves forward (the checksum it is bound to) are the values the source holds.
  if (p.values_checksum && compared.values_checksum && p.values_checksum !== compared.values_checksum)
    out.differs.push({ field: "values_checksum", source: compared.values_checksum, git: p.values_checksum });
  return out;
}

export function sspPromotion(c: Change, desired: readonly DesiredSsp[], live: SspLive, here: readonly DesiredSsp[]): SourceFinding {
  const name = c.action === "create" ? c.address.slice(sspAddress.policy("").length) : batchPayload(c)?.policy;
  const d = desired.find((x) => x.name === name);
  if (!d) return { ...empty(), leftOut: true };
  const ours = here.find((x) => x.name === name);
  const apart = ours && (otherOrigin(ours.source, d.source) ?? otherBatch(c, ours, d));
  if (apart) return apart;
  return c.action === "create" ? createHolds(c, d, live) : batchStepHolds(c, d, live);
}

/** A batch this environment's files define with other dates than the source's (two items of one name,
 *  each scoped to one environment): the source tried another batch. Undefined: the same dates. */
function otherBatch(c: Change, ours: DesiredSsp, theirs: DesiredSsp): SourceFinding | undefined {
  const name = batchPayload(c)?.batch;
  if (c.action === "create" || name === undefined) return undefined;
  const [a, b] = [ours, theirs].map((d) => d.batches.find((x) => x.name === name));
  if (!a || !b) return undefined;
  const out = empty();
  for (const k of ["effective_start_date", "effective_end_date"] as const)
    if ((a[k] ?? null) !== (b[k] ?? null)) out.differs.push({ field: k, source: b[k] ?? null, git: a[k] ?? null });
  return out.differs.length ? out : undefined;
}
