import { AsyncLocalStorage } from "node:async_hooks";
import type { ApiCore } from "../api/core.js";
import { settle, type Failed, type Landed } from "../api/outcome.js";
import type { Clock } from "../api/clock.js";
import { ssp, tenantConfigurations } from "../api/resources.js";
import { ApiError, UserError } from "../errors.js";
import { readBatchValues } from "../live/read.js";
import { UPDATE_FIELDS } from "../plan/build.js";
import type { Change, Plan } from "../plan/model.js";
import { valuesChecksum } from "../plan/values.js";
import type { SspEnvelope, SspList, TenantConfigurationUpdateBody } from "../schema/generated/api.js";
import { batchNameOf } from "../shared/address.js";
import { buildSteps, schedule, type StepOutcome, type Step } from "./graph.js";

export interface ApplyReport {
  environment: string;
  outcomes: { address: string; action: string; status: StepOutcome["status"]; message: string }[];
  summary: { done: number; failed: number; skipped: number };
  interrupted: boolean;
}

/** The step whose work is running, for what observes its requests (apply --evidence): set around each
 *  step's execution, so that every request the step sends (its read right before the write, the write,
 *  a read-back) runs inside it. `landed` is what became of a write that landed; `error` what failed it. */
export interface StepContext {
  id: number;
  address: string;
  action: string;
  landed?: Landed["kind"];
  error?: unknown;
}
export const stepContext = new AsyncLocalStorage<StepContext>();

/** The landed write's words, noted in the step's context as data first. */
function noted(action: keyof typeof DONE, o: Landed): string {
  const ctx = stepContext.getStore();
  if (ctx) ctx.landed = o.kind;
  return landedWords(action, o);
}

/** A write revsync refused right before sending it: the resource is not what the plan saw. Nothing was
 *  sent for it; the steps that depend on it are skipped. */
export class Blocked extends Error {
  constructor(what: string) {
    super(`blocked: ${what}; nothing was sent for it. Run revsync plan again and review the new plan`);
    this.name = "Blocked";
  }
}

const iso = (epoch: unknown): string | undefined => (typeof epoch === "number" ? new Date(epoch * 1000).toISOString().replace(".000Z", "Z") : undefined);
const show = (v: unknown): string => (v === undefined ? "(unset)" : JSON.stringify(v));

/** Who changed a resource last and when, as the service says: " (last changed by bob at 2026-…Z)". */
function who(env: { last_modified_by?: string; last_modified_on?: number }): string {
  const at = iso(env.last_modified_on);
  return env.last_modified_by || at ? ` (last changed${env.last_modified_by ? ` by ${env.last_modified_by}` : ""}${at ? ` at ${at}` : ""})` : "";
}

/** How the live envelope's version moved since the plan read it. version_id is compared where both
 *  sides have one and last_modified_on likewise: a service that shows no version_id is judged by
 *  last_modified_on (and by the fields themselves), never stale forever. */
export function versionMoved(
  recorded: { version_id: string | null; last_modified_on: number | null },
  live: { version_id?: string | null; last_modified_on?: number | null },
): string[] {
  const out: string[] = [];
  if (recorded.version_id != null && live.version_id != null && recorded.version_id !== live.version_id)
    out.push(`version_id ${recorded.version_id} -> ${live.version_id}`);
  if (recorded.last_modified_on != null && live.last_modified_on != null && recorded.last_modified_on !== live.last_modified_on)
    out.push(`last_modified_on ${iso(recorded.last_modified_on)} -> ${iso(live.last_modified_on)}`);
  return out;
}

/** The update body's 14 fields as the plan read them: the payload carries the live values overlaid with
 *  git's, and `before` the live values of git's fields. */
export function seenFields(c: Change): Record<string, unknown> {
  const p = c.payload;
  if (p?.kind !== "update") return {};
  const seen: Record<string, unknown> = { ...p.item };
  const before = (c.before ?? {}) as Record<string, unknown>;
  for (const k of Object.keys((c.after ?? {}) as object)) seen[k] = before[k];
  return seen;
}

/** Checks each resource right before apply's first write to it (after the confirmation prompt), against
 *  what the plan saw; a mismatch blocks that resource and what depends on it, with nothing sent for it.
 *  revsync sends If-Match but never relies on it (the interface does not promise it). */
export class Guard {
  private sspList: Promise<SspList> | undefined;
  private readonly policies = new Map<string, Promise<SspEnvelope>>();
  private readonly batches = new Map<string, Promise<void>>();

  constructor(private readonly core: ApiCore) {}

  /** A tenant configuration PATCH carries all 14 fields, 13 of them as the plan read them: read the
   *  configuration again, and send nothing if any field, version_id or last_modified_on moved. */
  async beforeUpdate(c: Change): Promise<void> {
    const p = c.payload;
    if (p?.kind !== "update") return;
    const env = (await tenantConfigurations.list(this.core)).find((e) => e.compliance_id === p.compliance_id);
    if (!env) throw new Blocked(`${c.address} no longer exists in the service`);
    const live = (env.compliance_spec?.[0] ?? {}) as Record<string, unknown>;
    const seen = seenFields(c);
    const fields = UPDATE_FIELDS.filter((k) => JSON.stringify(live[k]) !== JSON.stringify(seen[k])).map((k) => `${k} ${show(seen[k])} -> ${show(live[k])}`);
    const moved = [...fields, ...versionMoved(c, env)];
    if (moved.length) throw new Blocked(`${c.address} changed in the service since the plan${who(env)}: ${moved.join(", ")}`);
  }

  /** A create: one read of the SSP list before the run's first create, shared by every create. */
  async beforeCreate(c: Change): Promise<void> {
    const p = c.payload;
    if (p?.kind !== "create") return;
    this.sspList ??= ssp.list(this.core);
    const list = await this.sspList;
    const name = p.body.compliance_name;
    const same = list.find((e) => e.compliance_name === name);
    if (same) throw new Blocked(`${c.address} exists in the service now${who(same)}; the plan was to create it`);
    const holder = list.find((e) => {
      const item = e.compliance_spec?.[0];
      return item?.hierarchy_no === p.hierarchy_no && item.active !== false;
    });
    if (holder)
      throw new Blocked(
        `hierarchy_no ${p.hierarchy_no} is held now by the active policy ${JSON.stringify(holder.compliance_name)}${who(holder)}; two policies in one place of the hierarchy make it undefined which one prices an order line`,
      );
  }

  /** A review or approve: the batch must still be where the plan saw it (status), the same upload
   *  (file_id) with the same values (checksum), of a policy at the version the plan read. */
  async beforeBatch(c: Change): Promise<void> {
    const p = c.payload;
    // A batch of a policy this plan creates goes up with the create, holding git's values.
    if (p?.kind !== "batch" || p.compliance_id === null) return;
    const key = `${p.policy}\u0000${p.batch}`;
    let check = this.batches.get(key);
    if (!check) {
      check = this.checkBatch(c, p);
      this.batches.set(key, check);
    }
    await check;
  }

  private async checkBatch(c: Change, p: Extract<NonNullable<Change["payload"]>, { kind: "batch" }>): Promise<void> {
    const policyAddr = `ssp/${p.policy}`;
    // The policy's version, read once before this run's first write to the policy (its own writes move it).
    let first = this.policies.get(p.policy);
    const isFirst = !first;
    if (!first) {
      first = ssp.get(this.core, p.policy).then((env) => {
        if (!env) throw new Blocked(`${policyAddr} no longer exists in the service`);
        const moved = versionMoved(c, env);
        if (moved.length) throw new Blocked(`${policyAddr} changed in the service since the plan${who(env)}: ${moved.join(", ")}`);
        return env;
      });
      this.policies.set(p.policy, first);
    }
    const policy = await first;
    const env = isFirst ? policy : await ssp.get(this.core, p.policy);
    if (!env) throw new Blocked(`${policyAddr} no longer exists in the service`);
    const lb = env.compliance_spec?.[0]?.batches?.find((b) => batchNameOf(b) === p.batch);
    if (!lb) throw new Blocked(`${c.address} no longer exists in the service`);
    const changed = ` changed in the service since the plan (batch last changed${lb.updated_by ? ` by ${lb.updated_by}` : ""}${iso(lb.updated_at) ? ` at ${iso(lb.updated_at)}` : ""})`;
    const expected = (c.before as { status?: unknown } | null)?.status;
    if (lb.status !== expected) throw new Blocked(`${c.address}${changed}: status ${show(expected)} -> ${show(lb.status)}`);
    if (p.file_id === undefined || !p.values_checksum) {
      throw new Blocked(`${c.address}: the saved plan does not bind this batch to its file and values (it was made by an older revsync)`);
    }
    const fileId = typeof lb.file_id === "string" ? lb.file_id : null;
    if (fileId !== p.file_id) throw new Blocked(`${c.address}${changed}: file_id ${show(p.file_id)} -> ${show(fileId)}, a new upload nobody reviewed`);
    if (valuesChecksum(await readBatchValues(this.core, p.policy, lb)) !== p.values_checksum) {
      throw new Blocked(`${c.address}${changed}: its values are not the ones the plan showed`);
    }
  }
}

/** The signed-in user, whom a tenant configuration PATCH names (user_name): required when the
 *  plan holds an update; checked before anything is sent. */
export function requireUser(core: ApiCore, plan: Plan): string | undefined {
  const user = core.auth.username;
  if (!user && plan.changes.some((c) => c.action === "update")) {
    throw new UserError(
      "the tenant configuration update names the user who makes it (user_name), and this sign-in gives none: the token carries no preferred_username or sub claim",
      "set REVSYNC_USER to your user id in the service",
    );
  }
  return user;
}

/** The body of a tenant configuration PATCH: the plan's 14 fields, the signed-in user, and
 *  the run's clock for current_timestamp (epoch seconds, as text). */
export function updateBody(p: Extract<NonNullable<Change["payload"]>, { kind: "update" }>, user: string, clock: Clock): TenantConfigurationUpdateBody {
  return {
    user_name: user,
    current_timestamp: String(Math.floor(clock.now() / 1000)),
    format_type: "JSON",
    compliance_name: p.compliance_name,
    unique_key: p.unique_key,
    compliance_spec: [p.item],
  };
}

const DONE = { update: "updated", create: "created", review: "reviewed", approve: "approved" } as const;

/** A write that landed, in the apply report's words. */
export function landedWords(action: keyof typeof DONE, o: Landed): string {
  if (o.kind === "done") return DONE[action];
  if (o.kind === "already") return `already ${o.status}`;
  // A create is read back after a lost answer (or a 409 for the very policy that was sent).
  if (action === "create") return `created (${o.why ?? "the answer was lost"}; confirmed by reading it back)`;
  return `${o.status ?? DONE[action]} (confirmed by reading it back)`;
}

/** A failed write fails its step with the service's words. A refused 412 on a tenant configuration
 *  PATCH (on a first send, or after a read-back that found other values) is someone else's change
 *  since the plan. */
function failure(action: keyof typeof DONE, o: Failed): ApiError {
  const e = o.error;
  if (action === "update" && o.kind === "refused" && e.status === 412) {
    return new ApiError({ method: e.method, path: e.path, status: 412, message: "the tenant configuration changed since the plan was made: plan again" });
  }
  return e;
}

/** One step: the check right before its write, the write, and what the API layer learned about it. */
async function execute(core: ApiCore, guard: Guard, step: Step, createdIds: Map<string, string>, user: string, log: (line: string) => void): Promise<string> {
  const c = step.change;
  const p = c.payload;
  if (!p) throw new UserError(`${c.address}: the plan carries no payload for ${c.action}`);
  if (p.kind === "update") {
    await guard.beforeUpdate(c);
    log(`${c.address}: read again just now, unchanged since the plan; sending the update`);
    const o = await settle(tenantConfigurations.update(core, p.compliance_id, updateBody(p, user, core.clock), c.version_id ?? undefined));
    if (o.kind === "unknown" || o.kind === "refused") throw failure("update", o);
    return noted("update", o);
  }
  if (p.kind === "create") {
    await guard.beforeCreate(c);
    const o = await settle(ssp.create(core, p.body));
    if (o.kind === "unknown" || o.kind === "refused") throw failure("create", o);
    createdIds.set(p.body.compliance_name, o.result.compliance_id);
    return noted("create", o);
  }
  await guard.beforeBatch(c);
  let id = p.compliance_id ?? createdIds.get(p.policy);
  if (!id) id = (await ssp.get(core, p.policy))?.compliance_id;
  if (!id) throw new ApiError({ method: "GET", path: "ssp", status: 404, message: `SSP policy ${p.policy} not found` });
  const action = c.action === "review" ? "review" : "approve";
  const o = await settle(ssp.batchAction(core, action, { id, name: p.policy }, p.batch));
  if (o.kind === "unknown" || o.kind === "refused") throw failure(action, o);
  return noted(action, o);
}

export interface ApplyOptions {
  concurrency: number;
  isStopping: () => boolean;
  onStart?: (step: Step) => void;
  onFinish?: (o: StepOutcome, done: number, total: number) => void;
  /** The verbose log. */
  log?: (line: string) => void;
  /** Each step's context, as its work starts (apply --evidence keeps them). */
  onStep?: (ctx: StepContext) => void;
}

/** Applies the plan's writes in dependency order. Each resource is checked right before its first write
 *  (Guard): the plan may have been saved a while ago, or the service changed while the prompt waited. */
export async function applyPlan(core: ApiCore, plan: Plan, opts: ApplyOptions): Promise<ApplyReport> {
  const user = requireUser(core, plan) ?? "";
  const steps = buildSteps(plan);
  const created = new Map<string, string>();
  const guard = new Guard(core);
  const log = opts.log ?? (() => undefined);
  let finished = 0;
  // No retry here: each request has one budget, in the HTTP core (README, Reliability).
  const inStep = (s: Step): Promise<string> => {
    // Only when someone watches: an async context has a cost on every promise of the run.
    if (!opts.onStep) return execute(core, guard, s, created, user, log);
    const ctx: StepContext = { id: s.id, address: s.change.address, action: s.change.action };
    opts.onStep(ctx);
    return stepContext.run(ctx, () =>
      execute(core, guard, s, created, user, log).catch((e: unknown) => {
        ctx.error = e;
        throw e;
      }),
    );
  };
  const outcomes = await schedule(steps, inStep, {
    concurrency: opts.concurrency,
    isStopping: opts.isStopping,
    onStart: opts.onStart,
    onFinish: (o) => opts.onFinish?.(o, ++finished, steps.length),
  });
  const count = (s: StepOutcome["status"]): number => outcomes.filter((o) => o.status === s).length;
  return {
    environment: plan.environment,
    outcomes: outcomes.map((o) => ({ address: o.step.change.address, action: o.step.change.action, status: o.status, message: o.message })),
    summary: { done: count("done"), failed: count("failed"), skipped: count("skipped") },
    interrupted: opts.isStopping(),
  };
}
