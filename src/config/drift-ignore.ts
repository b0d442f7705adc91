/** What a drift.ignore rule of revsync.yaml means on its own: the days it is in force, and the warnings
 *  validate gives for a rule that will not do what it says. Applying rules to a drift report is the
 *  plan layer's (src/plan/ignore.ts). */
import { relative } from "node:path";
import type { IgnoreRule } from "../schema/generated/policy.js";
import { globMatch } from "../shared/address.js";
import type { Diagnostic } from "./diagnostics.js";
import type { Repo } from "./repo.js";
import { at } from "./schema-diagnostics.js";

/** The drift classes that are field differences: the only ones a rule with `fields` covers. */
export const FIELD_CLASSES: readonly string[] = ["changed", "batch_status", "batch_values"];

/** Today (UTC), YYYY-MM-DD: the day drift and validate compare rules' until dates with. */
export const todayUtc = (): string => new Date().toISOString().slice(0, 10);

/** Whether a rule still applies on `today` (YYYY-MM-DD): up to and including its until day. */
export const inForce = (rule: IgnoreRule, today: string): boolean => !rule.until || today <= rule.until;

/** drift.ignore rules that will not do what they say: one that matches no address in git (`known`, every
 *  address git's policy files name), one past its until day (it applies no more). Warnings: the repo stays
 *  valid. */
export function ignoreRuleWarnings(repo: Repo, known: readonly string[], today: string): Diagnostic[] {
  const file = relative(repo.cwd, repo.configFile) || "revsync.yaml";
  const out: Diagnostic[] = [];
  (repo.config.drift?.ignore ?? []).forEach((rule, i) => {
    if (!inForce(rule, today)) {
      out.push({
        file,
        ...at(repo.configDoc, `/drift/ignore/${i}/until`),
        severity: "warning",
        rule: "drift-ignore",
        message: `drift.ignore.${i} (${rule.address}) expired on ${rule.until}: it applies no more, and drift reports what it covered`,
      });
    }
    // A rule with fields covers field differences only: limited to whole-entry classes, it covers nothing.
    if (rule.fields && rule.classes?.length && rule.classes.every((c) => !FIELD_CLASSES.includes(c))) {
      out.push({
        file,
        ...at(repo.configDoc, `/drift/ignore/${i}/fields`),
        severity: "warning",
        rule: "drift-ignore",
        message: `drift.ignore.${i} (${rule.address}) matches nothing: a rule with fields covers field differences (${FIELD_CLASSES.join(", ")}), never a whole ${rule.classes.join(" or ")} entry; leave out fields to cover those`,
      });
    }
    // A rule for unmanaged drift names, by definition, what git does not hold.
    const aboutUnmanaged = !!rule.classes && rule.classes.every((c) => c === "unmanaged" || c === "unmanaged_batch");
    if (!aboutUnmanaged && !known.some((a) => globMatch(rule.address, a))) {
      out.push({
        file,
        ...at(repo.configDoc, `/drift/ignore/${i}/address`),
        severity: "warning",
        rule: "drift-ignore",
        message: `drift.ignore.${i}: ${JSON.stringify(rule.address)} matches no address in git`,
      });
    }
  });
  return out;
}
