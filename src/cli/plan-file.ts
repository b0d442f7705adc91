import { readFileSync } from "node:fs";
import type { ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import { PLAN_FORMAT_VERSION, planChecksum, type Plan } from "../plan/model.js";
import { describeAjvErrors, fileValidator } from "../schema/ajv.js";

/** A saved plan, checked before anything is sent: JSON, a format this revsync reads, the plan schema,
 *  and its checksum (a plan edited by hand or corrupted is refused). */
/** `forApply`: the words say that nothing was applied; `show` applies nothing by definition, so its
 *  errors say what apply would do with the file instead. */
export function readPlanFile(path: string, forApply = true): Plan {
  const outcome = forApply ? "so nothing was applied" : "so apply would refuse it";
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new UserError(`cannot read the plan ${path}: no such file`);
    if (code === "EISDIR") throw new UserError(`cannot read the plan ${path}: it is a folder`);
    if (code) throw new UserError(`cannot read the plan ${path}: ${code}`);
    throw new UserError(`${path} is not a revsync plan: it is not valid JSON (${(e as Error).message})`);
  }
  const version = (raw as { format_version?: unknown } | null)?.format_version;
  if (!raw || typeof raw !== "object" || typeof version !== "string") throw new UserError(`${path} is not a revsync plan (no format_version)`);
  const major = version.split(".")[0];
  if (major !== PLAN_FORMAT_VERSION) {
    throw new UserError(`${path} has plan format ${version}; this revsync reads format ${PLAN_FORMAT_VERSION}: upgrade revsync or plan again`);
  }
  const fn = fileValidator("plan.schema.json");
  if (!fn(raw)) {
    const problems = describeAjvErrors(fn.errors).slice(0, 5);
    throw new UserError(
      `${path} is not a valid revsync plan, ${outcome}:\n  ${problems.map((p) => `${p.field}: ${p.message}`).join("\n  ")}`,
      "make a new plan with revsync plan --out FILE",
    );
  }
  const plan = raw as Plan;
  if (plan.checksum !== planChecksum(plan)) {
    throw new UserError(`${path} was changed after revsync wrote it (its checksum does not match), ${outcome}`, "make a new plan with revsync plan --out FILE");
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
