import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { ApiCore } from "../api/core.js";
import { applyPlan, checkPreconditions } from "../apply/run.js";
import { environmentNames, selectEnv, type DesiredState, type Repo, type ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import { exportFiles, renderFile } from "../export/mapping.js";
import { POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import { listYamlFiles } from "../config/walk.js";
import { writeUserFile } from "../user-files.js";
import { buildDrift, buildPlan } from "../plan/build.js";
import { readLive, type LiveState } from "../live/read.js";
import { PLAN_FORMAT_VERSION, planChecksum, type DriftReport, type Plan } from "../plan/model.js";
import { describeAjvErrors, fileValidator } from "../schema/ajv.js";
import { applyText, driftMarkdown, driftText, hasChanges, planMarkdown, planText } from "../report/plan.js";
import { concurrencyOf, desiredState, openClient, openEnv, openRepo } from "./context.js";
import type { GlobalFlags } from "./main.js";
import type { Output } from "./output.js";
import { startProgress } from "./progress.js";
import { askYes } from "./prompt.js";

export interface PlanFlags extends GlobalFlags {
  out?: string;
  detailedExitcode?: boolean;
}

export interface ApplyFlags extends GlobalFlags {
  autoApprove?: boolean;
}

async function readWithProgress(
  core: ApiCore,
  desired: DesiredState,
  flags: GlobalFlags,
  out: Output,
  extra: { values?: boolean; allDetails?: boolean; managedDetails?: boolean },
): Promise<LiveState> {
  const progress = await startProgress(out, "Reading the service…", flags.quiet);
  try {
    return await readLive(core, desired, {
      concurrency: concurrencyOf(flags),
      targets: flags.target ?? [],
      ...extra,
      progress: (done, total, what) => progress.update(`Reading the service: ${done}/${total} (${what})`),
    });
  } finally {
    progress.stop();
  }
}

async function makePlan(repo: Repo, env: ResolvedEnv, core: ApiCore, flags: GlobalFlags, out: Output): Promise<Plan> {
  const desired = desiredState(repo, env, out);
  const live = await readWithProgress(core, desired, flags, out, { values: true });
  return buildPlan(desired, live, {
    environment: env.name,
    baseUrl: env.baseUrl,
    authUrl: env.authUrl,
    realm: env.realm,
    user: core.auth.username ?? null,
    targets: flags.target ?? [],
  });
}

function printPlan(plan: Plan, format: string, out: Output): void {
  if (format === "json") out.out(JSON.stringify(plan, null, 2));
  else if (format === "markdown") out.out(planMarkdown(plan));
  else out.out(planText(plan, out));
  if (format === "text") for (const n of plan.notes ?? []) out.info(`Note: ${n}`);
}

export async function runPlan(flags: PlanFlags, out: Output): Promise<number> {
  const repo = openRepo(flags, out);
  const env = openEnv(repo, flags);
  const core = openClient(env, flags, out);
  try {
    const plan = await makePlan(repo, env, core, flags, out);
    printPlan(plan, flags.format ?? "text", out);
    if (flags.out) {
      writeUserFile(resolve(flags.out), JSON.stringify(plan, null, 2) + "\n");
      out.info(`Saved the plan to ${flags.out}. Apply exactly this plan with: revsync apply ${flags.out}`);
    }
    return flags.detailedExitcode && hasChanges(plan) ? 2 : 0;
  } finally {
    await core.close();
  }
}

/** A saved plan, checked before anything is sent: JSON, a format this revsync reads, the plan schema,
 *  and its checksum (a plan edited by hand or corrupted is refused). */
export function readPlanFile(path: string): Plan {
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
      `${path} is not a valid revsync plan, so nothing was applied:\n  ${problems.map((p) => `${p.field}: ${p.message}`).join("\n  ")}`,
      "make a new plan with revsync plan --out FILE",
    );
  }
  const plan = raw as Plan;
  if (plan.checksum !== planChecksum(plan)) {
    throw new UserError(
      `${path} was changed after revsync wrote it (its checksum does not match), so nothing was applied`,
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

export async function runApply(flags: ApplyFlags, out: Output, _r: unknown, args: string[]): Promise<number> {
  const repo = openRepo(flags, out);
  const planFile = args[0];
  const saved = planFile ? readPlanFile(resolve(planFile)) : undefined;
  const env = openEnv(repo, flags, flags.env ?? saved?.environment);
  if (saved && saved.environment !== env.name) {
    throw new UserError(`the plan ${planFile} is for environment ${JSON.stringify(saved.environment)}, not ${JSON.stringify(env.name)}`);
  }
  if (saved && planFile) checkBinding(saved, env, planFile);
  const core = openClient(env, flags, out);
  // From here on the first signal never kills apply mid-step: nothing new starts, what is in flight
  // finishes. A second one stops at once and names what was in flight (like Terraform).
  let stopping = false;
  let hardStop: () => void = () => undefined;
  const hard = new Promise<"hard">((r) => (hardStop = () => r("hard")));
  const inFlight = new Map<number, string>();
  const onSignal = (sig: string) => (): void => {
    if (!stopping) {
      stopping = true;
      out.warn(`${sig}: starting nothing new; waiting for the requests in flight (interrupt again to stop at once)`);
    } else hardStop();
  };
  const onInt = onSignal("SIGINT");
  const onTerm = onSignal("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  const work = async (): Promise<number> => {
    let plan: Plan;
    if (saved) {
      plan = saved;
      const stale = await checkPreconditions(core, plan, concurrencyOf(flags));
      if (stale.length) {
        throw new UserError(
          `the saved plan is stale: the service changed since it was made, so nothing was applied.\n  ${stale.join("\n  ")}`,
          "run revsync plan again and review the new plan",
        );
      }
    } else plan = await makePlan(repo, env, core, flags, out);
    out.info(planText(plan, out));
    if (!plan.changes.some((c) => c.action !== "unsupported")) {
      out.info(hasChanges(plan) ? "Nothing that revsync can apply: the differences above are unsupported." : "Nothing to apply.");
      return 0;
    }
    if (stopping) {
      out.error("apply interrupted before it wrote anything");
      return 130;
    }
    out.info(`Target: environment ${JSON.stringify(env.name)}, ${env.baseUrl}, realm ${env.realm}${core.auth.username ? `, as ${core.auth.username}` : ""}.`);
    if (!flags.autoApprove) {
      if (!out.interactive) throw new UserError("apply writes to the service: without a terminal it needs --auto-approve");
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      try {
        if (!(await askYes(out, "\nDo you want to perform these actions? Only 'yes' will be accepted: "))) {
          out.error("apply cancelled: nothing was written");
          return 1;
        }
      } finally {
        process.on("SIGINT", onInt);
        process.on("SIGTERM", onTerm);
      }
    }
    const progress = await startProgress(out, "Applying…", flags.quiet);
    try {
      const report = await applyPlan(core, plan, {
        concurrency: concurrencyOf(flags),
        isStopping: () => stopping,
        onStart: (s) => {
          inFlight.set(s.id, `${s.change.action} ${s.change.address}`);
          out.verbose(`start ${s.change.action} ${s.change.address}`);
          progress.update(`Applying: ${s.change.action} ${s.change.address}`);
        },
        onFinish: (o, done, total) => {
          inFlight.delete(o.step.id);
          progress.update(`Applying: ${done}/${total} finished`);
          out.verbose(`${o.status} ${o.step.change.action} ${o.step.change.address}: ${o.message}`);
        },
      });
      progress.stop();
      if (flags.format === "json") out.out(JSON.stringify({ format_version: PLAN_FORMAT_VERSION, ...report }, null, 2));
      else out.out(applyText(report, out));
      if (report.interrupted) return 130;
      return report.summary.failed ? 1 : 0;
    } finally {
      progress.stop();
    }
  };
  try {
    const first = await Promise.race([work(), hard]);
    if (first !== "hard") return first;
    const pending = [...inFlight.values()];
    out.error(
      pending.length
        ? `interrupted again: stopping now. The outcome of these requests in flight is unknown:\n  ${pending.join("\n  ")}\nRun revsync plan to see what landed.`
        : "interrupted again: stopping now; no write was in flight. Run revsync plan to see what is left.",
    );
    return 130;
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
    if (!inFlight.size) await core.close();
  }
}

export interface DriftFlags extends GlobalFlags {
  allEnvs?: boolean;
}

export async function runDrift(flags: DriftFlags, out: Output): Promise<number> {
  const repo = openRepo(flags, out);
  const names = flags.allEnvs ? environmentNames(repo) : [selectEnv(repo, flags.env, process.env)];
  const reports: DriftReport[] = [];
  let code = 0;
  for (const name of names) {
    try {
      const env = openEnv(repo, flags, name);
      const core = openClient(env, flags, out);
      try {
        const desired = desiredState(repo, env, out);
        const live = await readWithProgress(core, desired, flags, out, { values: true, managedDetails: true });
        const report = buildDrift(desired, live, { environment: env.name, targets: flags.target ?? [] });
        reports.push(report);
        if (flags.format === "markdown") out.out(driftMarkdown(report));
        else if (flags.format !== "json") out.out(driftText(report, out));
        if (report.drift.length && code === 0) code = 2;
      } finally {
        await core.close();
      }
    } catch (e) {
      if (!flags.allEnvs) throw e;
      out.error(`${name}: ${(e as Error).message}`);
      code = 1;
    }
  }
  if (flags.format === "json") out.out(JSON.stringify(flags.allEnvs ? reports : reports[0], null, 2));
  return code;
}

export async function runExport(flags: GlobalFlags & { dir?: string }, out: Output): Promise<number> {
  const repo = openRepo(flags, out);
  const env = openEnv(repo, flags);
  const core = openClient(env, flags, out);
  const dir = resolve(flags.dir ?? repo.policiesDir);
  try {
    const live = await readWithProgress(core, { tenantConfigs: [], ssp: [] }, flags, out, { allDetails: true });
    const files = exportFiles(live, flags.target ?? []);
    const schemas = writeRepoSchemas(repo.root, false);
    const schemaFile = join(repo.root, REPO_SCHEMAS_DIR, POLICY_FILE_SCHEMA);
    const written: string[] = [];
    for (const f of files) {
      const path = join(dir, f.file);
      const schemaRef = relative(dirname(path), schemaFile).split("\\").join("/");
      writeUserFile(path, renderFile(f, [`yaml-language-server: $schema=${schemaRef}`, `Exported by revsync from environment ${env.name}.`]));
      written.push(relative(process.cwd(), path));
    }
    const others = existsSync(dir) ? listYamlFiles(dir).filter((p) => !files.some((f) => join(dir, f.file) === p)) : [];
    for (const f of written) out.out(`wrote ${f}`);
    for (const s of schemas.written) out.info(`wrote ${s} (the schemas the files' first line refers to)`);
    const leftOut = files.flatMap((f) => f.leftOut);
    if (leftOut.length) {
      out.warn(`left out of the files (each is named in a comment in its file; a field left out keeps its live value):\n  ${leftOut.join("\n  ")}`);
    }
    if (others.length) {
      const shown = others.map((p) => relative(process.cwd(), p));
      out.warn(
        `other policy files in ${relative(process.cwd(), dir) || "."} were left as they are and may now define the same policies twice: ${shown.join(", ")}`,
      );
    }
    return 0;
  } finally {
    await core.close();
  }
}
