import type { ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import { ACTIONS, actionWords, legacyPlanChecksum, PLAN_FORMAT_VERSION, planChecksum, summarize, type Action, type Plan } from "../plan/model.js";
import type { Registry } from "../kinds/kind.js";
import { planValidator } from "../plan/schema.js";
import { describeAjvErrors } from "../schema/ajv.js";
import { FileRefused, READ_CAPS, readUserFile } from "../user-files.js";

/** A saved plan, checked before anything is sent: JSON, a format this revsync reads, the plan schema (as
 *  the run's kinds make it: src/plan/schema.ts), its checksum (a plan edited by hand or corrupted is
 *  refused; one of an older revsync's checksum is refused with words that say so) and its summary,
 *  counted again from its changes. */
/** `forApply`: the words say that nothing was applied; `show` applies nothing by definition, so its
 *  errors say what apply would do with the file instead. */
export function readPlanFile(path: string, kinds: Registry, forApply = true): Plan {
  const outcome = forApply ? "so nothing was applied" : "so apply would refuse it";
  let raw: unknown;
  try {
    raw = JSON.parse(readUserFile(path, READ_CAPS.json));
  } catch (e) {
    if (e instanceof FileRefused) throw new UserError(`cannot read the plan ${path}: ${e.why}`);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new UserError(`cannot read the plan ${path}: no such file`);
    if (code === "EISDIR") throw new UserError(`cannot read the plan ${path}: it is a folder`);
    if (code) throw new UserError(`cannot read the plan ${path}: ${code}`);
    throw new UserError(`${path} is not a revsync plan: it is not valid JSON (${(e as Error).message})`);
  }
  return planFromJson(raw, path, outcome, kinds);
}

/** A plan's JSON, checked as a saved plan is (format, schema, checksum, summary); `outcome` says what
 *  that means for the run that refuses it. */
export function planFromJson(raw: unknown, path: string, outcome: string, kinds: Registry): Plan {
  const version = (raw as { format_version?: unknown } | null)?.format_version;
  if (!raw || typeof raw !== "object" || typeof version !== "string") throw new UserError(`${path} is not a revsync plan (no format_version)`);
  const major = version.split(".")[0];
  if (major !== PLAN_FORMAT_VERSION) {
    throw new UserError(`${path} has plan format ${version}; this revsync reads format ${PLAN_FORMAT_VERSION}: upgrade revsync or plan again`);
  }
  const fn = planValidator(kinds);
  if (!fn(raw)) {
    // One problem per field: the first said is the narrowest (what the change's kind allows there).
    const problems = describeAjvErrors(fn.errors)
      .filter((p, i, all) => all.findIndex((q) => q.field === p.field) === i)
      .slice(0, 5);
    throw new UserError(
      `${path} is not a valid revsync plan, ${outcome}:\n  ${problems.map((p) => `${p.field}: ${p.message}`).join("\n  ")}`,
      "make a new plan with revsync plan --out FILE",
    );
  }
  const plan = raw as Plan;
  if (plan.checksum !== planChecksum(plan)) {
    if (plan.checksum === legacyPlanChecksum(plan)) {
      throw new UserError(
        `${path} was made by an older revsync, whose checksum covered only the tenant and the changes (not the summary, impact, notes, user or time the reviewer reads), ${outcome}: run plan again`,
        "make a new plan with revsync plan --out FILE",
      );
    }
    throw new UserError(`${path} was changed after revsync wrote it (its checksum does not match), ${outcome}`, "make a new plan with revsync plan --out FILE");
  }
  // The summary is the changes counted: a file whose counts say otherwise is not what revsync wrote.
  const counted = summarize(ACTIONS, plan.changes as unknown as { [k: string]: unknown }[], "action");
  const keys = new Set([...Object.keys(counted), ...Object.keys(plan.summary)]) as Set<Action>;
  const wrong = [...keys].filter((k) => (plan.summary[k] ?? 0) !== (counted[k] ?? 0));
  if (wrong.length) {
    throw new UserError(
      `${path} says its changes are ${wrong.map((k) => `${plan.summary[k] ?? 0} ${actionWords(k)}`).join(", ")}, but they are ${wrong.map((k) => `${counted[k] ?? 0} ${actionWords(k)}`).join(", ")}, ${outcome}`,
      "make a new plan with revsync plan --out FILE",
    );
  }
  return plan;
}

const sameUrl = (a: string, b: string): boolean => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

/** A saved plan writes only where it was made: the same base_url, auth_url and realm. */
export function checkBinding(plan: Plan, env: ResolvedEnv, planFile: string): void {
  const differs: string[] = [];
  if (!sameUrl(plan.base_url, env.baseUrl)) differs.push(`base_url: the plan was made for ${plan.base_url}; this run resolves ${env.baseUrl}`);
  if (!sameUrl(plan.auth_url, env.authUrl)) differs.push(`auth_url: the plan was made for ${plan.auth_url}; this run resolves ${env.authUrl}`);
  if (plan.realm !== env.realm) differs.push(`realm: the plan was made for ${plan.realm}; this run resolves ${env.realm}`);
  if (differs.length) {
    throw new UserError(
      `the plan ${planFile} was made for another tenant than this run would write to, so nothing was sent:\n  ${differs.join("\n  ")}`,
      "apply a plan only where it was made: check --env, REVSYNC_BASE_URL, REVSYNC_AUTH_URL and REVSYNC_REALM, or plan again for this tenant",
    );
  }
}
