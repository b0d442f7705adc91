import type { IgnoreRule } from "../schema/generated/policy.js";
import type { DriftItem, DriftReport } from "./model.js";

/** A drift difference the team accepted: what it was, and the rule that covers it. */
export interface IgnoredItem extends DriftItem {
  reason: string;
  rule: string;
}

/** An address pattern: `*` matches any run of characters; the rest is literal and case-sensitive. */
export function globMatch(pattern: string, address: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  return re.test(address);
}

/** Today (UTC), YYYY-MM-DD: the day drift and validate compare rules' until dates with. */
export const todayUtc = (): string => new Date().toISOString().slice(0, 10);

/** Whether a rule still applies on `today` (YYYY-MM-DD): up to and including its until day. */
export const inForce = (rule: IgnoreRule, today: string): boolean => !rule.until || today <= rule.until;

/** The field a difference concerns: its top-level name (values[...] for a batch's values). */
const fieldOf = (path: string): string => path.split(/[.[]/)[0] ?? path;

/** Accepted drift taken out of a report: a rule in force whose address (and classes, when given)
 *  match covers the item, or only its listed fields. What is covered moves to `ignored`, with the
 *  reason; it never counts in the exit code. Pure: `today` is given. */
export function applyIgnore(report: DriftReport, rules: readonly IgnoreRule[], today: string): DriftReport & { ignored: IgnoredItem[] } {
  const active = rules.filter((r) => inForce(r, today));
  const drift: DriftItem[] = [];
  const ignored: IgnoredItem[] = [];
  for (const item of report.drift) {
    const rule = active.find((r) => globMatch(r.address, item.address) && (!r.classes || r.classes.includes(item.class)));
    if (!rule) {
      drift.push(item);
      continue;
    }
    const tag = { reason: rule.reason, rule: rule.address };
    if (!rule.fields || !item.diff.length) {
      ignored.push({ ...item, ...tag });
      continue;
    }
    const covered = item.diff.filter((d) => rule.fields?.includes(fieldOf(d.path)));
    const rest = item.diff.filter((d) => !rule.fields?.includes(fieldOf(d.path)));
    if (covered.length) ignored.push({ ...item, diff: covered, message: `${covered.map((d) => d.path).join(", ")} differ from git`, ...tag });
    if (rest.length) drift.push({ ...item, diff: rest, message: `${rest.length} field(s) differ from git: ${rest.map((d) => d.path).join(", ")}` });
  }
  const summary = Object.fromEntries(Object.keys(report.summary).map((k) => [k, drift.filter((d) => d.class === k).length])) as DriftReport["summary"];
  return { ...report, drift, summary, ignored };
}
