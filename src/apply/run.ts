import type { ApiCore } from "../api/core.js";
import type { Clock } from "../api/clock.js";
import { createMismatch, overwrittenWords, ssp, tenantConfigurations, writes } from "../api/resources.js";
import type { GuardVerdict, WriteOutcome } from "../api/write.js";
import { sameJson } from "../canonical-json.js";
import { ApiError, UserError } from "../errors.js";
import { readBatchValues } from "../live/read.js";
import { UPDATE_FIELDS } from "../plan/build.js";
import { isApplied, type Change, type Payload, type Plan } from "../plan/model.js";
import { valuesChecksum } from "../plan/values.js";
import type {
  SspCreateBatch,
  SspCreateItem,
  SspEnvelope,
  SspItem,
  SspList,
  TenantConfigurationUpdateBody,
  TenantConfigurationUpdateItem,
} from "../schema/generated/api.js";
import { address, batchNameOf } from "../shared/address.js";
import { batchWho, envelopeWho, isoOf, sameUser, shortIso, whoWords } from "../shared/who.js";
import { APPROVER_FIX } from "../plan/four-eyes.js";
import { buildSteps, schedule, type FourEyesFacts, type StepOutcome, type StepResult, type Step } from "./graph.js";

/** What became of each change apply acted on, by one set of names that the closing line, the JSON
 *  report and the evidence record all count by: done, already (nothing needed sending), confirmed (by
 *  reading it back after an unknown outcome), blocked (changed since the plan), failed (refused, or
 *  anything else that stopped the step), unknown (may have landed; reading back could not tell),
 *  skipped (not attempted), overwritten (landed, and someone else's write undid it right after). */
export const OUTCOMES = ["done", "already", "confirmed", "blocked", "failed", "unknown", "skipped", "overwritten"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** A step's outcome by those names: the write unit's kind where the step has one (a refusal is failed). */
export function outcomeOf(o: Pick<StepOutcome, "status" | "outcome">): Outcome {
  if (o.status === "skipped") return "skipped";
  const kind = o.outcome ?? (o.status === "done" ? "done" : "failed");
  return (OUTCOMES as readonly string[]).includes(kind) ? (kind as Outcome) : "failed";
}

/** Each outcome's count, every name present (0 where none). */
export function countOutcomes(outcomes: readonly { outcome: Outcome }[]): Record<Outcome, number> {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const o of outcomes) counts[o.outcome]++;
  return counts;
}

export interface ApplyReport {
  environment: string;
  /** `status`: whether the step succeeded (done), failed or was skipped; `outcome`: what became of its
   *  write, by the names of OUTCOMES. */
  outcomes: {
    address: string;
    action: string;
    status: StepOutcome["status"];
    outcome: Outcome;
    message: string;
    /** An approve: who reviewed its batch, who created its policy, and who it was sent as. */
    four_eyes?: FourEyesFacts;
  }[];
  /** Each outcome's count over `outcomes`: the one count the closing line and the evidence record show. */
  summary: Record<Outcome, number>;
  interrupted: boolean;
}

const show = (v: unknown): string => (v === undefined ? "(unset)" : JSON.stringify(v));
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const iso = (epoch: unknown): string | null => {
  const t = isoOf(epoch);
  return t ? shortIso(t) : null;
};

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

/** The values git's fields take after the update, as the reviewed diff shows them: a field the diff
 *  names takes the diff's value, every other field git sets keeps the value the plan read. */
export function shownUpdate(c: Change): Record<string, unknown> {
  const before = (c.before ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys((c.after ?? {}) as object)) out[k] = before[k];
  for (const d of c.diff) out[d.path] = d.after;
  return out;
}

/** What is sent is what was shown: each write's payload is checked against the reviewed diff before
 *  anything is sent, and a plan whose payload says more or other than its diff is refused whole (its
 *  checksum is no protection: anyone can compute it). Returns the problems, in words. */
export function payloadProblems(plan: Plan): string[] {
  const out: string[] = [];
  const batchSums = new Map<string, string | null | undefined>();
  for (const c of plan.changes) if (c.payload?.kind === "batch") batchSums.set(`${c.payload.policy}\u0000${c.payload.batch}`, c.payload.values_checksum);
  for (const c of plan.changes) {
    if (!isApplied(c)) continue;
    const p = c.payload;
    const bad = (what: string): void => void out.push(`${c.address} (${c.action}): ${what}`);
    if (!p) {
      bad("no payload");
      continue;
    }
    if (c.action === "update") {
      if (p.kind !== "update") {
        bad(`a ${p.kind} payload`);
        continue;
      }
      if (c.address !== address.tenant(p.compliance_name)) bad(`the payload names ${JSON.stringify(p.compliance_name)}`);
      const after = (c.after ?? {}) as Record<string, unknown>;
      for (const d of c.diff) if (!(d.path in after) || !same(after[d.path], d.after)) bad(`the diff of ${d.path} is not git's value`);
      const item = p.item as unknown as Record<string, unknown>;
      for (const [k, v] of Object.entries(shownUpdate(c))) {
        if (!UPDATE_FIELDS.includes(k as (typeof UPDATE_FIELDS)[number])) bad(`${k} is not a field of the update`);
        else if (!same(item[k], v)) bad(`the payload's ${k} ${show(item[k])} is not the reviewed ${show(v)}`);
      }
      for (const k of Object.keys(item))
        if (!UPDATE_FIELDS.includes(k as (typeof UPDATE_FIELDS)[number])) bad(`the payload's ${k} is not a field of the update`);
    } else if (c.action === "create") {
      if (p.kind !== "create") {
        bad(`a ${p.kind} payload`);
        continue;
      }
      const { batches, ...item } = (p.body.compliance_spec[0] ?? {}) as SspCreateItem & { batches?: SspCreateBatch[] };
      const name = p.body.compliance_name;
      if (c.address !== address.ssp(name) || p.body.unique_key !== name || p.body.compliance_spec.length !== 1) bad("the payload names another policy");
      // The entry shows the policy's fields and, under `batches`, each batch the create uploads (its
      // name, file and number of rows; the values are bound by the batch's own checksum below).
      const { batches: shownBatches, ...shownItem } = (c.after ?? {}) as Record<string, unknown> & { batches?: unknown };
      if (!sameJson(item, shownItem) || item.hierarchy_no !== p.hierarchy_no) bad("the payload's policy is not the reviewed one");
      for (const d of c.diff) {
        const shownValue = d.path === "batches" ? shownBatches : (item as Record<string, unknown>)[d.path];
        if (!same(shownValue, d.after)) bad(`the payload's ${d.path} is not the reviewed value`);
      }
      // Each batch the create uploads is shown with the checksum of its values: a batch whose values or
      // file differ, or one the entry does not list, is refused (a plan of an older revsync lists none).
      const sentBatches = (batches ?? []).map((b) => ({
        batch_name: b.batch_name,
        status: "file uploaded",
        file_name: b.file_name,
        rows: b.ssp_values.length,
        values_checksum: valuesChecksum(b.ssp_values),
      }));
      if (!sameJson(shownBatches ?? [], sentBatches)) bad("the payload's batches are not the ones the plan shows");
      for (const b of batches ?? []) {
        // A batch this plan also reviews or approves: the values it shows there are the ones uploaded.
        const sum = batchSums.get(`${name}\u0000${b.batch_name}`);
        if (sum && valuesChecksum(b.ssp_values) !== sum) bad(`the values of the batch ${b.batch_name} are not the ones the plan showed`);
      }
    } else {
      if (p.kind !== "batch") {
        bad(`a ${p.kind} payload`);
        continue;
      }
      if (c.address !== address.batch(p.policy, p.batch)) bad(`the payload names ${JSON.stringify(`${p.policy}/${p.batch}`)}`);
    }
  }
  return out;
}

/** Refuses, before anything is sent, a plan whose payloads are not what its diff shows. */
export function checkPayloads(plan: Plan): void {
  const problems = payloadProblems(plan);
  if (problems.length) {
    throw new UserError(
      `the plan's writes are not what it shows, so nothing was sent:\n  ${problems.join("\n  ")}`,
      "a saved plan is applied only as revsync wrote it: run revsync plan again",
    );
  }
}

const blocked = (what: string): { blocked: string } => ({
  blocked: `blocked: ${what}; nothing was sent for it. Run revsync plan again and review the new plan`,
});

/** The guards: each reads the resource right before EVERY send of a write (the first, and each resend
 *  after a Retry-After, a backoff, a token refresh) and compares it with what the plan saw; the write
 *  unit (src/api/write.ts) calls them. revsync sends If-Match where the service answers a version, and
 *  relies on it nowhere (the interface does not promise it). */
export class Guards {
  private listing: Promise<SspList> | undefined;
  /** Policies whose version this run checked against the plan (its own writes move it after). */
  private readonly policyChecked = new Set<string>();
  /** Values by file id: an upload's file does not change (a new upload is a new file). */
  private readonly fileSums = new Map<string, Promise<string>>();

  /** Batches (their addresses) this run reviewed: their reviewer is this run's sign-in. */
  readonly reviewedHere = new Set<string>();

  constructor(
    private readonly core: ApiCore,
    private readonly user: string,
    private readonly log: (line: string) => void = () => undefined,
    /** The plan's entries: what it saw of each batch, to say what moved a policy's version. */
    private readonly changes: readonly Change[] = [],
    /** four_eyes: an approve is blocked when it would go as its batch's reviewer or its policy's creator. */
    readonly fourEyes = false,
  ) {}

  /** A tenant configuration PATCH: the fields git does not set go as the plan read them, so any change
   *  since (a field, version_id or last_modified_on) stops it (docs/decisions.md, "A tenant update
   *  meets a change made since the plan"); a configuration that already holds git's values is done. */
  update(
    c: Change,
    core: ApiCore = this.core,
  ): () => Promise<GuardVerdict<{ body: TenantConfigurationUpdateBody; ifMatch?: string; before: Record<string, unknown> }>> {
    return async () => {
      const p = c.payload;
      if (p?.kind !== "update") throw new TypeError("not an update");
      const env = (await tenantConfigurations.list(core)).find((e) => e.compliance_id === p.compliance_id);
      if (!env || env.compliance_name !== p.compliance_name) return blocked(`${c.address} no longer exists in the service`);
      const live = (env.compliance_spec?.[0] ?? {}) as Record<string, unknown>;
      const want = { ...shownUpdate(c), ...Object.fromEntries(c.diff.map((d) => [d.path, d.after])) };
      if (c.diff.length && Object.entries(want).every(([k, v]) => same(live[k], v))) return { already: "the service holds git's values" };
      const seen = seenFields(c);
      const fields = UPDATE_FIELDS.filter((k) => !same(live[k], seen[k])).map((k) => `${k} ${show(seen[k])} -> ${show(live[k])}`);
      const moved = [...fields, ...versionMoved(c, env)];
      if (moved.length) return blocked(`${c.address} changed in the service since the plan${whoWords(envelopeWho(env))}: ${moved.join(", ")}`);
      // Unchanged since the plan: the body is the fresh read with the reviewed diff on it (the payload,
      // checked equal to it before anything was sent).
      const item = { ...Object.fromEntries(UPDATE_FIELDS.map((k) => [k, live[k]])), ...want } as unknown as TenantConfigurationUpdateItem;
      this.log(`${c.address}: read again just now, unchanged since the plan; sending the update`);
      return { go: { body: updateBody({ ...p, item }, this.user, this.core.clock), before: live, ...(env.version_id ? { ifMatch: env.version_id } : {}) } };
    };
  }

  /** The SSP list, read right before a create's send: creates whose guards start while a read is in
   *  flight share it (one round trip old at most); a failed shared read makes each of them read for
   *  itself, so a read failing fails only the writes whose own read fails. */
  private async list(core: ApiCore): Promise<SspList> {
    const shared = this.listing;
    if (shared) {
      try {
        return await shared;
      } catch {
        return ssp.list(core);
      }
    }
    return this.startList(core);
  }

  private startList(core: ApiCore): Promise<SspList> {
    const mine = ssp.list(core);
    this.listing = mine;
    const done = (): void => {
      if (this.listing === mine) this.listing = undefined;
    };
    mine.then(done, done);
    return mine;
  }

  /** Differences between a live policy's batches and the values git sends with a create. */
  async createValues(p: Extract<Payload, { kind: "create" }>, live: SspEnvelope, core: ApiCore = this.core): Promise<string[]> {
    const out: string[] = [];
    const item = p.body.compliance_spec[0] as (SspCreateItem & { batches?: SspCreateBatch[] }) | undefined;
    for (const b of item?.batches ?? []) {
      const lb = live.compliance_spec?.[0]?.batches?.find((x) => batchNameOf(x) === b.batch_name);
      if (!lb) out.push(`batch ${b.batch_name} (missing)`);
      else if ((await this.valuesOf(p.body.compliance_name, lb, core)) !== valuesChecksum(b.ssp_values)) out.push(`batch ${b.batch_name} (values)`);
    }
    return out;
  }

  /** A create: the policy must not exist (unless it is git's policy already, values and all) and no
   *  active policy may hold its place in the hierarchy. */
  create(c: Change, core: ApiCore = this.core): () => Promise<GuardVerdict<null>> {
    return async () => {
      const p = c.payload;
      if (p?.kind !== "create") throw new TypeError("not a create");
      const name = p.body.compliance_name;
      const list = await this.list(core);
      const holder = hierarchyHolder(list, name, p.hierarchy_no);
      const clash = (h: SspEnvelope): string =>
        `hierarchy_no ${p.hierarchy_no} is held now by the active policy ${JSON.stringify(h.compliance_name)}${whoWords(envelopeWho(h))}; two policies in one place of the hierarchy make it undefined which one prices an order line`;
      if (list.some((e) => e.compliance_name === name)) {
        // The list carries no batches: what is compared with git's is the policy's own read, batches
        // and all (a retry of a create that landed finds it so, and goes on as "already").
        const existing = await ssp.get(core, name);
        if (existing) {
          const sent = p.body.compliance_spec[0];
          const differs = [...(sent ? createMismatch(sent, existing.compliance_spec?.[0]) : []), ...(await this.createValues(p, existing, core))];
          if (differs.length)
            return blocked(
              `${c.address} exists in the service now${whoWords(envelopeWho(existing))}, and differs from git's (${differs.join(", ")}); the plan was to create it`,
            );
          // git's policy, but not alone in its place of the hierarchy: never "already applied".
          if (holder) return blocked(`${c.address} is in the service as git has it, but ${clash(holder)}`);
          return { already: "the service holds git's policy and values" };
        }
      }
      if (holder) return blocked(clash(holder));
      this.log(`${c.address}: read again just now, not in the service; sending the create`);
      return { go: null };
    };
  }

  /** Who prepared the batch an approve moves forward (docs/decisions.md, "Four eyes"): its reviewer is the
   *  service's updated_by of a batch it shows reviewed (nothing else changes a reviewed batch), or this
   *  run's sign-in when this run reviewed it; its policy's creator is the envelope's created_by, or this
   *  run's sign-in when this run created it. */
  private preparers(c: Change, env: SspEnvelope, lb: SspItem, createdHere: boolean): Omit<FourEyesFacts, "approved_by"> {
    const named = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);
    const reviewed = lb.status === "reviewed" ? named(lb.updated_by) : null;
    return {
      reviewed_by: this.reviewedHere.has(c.address) ? this.user || reviewed : reviewed,
      policy_created_by: createdHere ? this.user || named(env.created_by) : named(env.created_by),
    };
  }

  /** The creates of this run that landed, for the one check after the last of them. */
  private readonly landedCreates: Change[] = [];
  private creationsChecked: Promise<Map<string, string> | { failed: string }> | undefined;

  /** A create landed (done, or confirmed by reading back). */
  created(c: Change): void {
    this.landedCreates.push(c);
  }

  /** Once every create of the run has ended: one read of the SSP list, sent after the last of them
   *  landed, finds each created policy that another active policy shares its hierarchy_no with now
   *  (someone else's create since the guard's read). Of two creates at one place made at once, at least
   *  one run's read sees the other's. Its words by the create's address; `failed` when the read failed. */
  checkCreations(core: ApiCore = this.core): Promise<Map<string, string> | { failed: string }> {
    if (!this.creationsChecked) {
      const creates = [...this.landedCreates];
      this.creationsChecked = creates.length
        ? ssp.list(core).then(
            (list) => {
              const clashes = new Map<string, string>();
              for (const c of creates) {
                const p = c.payload;
                if (p?.kind !== "create") continue;
                const holder = hierarchyHolder(list, p.body.compliance_name, p.hierarchy_no);
                if (!holder) continue;
                const who = {
                  modified_by: holder.created_by ?? holder.last_modified_by ?? null,
                  modified_on: isoOf(holder.created_on ?? holder.last_modified_on),
                };
                clashes.set(
                  c.address,
                  overwrittenWords(who, [
                    `the active policy ${JSON.stringify(holder.compliance_name)} holds hierarchy_no ${p.hierarchy_no} too, so which one prices an order line is undefined`,
                  ]),
                );
              }
              return clashes;
            },
            (e: unknown) => ({ failed: e instanceof Error ? e.message : String(e) }),
          )
        : Promise.resolve(new Map());
    }
    return this.creationsChecked;
  }

  private valuesOf(policy: string, lb: SspItem, core: ApiCore): Promise<string> {
    const file = typeof lb.file_id === "string" && lb.file_id ? lb.file_id : undefined;
    const read = (): Promise<string> => readBatchValues(core, policy, lb).then((v) => valuesChecksum(v));
    if (!file) return read();
    let sum = this.fileSums.get(file);
    if (!sum) {
      sum = read();
      this.fileSums.set(file, sum);
      sum.catch(() => this.fileSums.delete(file));
    }
    return sum;
  }

  /** A review or approve: the batch must still be where the plan saw it (status), the same upload
   *  (file_id) with the same values (checksum), of a policy at the version the plan read. A batch at
   *  the status the write asks for is done already. */
  batch(
    c: Change,
    action: "review" | "approve",
    created?: () => string | undefined,
    core: ApiCore = this.core,
    /** An approve's people, filled in at each read (four eyes). */
    facts?: FourEyesFacts,
  ): () => Promise<GuardVerdict<{ ifMatch?: string; id: string }>> {
    return async () => {
      const p = c.payload;
      if (p?.kind !== "batch") throw new TypeError("not a batch step");
      const policyAddr = address.ssp(p.policy);
      const env = await ssp.get(core, p.policy);
      if (!env || !env.compliance_id) return blocked(`${policyAddr} no longer exists in the service`);
      // The policy the plan read, or the one this run created (a policy of that name made by someone
      // else is not ours to move forward, whatever its values).
      if (p.compliance_id === null) {
        // The run's own create: the batch moves on only while its policy holds its place alone (the
        // graph starts it after every create of the run, so the one check after them has its answer).
        const checked = await this.checkCreations(core);
        const clash = "failed" in checked ? undefined : checked.get(policyAddr);
        if (clash) return blocked(`${policyAddr}, created by this run, was ${clash}`);
      }
      const ours = p.compliance_id ?? created?.();
      if (ours !== undefined && env.compliance_id !== ours) return blocked(`${policyAddr} is another policy of that name now${whoWords(envelopeWho(env))}`);
      const lb = env.compliance_spec?.[0]?.batches?.find((b) => batchNameOf(b) === p.batch);
      if (!lb) return blocked(`${c.address} no longer exists in the service`);
      const changed = ` changed in the service since the plan${whoWords(batchWho(lb), "batch last changed")}`;
      if (!p.values_checksum || (p.compliance_id !== null && p.file_id === undefined)) {
        return blocked(`${c.address}: the saved plan does not bind this batch to its values (it was made by an older revsync)`);
      }
      const fileId = typeof lb.file_id === "string" ? lb.file_id : null;
      if (p.compliance_id !== null && fileId !== p.file_id)
        return blocked(`${c.address}${changed}: file_id ${show(p.file_id)} -> ${show(fileId)}, a new upload nobody reviewed`);
      const fileOf = typeof lb.file_id === "string" && lb.file_id ? lb.file_id : undefined;
      if (p.compliance_id === null && fileOf && !this.fileSums.has(fileOf) && created?.() === env.compliance_id) {
        // This run's own create uploaded this batch with the values the plan binds (held to it before
        // anything was sent): the file it made holds them, with no download to say so.
        this.fileSums.set(fileOf, Promise.resolve(p.values_checksum));
      }
      if ((await this.valuesOf(p.policy, lb, core)) !== p.values_checksum)
        return blocked(`${c.address}${changed}: its values are not the ones the plan showed`);
      const target = action === "review" ? ["reviewed", "approved"] : ["approved"];
      if (typeof lb.status === "string" && target.includes(lb.status))
        return { already: "the service shows it, with the values the plan showed", status: lb.status };
      if (action === "approve" && facts)
        Object.assign(facts, this.preparers(c, env, lb, created?.() === env.compliance_id), { approved_by: core.auth.username ?? null });
      if (p.compliance_id !== null && !this.policyChecked.has(p.policy)) {
        // The policy's version, checked before this run's first write to it (its own writes move it after).
        const moved = versionMoved(c, env);
        if (moved.length)
          return blocked(
            `${policyAddr} changed in the service since the plan${whoWords(envelopeWho(env))}: ${moved.join(", ")}${policyMoves(p.policy, c, env, this.changes)}`,
          );
        this.policyChecked.add(p.policy);
      }
      // The plan's own create uploads the batch: its status is the one the create gave it.
      const expected = (c.before as { status?: unknown } | null)?.status ?? null;
      if (p.compliance_id !== null && lb.status !== expected) return blocked(`${c.address}${changed}: status ${show(expected)} -> ${show(lb.status)}`);
      // Four eyes, last: a batch changed since the plan is blocked for that, in its own words.
      const broken = action === "approve" && facts && this.fourEyes ? fourEyesBreach(facts, !!this.core.approverAuth) : undefined;
      if (broken && facts) {
        facts.rule = "blocked";
        return { blocked: broken };
      }
      this.log(`${c.address}: read again just now, unchanged since the plan; sending the ${action}`);
      return { go: { id: env.compliance_id, ...(env.version_id ? { ifMatch: env.version_id } : {}) } };
    };
  }
}

/** Another active policy that holds `hierarchy_no`, of a name other than `name`. */
function hierarchyHolder(list: SspList, name: string, hierarchyNo: number): SspEnvelope | undefined {
  return list.find((e) => {
    const item = e.compliance_spec?.[0];
    return e.compliance_name !== name && item?.hierarchy_no === hierarchyNo && item.active !== false;
  });
}

/** What moved a policy's version, where its batches show it: each batch whose status or upload differs
 *  from what the plan saw of it, and each batch changed after the plan's read of the policy, with who
 *  and when (" (batch FY26-H2 file uploaded -> reviewed by bob at …)"). Says so when none shows it. */
export function policyMoves(policy: string, c: Change, env: SspEnvelope, changes: readonly Change[]): string {
  const seen = new Map<string, { status?: unknown; file_id?: string | null }>();
  for (const x of changes) {
    if (x.payload?.kind !== "batch" || x.payload.policy !== policy) continue;
    const before = (x.before ?? {}) as { status?: unknown };
    const prior = seen.get(x.payload.batch) ?? {};
    seen.set(x.payload.batch, { status: prior.status ?? before.status, file_id: prior.file_id ?? x.payload.file_id });
  }
  const since = c.last_modified_on;
  const out: string[] = [];
  const liveNames = new Set<string>();
  for (const lb of env.compliance_spec?.[0]?.batches ?? []) {
    const name = batchNameOf(lb);
    if (!name) continue;
    liveNames.add(name);
    const was = seen.get(name);
    const parts: string[] = [];
    if (was?.status !== undefined && was.status !== lb.status) parts.push(`${String(was.status)} -> ${String(lb.status)}`);
    const file = typeof lb.file_id === "string" ? lb.file_id : null;
    if (was?.file_id != null && was.file_id !== file) parts.push(`file_id ${show(was.file_id)} -> ${show(file)}`);
    const later = since != null && typeof lb.updated_at === "number" && lb.updated_at > since;
    if (!parts.length && later) parts.push(`${String(lb.status ?? "changed")} now`);
    if (!parts.length) continue;
    const who = batchWho(lb);
    out.push(`batch ${name} ${parts.join(", ")}${who.modified_by ? ` by ${who.modified_by}` : ""}${who.modified_on ? ` at ${shortIso(who.modified_on)}` : ""}`);
  }
  for (const name of seen.keys()) if (!liveNames.has(name)) out.push(`batch ${name} no longer in the service`);
  return out.length ? ` (${out.join("; ")})` : " (none of its batches shows what moved: a field of the policy itself may have)";
}

/** The fix of an approve that would go (or went) as its preparer: an approver identity, or another one. */
const approverFix = (as: string, approverConfigured: boolean): string =>
  approverConfigured ? APPROVER_FIX.replace("to another user", `to a user other than ${as}`) : APPROVER_FIX;

/** Why four eyes forbids an approve that would go as `facts.approved_by`, in words that start "blocked:
 *  four eyes:" and give the fix; undefined when it may go. Who cannot be named cannot be shown to be
 *  another person: an approve whose reviewer or approver is unknown is blocked too. */
export function fourEyesBreach(facts: FourEyesFacts, approverConfigured: boolean): string | undefined {
  const as = facts.approved_by;
  const why = !as
    ? `the approve would go as a user its token does not name, so nobody can show it is not its preparer`
    : !facts.reviewed_by
      ? `the service does not say who reviewed this batch (it names no updated_by), so nobody can show it was not ${as}`
      : sameUser(as, facts.reviewed_by)
        ? `${facts.reviewed_by} reviewed this batch and the approve would go as ${as}`
        : sameUser(as, facts.policy_created_by)
          ? `${facts.policy_created_by} created its policy and the approve would go as ${as}`
          : undefined;
  if (!why) return undefined;
  const fix = as ? approverFix(as, approverConfigured) : `set REVSYNC_${approverConfigured ? "APPROVER_" : ""}USER to the user the token signs in as`;
  return `blocked: four eyes: ${why}; nothing was sent for it; fix: ${fix} and apply again (what this run did stays done)`;
}

/** The service's refusal of an approve sent as the batch's reviewer or its policy's creator, explained: a
 *  service that holds four eyes refuses exactly that, as a permission (403) or in its answer's error array
 *  (the interface's way of refusing, whatever the status). Other refusals (a conflict, a stale version,
 *  an unknown batch) are not the rule's and keep their own words. */
function fourEyesRefusal(facts: FourEyesFacts, approverConfigured: boolean, error: ApiError): string | undefined {
  const as = facts.approved_by;
  const who = sameUser(as, facts.reviewed_by) ? "reviewed this batch" : sameUser(as, facts.policy_created_by) ? "created its policy" : undefined;
  const permission = error.status === 403 || (error.status >= 200 && error.status < 300);
  if (!as || !who || !permission) return undefined;
  const fix = approverFix(as, approverConfigured);
  const said = `${error.status && error.status !== 200 ? `${error.status}: ` : ""}${error.serviceMessage}`;
  return `refused by the four-eyes rule: ${as} ${who} and the approve went as ${as} (the service: ${said}); fix: ${fix} and apply again (the review is done and is not sent again)`;
}

/** Before anything is sent: the approver identity is another user than revsync's sign-in (an approver
 *  that is the same user would approve what that user prepared), and under four eyes a user whose name
 *  can be told. */
export function checkApprover(core: ApiCore, plan: Plan, fourEyes: boolean): void {
  const approver = core.approverAuth;
  if (!approver) return;
  if (sameUser(approver.username, core.auth.username)) {
    throw new UserError(
      `the approver identity is ${approver.username}, the same user as revsync's own sign-in: approves would go as the user who prepared them, so nothing was sent`,
      "set REVSYNC_APPROVER_USERNAME and REVSYNC_APPROVER_PASSWORD (or REVSYNC_APPROVER_TOKEN) to another user than REVSYNC_USERNAME, or unset them",
    );
  }
  if (fourEyes && !approver.username && plan.changes.some((c) => c.action === "approve")) {
    throw new UserError(
      "four eyes: the approver's token names no user, so nobody can show that approves go as someone other than who prepared them; nothing was sent",
      "set REVSYNC_APPROVER_USER to the approver's user id in the service",
    );
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

/** A write's outcome in the apply report's words: a landed write is the message of a done step; any
 *  other is thrown (the step fails with it). */
export function outcomeWords(action: keyof typeof DONE, o: WriteOutcome<unknown>): string {
  if (o.kind === "done") return o.unchecked ? `${DONE[action]} (${o.unchecked})` : DONE[action];
  if (o.kind === "already") return `already ${o.status ?? "applied"} (${o.why}; nothing was sent)`;
  if (o.kind === "confirmed")
    return `${action === "create" ? "created" : (o.status ?? DONE[action])} (${o.why}; confirmed by reading it back${o.unchecked ? `; ${o.unchecked}` : ""})`;
  if (o.kind === "blocked" || o.kind === "overwritten") throw new StepFailed(o.reason);
  if (o.kind === "unknown" && !/outcome unknown/.test(o.error.message)) throw new StepFailed(`outcome unknown: ${o.error.message}`);
  throw o.error;
}

/** A step that ended without its write landing, in words, with its outcome's kind. */
class StepFailed extends Error {
  constructor(
    message: string,
    readonly outcome?: string,
  ) {
    super(message);
  }
}

/** A write's outcome as a step's result: its words and its kind; a write that did not land fails the
 *  step, with both. */
function stepResult(action: keyof typeof DONE, o: WriteOutcome<unknown>): StepResult {
  try {
    return { message: outcomeWords(action, o), outcome: o.kind };
  } catch (e) {
    throw new StepFailed(e instanceof Error ? e.message : String(e), o.kind);
  }
}

/** One step: the write unit guards, sends and settles its write; the step reads the outcome. An approve
 *  goes as the approver identity (four eyes), everything else as revsync's sign-in. */
async function execute(core: ApiCore, guards: Guards, step: Step, createdIds: Map<string, string>): Promise<StepResult> {
  const c = step.change;
  const p = c.payload;
  if (!p) throw new UserError(`${c.address}: the plan carries no payload for ${c.action}`);
  if (p.kind === "update") return stepResult("update", await writes.update(core, p.compliance_id, guards.update(c, core)));
  if (p.kind === "create") {
    const o = await writes.create(core, p.body, guards.create(c, core), (live) => guards.createValues(p, live, core));
    if (o.kind === "done" || o.kind === "confirmed") {
      createdIds.set(p.body.compliance_name, o.result.compliance_id);
      guards.created(c);
    }
    return stepResult("create", o);
  }
  const action = c.action === "review" ? "review" : "approve";
  // The policy's id comes with the guard's read (a policy this run created has one only now).
  const id = p.compliance_id ?? createdIds.get(p.policy) ?? "";
  if (action === "review") {
    const guard = guards.batch(c, action, () => createdIds.get(p.policy), core);
    const o = await writes.batchAction(core, action, { id, name: p.policy }, p.batch, guard);
    if (o.kind === "done" || o.kind === "confirmed") guards.reviewedHere.add(c.address);
    return stepResult(action, o);
  }
  const approver = core.asApprover();
  const facts: FourEyesFacts = { reviewed_by: null, policy_created_by: null, approved_by: approver.auth.username ?? null };
  const guard = guards.batch(c, action, () => createdIds.get(p.policy), approver, facts);
  const o = await writes.batchAction(approver, action, { id, name: p.policy }, p.batch, guard);
  const refused = o.kind === "refused" ? fourEyesRefusal(facts, !!core.approverAuth, o.error) : undefined;
  if (refused) facts.rule = "refused";
  try {
    if (refused) throw new StepFailed(refused, o.kind);
    const r = stepResult(action, o);
    const r2 = typeof r === "string" ? { message: r } : r;
    // Who sent it, once there are two identities or the rule to keep: "approved as bob (reviewed by alice)".
    const who =
      (core.approverAuth || guards.fourEyes) && (o.kind === "done" || o.kind === "confirmed")
        ? ` as ${facts.approved_by ?? "a user the token does not name"} (reviewed by ${facts.reviewed_by ?? "a user the service does not name"})`
        : "";
    return { ...r2, message: `${r2.message}${who}`, four_eyes: facts };
  } catch (e) {
    throw Object.assign(e instanceof StepFailed ? e : new StepFailed(e instanceof Error ? e.message : String(e)), { four_eyes: facts });
  }
}

export interface ApplyOptions {
  concurrency: number;
  isStopping: () => boolean;
  onStart?: (step: Step) => void;
  onFinish?: (o: StepOutcome, done: number, total: number) => void;
  /** The verbose log. */
  log?: (line: string) => void;
  /** Tag each step's requests (its guard's reads, its sends, its read-backs) with stepTag(its change),
   *  for the client's request observer (apply --evidence). */
  tagRequests?: boolean;
  /** four_eyes of revsync.yaml: no batch is approved by its reviewer or its policy's creator. */
  fourEyes?: boolean;
}

/** A step's outcome as the report lists it. */
export function reportEntry(o: StepOutcome): ApplyReport["outcomes"][number] {
  return {
    address: o.step.change.address,
    action: o.step.change.action,
    status: o.status,
    outcome: outcomeOf(o),
    message: o.message,
    ...(o.four_eyes ? { four_eyes: o.four_eyes } : {}),
  };
}

/** The tag of a step's requests: the change it applies (a batch's review and approve share an address). */
export const stepTag = (c: Pick<Change, "action" | "address">): string => `${c.action} ${c.address}`;

/** Applies the plan's writes in dependency order. Each write is checked right before every send of it
 *  (Guards): the plan may have been saved a while ago, or the service changed while the prompt, or a
 *  Retry-After, waited. */
export async function applyPlan(core: ApiCore, plan: Plan, opts: ApplyOptions): Promise<ApplyReport> {
  checkPayloads(plan);
  const user = requireUser(core, plan) ?? "";
  checkApprover(core, plan, !!opts.fourEyes);
  const steps = buildSteps(plan);
  const created = new Map<string, string>();
  const guards = new Guards(core, user, opts.log, plan.changes, !!opts.fourEyes);
  let finished = 0;
  // No retry here: each write is one write unit (src/api/write.ts), with one budget.
  // Each step's requests are sent through a view of the client that names its change, passed down
  // explicitly (an async context would tag them too, at a cost on every promise of the run).
  const outcomes = await schedule(steps, (s) => execute(opts.tagRequests ? core.tagged(stepTag(s.change)) : core, guards, s, created), {
    concurrency: opts.concurrency,
    isStopping: opts.isStopping,
    onStart: opts.onStart,
    onFinish: (o) => opts.onFinish?.(o, ++finished, steps.length),
  });
  // The one check after the run's creates (Guards.checkCreations; done already when a batch step of a
  // created policy asked): a create that shares its place in the hierarchy now was undone, not done.
  const checked = await guards.checkCreations(core);
  for (const o of outcomes) {
    if (o.step.change.action !== "create" || o.status !== "done") continue;
    if ("failed" in checked) o.message = `${o.message} (not read again after the run's creates: ${checked.failed})`;
    else {
      const clash = checked.get(o.step.change.address);
      if (clash) Object.assign(o, { status: "failed", outcome: "overwritten", message: clash });
    }
  }
  const entries = outcomes.map(reportEntry);
  return { environment: plan.environment, outcomes: entries, summary: countOutcomes(entries), interrupted: opts.isStopping() };
}
