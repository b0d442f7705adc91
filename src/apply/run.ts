import type { ApiCore } from "../api/core.js";
import { ssp, tenantConfigurations } from "../api/resources.js";
import { ApiError, UserError } from "../errors.js";
import type { Change, Plan } from "../plan/model.js";
import type { SspEnvelope, TenantConfigurationUpdateBody } from "../schema/generated/api.js";
import { mapLimit } from "../map-limit.js";
import { buildSteps, schedule, type Outcome, type Step } from "./graph.js";

export interface ApplyReport {
  environment: string;
  outcomes: { address: string; action: string; status: Outcome["status"]; message: string }[];
  summary: { done: number; failed: number; skipped: number };
  interrupted: boolean;
}

/** A saved plan is applied only if every resource it touches is still at the version it recorded. Two
 *  lists answer it all: the tenant configurations, and the SSP list (exact names) for "exists now?" of
 *  every create and the version of every policy whose batches change; a policy whose list entry shows no
 *  version is read on its own, concurrently. */
export async function checkPreconditions(core: ApiCore, plan: Plan, concurrency = 8): Promise<string[]> {
  const stale: string[] = [];
  const changes = plan.changes.filter((c) => c.action !== "unsupported");
  const needsTc = changes.some((c) => c.payload?.kind === "update");
  const policies = new Map<string, Change>();
  for (const c of changes) {
    if (c.payload?.kind === "create") policies.set(c.payload.body.compliance_name, c);
    else if (c.payload?.kind === "batch" && !policies.has(c.payload.policy)) policies.set(c.payload.policy, c);
  }
  const [tcs, list] = await Promise.all([needsTc ? tenantConfigurations.list(core) : undefined, policies.size ? ssp.list(core) : undefined]);
  for (const c of changes) {
    if (c.payload?.kind !== "update" || !tcs) continue;
    const id = c.payload.compliance_id;
    const env = tcs.find((e) => e.compliance_id === id);
    if (!env) stale.push(`${c.address}: no longer exists`);
    else if (env.version_id !== c.version_id || env.last_modified_on !== c.last_modified_on) {
      stale.push(`${c.address}: version_id ${c.version_id} -> ${env.version_id}, last_modified_on ${c.last_modified_on} -> ${env.last_modified_on}`);
    }
  }
  const byName = new Map<string, SspEnvelope>();
  for (const e of list ?? []) if (e.compliance_name !== undefined && !byName.has(e.compliance_name)) byName.set(e.compliance_name, e);
  const unversioned = [...policies].filter(([name, c]) => c.action !== "create" && c.version_id !== null && byName.get(name)?.version_id == null);
  await mapLimit(unversioned, concurrency, async ([name]) => {
    const env = await ssp.get(core, name);
    if (env) byName.set(name, env);
    else byName.delete(name);
  });
  for (const [name, c] of policies) {
    const env = byName.get(name);
    if (c.action === "create" || c.version_id === null) {
      if (env && c.action === "create") stale.push(`ssp/${name}: exists now; the plan was to create it`);
      continue;
    }
    if (!env) stale.push(`ssp/${name}: no longer exists`);
    else if (env.version_id !== c.version_id || env.last_modified_on !== c.last_modified_on) {
      stale.push(`ssp/${name}: version_id ${c.version_id} -> ${env.version_id}, last_modified_on ${c.last_modified_on} -> ${env.last_modified_on}`);
    }
  }
  return stale;
}

async function execute(core: ApiCore, step: Step, createdIds: Map<string, string>, user: string): Promise<string> {
  const c = step.change;
  const p = c.payload;
  if (!p) throw new UserError(`${c.address}: the plan carries no payload for ${c.action}`);
  if (p.kind === "update") {
    const body: TenantConfigurationUpdateBody = {
      user_name: user,
      current_timestamp: String(Math.floor(Date.now() / 1000)),
      format_type: "JSON",
      compliance_name: p.compliance_name,
      unique_key: p.unique_key,
      compliance_spec: [p.item],
    };
    try {
      await tenantConfigurations.update(core, p.compliance_id, body, c.version_id ?? undefined);
      return "updated";
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const stale = () =>
        new ApiError({ method: e.method, path: e.path, status: 412, message: "the tenant configuration changed since the plan was made: plan again" });
      // Only a write that may have landed (the core says so) is read back; a 412 on its own is someone else's change.
      if (!e.outcomeUnknown) throw e.status === 412 ? stale() : e;
      let live: Record<string, unknown>;
      try {
        const env = (await tenantConfigurations.list(core)).find((x) => x.compliance_id === p.compliance_id);
        live = (env?.compliance_spec?.[0] ?? {}) as Record<string, unknown>;
      } catch (readErr) {
        throw ApiError.readBackFailed(e, readErr);
      }
      if (Object.entries(p.item).every(([k, v]) => JSON.stringify(live[k]) === JSON.stringify(v))) return "updated (confirmed by reading it back)";
      if (e.status === 412) throw stale();
      const message = `${e.serviceMessage}; read back: the tenant configuration does not hold the new values`;
      throw new ApiError({ method: e.method, path: e.path, status: e.status, message, problems: e.problems });
    }
  }
  if (p.kind === "create") {
    const out = await ssp.create(core, p.body);
    createdIds.set(p.body.compliance_name, out.result.compliance_id);
    return out.recovered ? "created (the answer was lost; confirmed by reading it back)" : "created";
  }
  let id = p.compliance_id ?? createdIds.get(p.policy);
  if (!id) id = (await ssp.get(core, p.policy))?.compliance_id;
  if (!id) throw new ApiError({ method: "GET", path: "ssp", status: 404, message: `SSP policy ${p.policy} not found` });
  const action = c.action === "review" ? "review" : "approve";
  const res = await ssp.batchAction(core, action, { id, name: p.policy }, p.batch);
  const msg = res.compliance_details?.[0]?.message;
  if (msg && (msg.startsWith("already") || msg.endsWith("(confirmed by reading it back)"))) return msg;
  return action === "review" ? "reviewed" : "approved";
}

export interface ApplyOptions {
  concurrency: number;
  isStopping: () => boolean;
  onStart?: (step: Step, running: number) => void;
  onFinish?: (o: Outcome, done: number, total: number) => void;
}

export async function applyPlan(core: ApiCore, plan: Plan, opts: ApplyOptions): Promise<ApplyReport> {
  const steps = buildSteps(plan);
  const created = new Map<string, string>();
  const user = core.auth.username ?? "revsync";
  let finished = 0;
  // No retry here: each request has one budget, in the HTTP core (README, Reliability).
  const outcomes = await schedule(steps, (s) => execute(core, s, created, user), {
    concurrency: opts.concurrency,
    isStopping: opts.isStopping,
    onStart: opts.onStart,
    onFinish: (o) => opts.onFinish?.(o, ++finished, steps.length),
  });
  const count = (s: Outcome["status"]): number => outcomes.filter((o) => o.status === s).length;
  return {
    environment: plan.environment,
    outcomes: outcomes.map((o) => ({ address: o.step.change.address, action: o.step.change.action, status: o.status, message: o.message })),
    summary: { done: count("done"), failed: count("failed"), skipped: count("skipped") },
    interrupted: opts.isStopping(),
  };
}
