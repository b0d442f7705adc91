/** The write of an envelope, whole: the PATCH's payload as the plan fixed it, the guard that reads before
 *  every send, the request, the read-back and the check after it, given to the write unit
 *  (src/api/write.ts). docs/decisions.md, "A tenant update meets a change made since the plan". */
import type { Clock } from "../../api/clock.js";
import type { ApiCore } from "../../api/core.js";
import { runWrite, type GuardOf, type Write, type WriteOutcome } from "../../api/write.js";
import { sameJson } from "../../canonical-json.js";
import { UserError } from "../../errors.js";
import type { Change, Payload } from "../../shared/entries.js";
import { envelopeWho, sameUser, whoWords } from "../../shared/who.js";
import type { ApplyRun, KindApply, WriteResult } from "../kind.js";
import { blocked, concurrentWords, overwrittenWords, show, versionMoved, versionSteps } from "../words.js";
import { bodyFields, type Envelope, type EnvelopeList } from "./list.js";
import { envelopeService, type EnvelopeUpdateBody, type EnvelopeUpdateResult } from "./service.js";

/** What apply sends for an update: the envelope's id and names, and the item's fields as the plan read
 *  them with git's on top. */
export interface UpdatePayload extends Payload {
  kind: "update";
  compliance_id: string;
  compliance_name: string;
  unique_key: string;
  item: Record<string, unknown>;
}

/** The schema of a saved plan's update payload (src/plan/schema.ts): its item is the PATCH's item. */
export const updatePayloads = (l: Pick<EnvelopeList, "schemas">) =>
  ({
    update: {
      actions: ["update"],
      schema: {
        type: "object",
        required: ["kind", "compliance_id", "compliance_name", "unique_key", "item"],
        additionalProperties: false,
        properties: {
          kind: { const: "update" },
          compliance_id: { type: "string", minLength: 1 },
          compliance_name: { type: "string" },
          unique_key: { type: "string" },
          item: typeof l.schemas.item === "string" ? { $ref: `#/definitions/${l.schemas.item}` } : l.schemas.item,
        },
      },
    },
  }) as const;

/** A change's update payload, where it carries one. */
export const updatePayload = (c: Pick<Change, "payload">): UpdatePayload | undefined =>
  c.payload?.kind === "update" ? (c.payload as UpdatePayload) : undefined;

/** The update body's fields as the plan read them: the payload carries the live values overlaid with
 *  git's, and `before` the live values of git's fields. */
export function seenFields(c: Change): Record<string, unknown> {
  const p = updatePayload(c);
  if (!p) return {};
  const seen: Record<string, unknown> = { ...p.item };
  const before = (c.before ?? {}) as Record<string, unknown>;
  for (const k of Object.keys((c.after ?? {}) as object)) seen[k] = before[k];
  return seen;
}

/** The values git's fields take after the update, as the reviewed diff shows them: a field the diff
 *  names takes the diff's value, every other field git sets keeps the value the plan read. */
export function shownUpdate(c: Change): Record<string, unknown> {
  const before = (c.before ?? {}) as Record<string, unknown>;
  const after = (c.after ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  // A field the service showed no value for was not compared: it goes as git sets it (the entry says so).
  for (const k of Object.keys(after)) out[k] = before[k] === null || before[k] === undefined ? after[k] : before[k];
  for (const d of c.diff) out[d.path] = d.after;
  return out;
}

/** The body of a PATCH: the plan's fields, the signed-in user, and the run's clock for current_timestamp
 *  (epoch seconds, as text). */
export function updateBody(p: Pick<UpdatePayload, "compliance_name" | "unique_key"> & { item: object }, user: string, clock: Clock): EnvelopeUpdateBody {
  return {
    user_name: user,
    current_timestamp: String(Math.floor(clock.now() / 1000)),
    format_type: "JSON",
    compliance_name: p.compliance_name,
    unique_key: p.unique_key,
    compliance_spec: [p.item],
  };
}

/** The signed-in user, whom a PATCH names (user_name): required when the plan holds an update; checked
 *  before anything is sent. */
export function requireUser(l: Pick<EnvelopeList, "what">, changes: readonly Change[], core: ApiCore): void {
  if (!core.auth.username && changes.some((c) => c.action === "update")) {
    throw new UserError(
      `the ${l.what} update names the user who makes it (user_name), and this sign-in gives none: the token carries no preferred_username or sub claim`,
      "set REVSYNC_USER to your user id in the service",
    );
  }
}

/** What the guard gives each send: the body (rebuilt from its fresh read), the If-Match, and the fields and
 *  the version_id as read right before it (for the read-back and the check after the write). */
export type UpdateRead = { body: EnvelopeUpdateBody; ifMatch?: string; before?: Record<string, unknown>; version?: string | null };

/** The guard: the fields git does not set go as the plan read them, so any change since (a field,
 *  version_id or last_modified_on) stops the write; an envelope that holds git's values already is done.
 *  The body is the fresh read with the reviewed diff on it (the payload, held equal to it before anything
 *  was sent). */
function updateGuard(l: EnvelopeList, c: Change, p: UpdatePayload, core: ApiCore, run: Pick<ApplyRun, "user" | "log">): GuardOf<UpdateRead> {
  return async () => {
    const list = await envelopeService(l).list(core);
    const env = list.find((e) => e.compliance_id === p.compliance_id);
    if (!env || env.compliance_name !== p.compliance_name) return blocked(`${c.address} no longer exists in the service`);
    // A copy of the name made since the plan: git's file could mean either (a name held twice addresses nothing).
    const copies = list.filter((e) => e.compliance_name === p.compliance_name).length;
    if (copies > 1) return blocked(`the service holds ${copies} ${l.whats} named ${JSON.stringify(p.compliance_name)} now, not one as the plan saw`);
    const live = (env.compliance_spec?.[0] ?? {}) as Record<string, unknown>;
    const want = { ...shownUpdate(c), ...Object.fromEntries(c.diff.map((d) => [d.path, d.after])) };
    if (c.diff.length && Object.entries(want).every(([k, v]) => sameJson(live[k], v))) return { already: "the service holds git's values" };
    const seen = seenFields(c);
    const fields = bodyFields(l);
    const moved = [...fields.filter((k) => !sameJson(live[k], seen[k])).map((k) => `${k} ${show(seen[k])} -> ${show(live[k])}`), ...versionMoved(c, env)];
    if (moved.length) return blocked(`${c.address} changed in the service since the plan${whoWords(envelopeWho(env))}: ${moved.join(", ")}`);
    const item = { ...Object.fromEntries(fields.map((k) => [k, live[k]])), ...want };
    run.log(`${c.address}: read again just now, unchanged since the plan; sending the update`);
    const body = updateBody({ ...p, item }, run.user, core.clock);
    return { go: { body, before: live, version: env.version_id ?? null, ...(env.version_id ? { ifMatch: env.version_id } : {}) } };
  };
}

/** How far revsync's own writes move a version_id, as this run has seen them (the spec promises no step:
 *  a counter shared with other resources moves by more than one): the smallest move of a write of the
 *  run's own that nobody else's could have met, once one is known. */
export interface VersionSteps {
  known?: number;
}

/** Whether a version that moved by `steps` over revsync's one write, last changed by revsync's own user
 *  (or nobody named), shows someone else's write too: a move of 1 cannot; a move equal to the step this
 *  run's own writes make does not; a larger one does; without a known step, whether it does could not be
 *  told (said, never guessed either way). The move then teaches the step to the run's later writes. */
function versionVerdict(steps: number, calibrated: VersionSteps): "alone" | "met" | "could not tell" {
  if (steps <= 1) return "alone";
  const known = calibrated.known;
  if (known === undefined || steps < known) calibrated.known = steps;
  if (known === undefined) return "could not tell";
  return steps > known ? "met" : "alone";
}

/** After a write that landed: a field the service holds otherwise than sent was written over since, by
 *  someone else (a null the service answers tells nothing, as the interface allows it); a version that
 *  moved by more than the run's own step shows a write made at the same time. */
function afterWrite(
  l: EnvelopeList,
  env: Envelope | undefined,
  live: Record<string, unknown>,
  sent: Record<string, unknown>,
  seen: { version: string | null | undefined; user: string },
  calibrated: VersionSteps,
): string | { unchecked: string } | undefined {
  if (!env) return `the ${l.what} is no longer in the service after revsync's write`;
  const moved = Object.entries(sent)
    .filter(([k, v]) => live[k] !== null && live[k] !== undefined && !sameJson(live[k], v))
    .map(([k, v]) => `${k} ${JSON.stringify(v)} -> ${JSON.stringify(live[k])}`);
  if (moved.length) return overwrittenWords(envelopeWho(env), moved);
  const steps = versionSteps(seen.version, env.version_id);
  if (steps === undefined || steps <= 1) return undefined;
  const who = envelopeWho(env);
  const concurrent = concurrentWords(String(seen.version), String(env.version_id), who, seen.user);
  // Someone else named as the last to change it wrote after revsync did, whatever the step.
  if (who.modified_by && !sameUser(who.modified_by, seen.user)) return concurrent;
  const verdict = versionVerdict(steps, calibrated);
  if (verdict === "met") return concurrent;
  if (verdict === "alone") return undefined;
  return {
    unchecked: `version_id went from ${String(seen.version)} to ${String(env.version_id)} over revsync's one write; whether someone else wrote meanwhile could not be told: the service's version_id steps are not known (the spec promises none, and this run made no earlier write to learn them from); the fields it sent hold`,
  };
}

/** An envelope's PATCH, through the write unit. The guard gives the body of each send and the If-Match.
 *  A send that may have landed is settled by reading the envelope: landed when it holds every field the
 *  last send set, not landed when it holds every such field as before. After it landed, it is read again
 *  and checked (afterWrite). */
export function updateUnit(
  l: EnvelopeList,
  core: ApiCore,
  id: string,
  guard: GuardOf<UpdateRead>,
  calibrated: VersionSteps = {},
): Write<EnvelopeUpdateResult, UpdateRead> {
  const service = envelopeService(l);
  let sent: Record<string, unknown> = {};
  let before: Record<string, unknown> | undefined;
  let seen: { version: string | null | undefined; user: string } = { version: undefined, user: "" };
  const empty: EnvelopeUpdateResult = { compliance_id: id, compliance_details: [], error: [] };
  const read = async (): Promise<{ env?: Envelope; live: Record<string, unknown> }> => {
    const env = (await service.list(core)).find((x) => x.compliance_id === id);
    return { env, live: (env?.compliance_spec?.[0] ?? {}) as Record<string, unknown> };
  };
  return {
    guard,
    maxSends: core.sendBudget,
    request: (r) => {
      sent = (r.body.compliance_spec[0] ?? {}) as Record<string, unknown>;
      before = r.before;
      seen = { version: r.version, user: r.body.user_name };
      return service.updateRequest(id, r.body, r.ifMatch);
    },
    result: (body) => (body as EnvelopeUpdateResult | undefined) ?? empty,
    readBack: async () => {
      const { live } = await read();
      if (Object.entries(sent).every(([k, v]) => sameJson(live[k], v))) return { landed: true, result: empty };
      // As the guard read it right before the send: the write did not land (its guard runs again).
      const b = before;
      if (b && Object.keys(sent).every((k) => sameJson(live[k], b[k]))) return { landed: false };
      return { other: `the ${l.what} holds neither the new values nor those read right before the write` };
    },
    check: async () => {
      const { env, live } = await read();
      return afterWrite(l, env, live, sent, seen, calibrated);
    },
  };
}

/** A PATCH through the write unit, guarded by `guard`. */
export const updateWrite = (l: EnvelopeList, core: ApiCore, id: string, guard: GuardOf<UpdateRead>): Promise<WriteOutcome<EnvelopeUpdateResult>> =>
  runWrite(core, updateUnit(l, core, id, guard));

/** The updates of one apply run. */
export class EnvelopeApply implements KindApply {
  /** The version steps this run's own writes showed (shared by its updates). */
  private readonly steps: VersionSteps = {};
  constructor(
    private readonly l: EnvelopeList,
    private readonly run: Pick<ApplyRun, "user" | "log">,
  ) {}

  /** One step: the update of `c`, guarded before every send, through the write unit. */
  async write(c: Change, core: ApiCore): Promise<WriteResult> {
    const p = updatePayload(c);
    if (!p) throw new UserError(`${c.address}: the plan carries no update payload for ${c.action}`);
    const unit = updateUnit(this.l, core, p.compliance_id, updateGuard(this.l, c, p, core, this.run), this.steps);
    return { outcome: await runWrite(core, unit) };
  }
}
