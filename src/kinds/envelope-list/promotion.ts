/** Promotion of an envelope list's update: the source environment must hold, in each field the
 *  update writes, what git asks of it there (the same file, the source's own ${VAR}s); a field it shows
 *  no value for holds nothing anyone saw there, so the write is blocked. Pure. */
import { sameJson } from "../../canonical-json.js";
import type { Change } from "../../shared/entries.js";
import { fieldDiff, pick } from "../../shared/normalize.js";
import { otherOrigin, type SourceFinding } from "../../shared/promotion.js";
import { addressOf, type DesiredEnvelope, type Envelope, type EnvelopeList } from "./list.js";

/** The fields of git's spec a change writes: those its diff names (a list's item counts as its field). */
const writtenFields = (c: Change): string[] =>
  Object.keys((c.after ?? {}) as Record<string, unknown>).filter((k) =>
    c.diff.some((x) => x.path === k || x.path.startsWith(`${k}.`) || x.path.startsWith(`${k}[`)),
  );

export function envelopePromotion(
  l: EnvelopeList,
  c: Change,
  desired: readonly DesiredEnvelope[],
  live: readonly Envelope[],
  here: readonly DesiredEnvelope[],
): SourceFinding {
  const name = c.address.slice(addressOf(l, "").length);
  const d = desired.find((x) => x.name === name);
  if (!d) return { compared: {}, notYet: [], differs: [], notShown: [], leftOut: true };
  const ours = here.find((x) => x.name === name);
  const apart = ours && otherOrigin(ours.source, d.source);
  if (apart) return apart;
  const item = live.find((e) => e.compliance_name === name)?.compliance_spec?.[0] as Record<string, unknown> | undefined;
  if (!item) return { compared: {}, notYet: [`no ${l.what} ${JSON.stringify(name)}`], differs: [], notShown: [] };
  const spec = d.spec as Record<string, unknown>;
  const fields = writtenFields(c);
  const now = (c.before ?? {}) as Record<string, unknown>;
  const out: SourceFinding = { compared: pick(item, fields), notYet: [], differs: [], notShown: [] };
  for (const k of fields) {
    const held = item[k] ?? null;
    // A field the source does not show (null) cannot be known to hold git's value there, while this
    // environment shows what the write changes: the write was never seen in the source, so it waits.
    if (held === null) {
      out.notShown.push(k);
      out.notYet.push(`${k} is not shown there (null), so revsync cannot tell it holds git's value`);
    } else if (!fieldDiff(pick(item, [k]), pick(spec, [k])).length) continue;
    // Still what this environment holds now: the change has not reached the source.
    else if (sameJson(held, now[k])) out.notYet.push(`${k} is still ${JSON.stringify(held)}`);
    else out.differs.push({ field: k, source: held, git: spec[k] ?? null });
  }
  return out;
}
