import { FIELD_CLASSES as FIELD_DIFFERENCE_CLASSES, inForce } from "../config/drift-ignore.js";
import type { IgnoreRule } from "../schema/generated/policy.js";
import { globMatch } from "../shared/address.js";
import { plural } from "../words.js";
import type { DriftItem, DriftReport } from "./model.js";

/** The drift classes whose items are field differences (a `fields` rule may cover them); the others
 *  (missing, unmanaged, unmanaged_batch) are whole items only a rule without `fields` covers. */
const FIELD_CLASSES = new Set<string>(FIELD_DIFFERENCE_CLASSES);

/** A drift difference the team accepted: what it was, and the rule that covers it. */
export interface IgnoredItem extends DriftItem {
  reason: string;
  rule: string;
}

/** The field a difference concerns: its top-level name (values[...] for a batch's values). */
const fieldOf = (path: string): string => path.split(/[.[]/)[0] ?? path;

/** Accepted drift taken out of a report. Every rule in force whose address (and classes, when given)
 *  match applies: a rule without `fields` covers the whole item, one with `fields` only the field
 *  differences in those fields of an item that has them (never a missing or unmanaged item). An item is ignored when its rules cover all its differences; what they cover moves to
 *  `ignored` with the rules' reasons, the rest stays drift. Ignored items never count in the exit code.
 *  Pure: `today` is given. */
export function applyIgnore(report: DriftReport, rules: readonly IgnoreRule[], today: string): DriftReport & { ignored: IgnoredItem[] } {
  const active = rules.filter((r) => inForce(r, today));
  const drift: DriftItem[] = [];
  const ignored: IgnoredItem[] = [];
  const tag = (used: IgnoreRule[]): { reason: string; rule: string } => ({
    reason: [...new Set(used.map((r) => r.reason))].join("; "),
    rule: [...new Set(used.map((r) => r.address))].join(", "),
  });
  for (const item of report.drift) {
    const matching = active.filter((r) => globMatch(r.address, item.address) && (!r.classes || r.classes.includes(item.class)));
    if (!matching.length) {
      drift.push(item);
      continue;
    }
    const whole = matching.find((r) => !r.fields);
    if (whole) {
      ignored.push({ ...item, ...tag([whole]) });
      continue;
    }
    // Only rules with `fields` match: they cover field differences, never a whole item (a policy
    // missing from the service, one not in git): such an item stays drift.
    if (!item.diff.length || !FIELD_CLASSES.has(item.class)) {
      drift.push(item);
      continue;
    }
    const rulesOf = (d: DriftItem["diff"][number]): IgnoreRule[] => matching.filter((r) => r.fields?.includes(fieldOf(d.path)));
    const covered = item.diff.filter((d) => rulesOf(d).length);
    const rest = item.diff.filter((d) => !rulesOf(d).length);
    if (covered.length) {
      const fields = [...new Set(covered.map((d) => d.path))];
      ignored.push({
        ...item,
        diff: covered,
        message: `${fields.join(", ")} ${fields.length === 1 ? "differs" : "differ"} from git`,
        ...tag(matching.filter((r) => covered.some((d) => r.fields?.includes(fieldOf(d.path))))),
      });
    }
    if (rest.length) {
      drift.push({
        ...item,
        diff: rest,
        message: `${plural(rest.length, "field")} ${rest.length === 1 ? "differs" : "differ"} from git: ${rest.map((d) => d.path).join(", ")}`,
      });
    }
  }
  const summary = Object.fromEntries(Object.keys(report.summary).map((k) => [k, drift.filter((d) => d.class === k).length])) as DriftReport["summary"];
  return { ...report, drift, summary, ignored };
}
