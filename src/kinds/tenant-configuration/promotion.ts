/** Promotion of a tenant configuration's update: the source environment must hold, in each field the
 *  update writes, what git asks of it there (the same file, the source's own ${VAR}s). Pure. */
import { sameJson } from "../../canonical-json.js";
import type { TenantConfigurationList } from "../../schema/generated/api.js";
import type { Change } from "../../shared/entries.js";
import { fieldDiff, pick } from "../../shared/normalize.js";
import type { SourceFinding } from "../../shared/promotion.js";
import { tenantAddress } from "./compare.js";
import type { DesiredTenantConfig } from "./files.js";

/** The fields of git's spec a change writes: those its diff names (a list's item counts as its field). */
const writtenFields = (c: Change): string[] =>
  Object.keys((c.after ?? {}) as Record<string, unknown>).filter((k) =>
    c.diff.some((x) => x.path === k || x.path.startsWith(`${k}.`) || x.path.startsWith(`${k}[`)),
  );

export function tenantPromotion(c: Change, desired: readonly DesiredTenantConfig[], live: TenantConfigurationList): SourceFinding {
  const name = c.address.slice(tenantAddress("").length);
  const d = desired.find((x) => x.name === name);
  if (!d) return { compared: {}, notYet: [], differs: [], notShown: [], leftOut: true };
  const item = live.find((e) => e.compliance_name === name)?.compliance_spec?.[0] as Record<string, unknown> | undefined;
  if (!item) return { compared: {}, notYet: [`no tenant configuration ${JSON.stringify(name)}`], differs: [], notShown: [] };
  const spec = d.spec as Record<string, unknown>;
  const fields = writtenFields(c);
  const here = (c.before ?? {}) as Record<string, unknown>;
  const out: SourceFinding = { compared: pick(item, fields), notYet: [], differs: [], notShown: [] };
  for (const k of fields) {
    const held = item[k] ?? null;
    // A field the source does not show (null) is not compared, as plan compares none: said beside it.
    if (held === null) out.notShown.push(k);
    else if (!fieldDiff(pick(item, [k]), pick(spec, [k])).length) continue;
    // Still what this environment holds now: the change has not reached the source.
    else if (sameJson(held, here[k])) out.notYet.push(`${k} is still ${JSON.stringify(held)}`);
    else out.differs.push({ field: k, source: held, git: spec[k] ?? null });
  }
  return out;
}
