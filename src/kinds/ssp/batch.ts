/** The review or approve of an SSP batch, whole: the guard that reads the policy before every send (the
 *  batch where the plan saw it, its upload and values, the policy's version, four eyes), the PATCH, and
 *  the read-back of the batch's status, given to the write unit (src/api/write.ts). */
import type { ApiCore } from "../../api/core.js";
import { ssp } from "../../api/resources.js";
import { runWrite, type GuardOf, type GuardVerdict, type WriteOutcome } from "../../api/write.js";
import type { SspEnvelope, SspItem, SspUpdateResult } from "../../schema/generated/api.js";
import { ApiError } from "../../errors.js";
import type { Change, FourEyesFacts } from "../../shared/entries.js";
import { batchNameOf } from "../../shared/address.js";
import { batchWho, envelopeWho, shortIso, whoWords } from "../../shared/who.js";
import type { WriteResult } from "../kind.js";
import { blocked, show, versionMoved } from "../words.js";
import { approveWords, fourEyesBreach, runPreparers } from "./four-eyes.js";
import { batchPayload, type BatchPayload } from "./payload.js";
import { fileIdOf, sspAddress } from "./read.js";
import { checkCreations } from "./create.js";
import type { BoundCheck, SspRun } from "./state.js";

type Action = "review" | "approve";
type BatchRead = { ifMatch?: string; id?: string };

/** A review or approve, through the write unit. A send that may have landed is settled by reading the
 *  batch: at the target status, landed; at the status before it, not landed. A definite refusal of a
 *  first send (a 409, a 2xx with an error array; a 412 through the guard) reads the batch: at the target status (someone else moved it first), already, with the status that answered
 *  revsync's send; otherwise refused. `seen` is given the batch as the service shows it right after a write
 *  that landed, or when a 409 finds it moved by someone else. */
export function batchWrite(
  core: ApiCore,
  action: Action,
  policy: { id: string; name: string },
  batchName: string,
  guard: GuardOf<BatchRead> = async () => ({ go: {} }),
  seen?: (batch: SspItem | undefined) => void,
): Promise<WriteOutcome<SspUpdateResult>> {
  // The guard's read may give the policy's id (a policy this run created has one only now).
  let id = policy.id;
  const target = action === "review" ? ["reviewed", "approved"] : ["approved"];
  const answer = (status: string): SspUpdateResult => ({
    compliance_id: id,
    compliance_details: [{ error: [], message: status, unique_key: policy.name }],
    error: [],
  });
  return runWrite<SspUpdateResult, BatchRead>(core, {
    guard,
    maxSends: core.sendBudget,
    request: (read) => {
      id = read.id ?? id;
      return ssp.batchActionRequest(action, id, batchName, read.ifMatch);
    },
    result: (b) => (b as SspUpdateResult | undefined) ?? answer(action === "review" ? "reviewed" : "approved"),
    readBack: async () => {
      const status = (await ssp.batch(core, policy.name, batchName))?.status;
      if (status && target.includes(status)) return { landed: true, status, result: answer(status) };
      return { landed: false };
    },
    firstRefusal: async (err) => {
      // A 409, or the interface's refusal whatever the status (a 2xx with an error array): someone else's
      // move may have come first. (A 412 goes back to the guard, which reads the batch itself.)
      if (err.status !== 409 && !(err.status >= 200 && err.status < 300)) return undefined;
      const batch = await ssp.batch(core, policy.name, batchName).catch(() => undefined);
      const status = batch?.status;
      if (!status || !target.includes(status)) return undefined;
      seen?.(batch);
      return { kind: "already", status, why: `the service shows it ${madeBy(batch)}`, answered: err.status };
    },
    // The batch as the service holds it right after the write landed, for whoever asked to see it (an
    // approve: who the service shows approved it).
    ...(seen
      ? {
          check: async () => {
            seen(await ssp.batch(core, policy.name, batchName));
            return undefined;
          },
        }
      : {}),
  });
}

/** "approved by alice at 2026-…Z": a batch's status and who moved it there last and when, as the service
 *  shows it (nothing changes a batch after it is approved, so its updated_by then is its approver). */
function madeBy(lb: SspItem): string {
  const who = batchWho(lb);
  return `${String(lb.status)}${who.modified_by ? ` by ${who.modified_by}` : ""}${who.modified_on ? ` at ${shortIso(who.modified_on)}` : ""}`;
}

/** What moved a policy's version, where its batches show it: each batch whose status or upload differs
 *  from what the plan saw of it, and each batch changed after the plan's read of the policy, with who
 *  and when (" (batch FY26-H2 file uploaded -> reviewed by bob at …)"). Says so when none shows it. */
export function policyMoves(policy: string, c: Change, env: SspEnvelope, changes: readonly Change[]): string {
  const seen = new Map<string, { status?: unknown; file_id?: string | null }>();
  for (const x of changes) {
    const p = batchPayload(x);
    if (!p || p.policy !== policy) continue;
    const prior = seen.get(p.batch) ?? {};
    seen.set(p.batch, { status: prior.status ?? (x.before as { status?: unknown } | null)?.status, file_id: prior.file_id ?? p.file_id });
  }
  const out: string[] = [];
  const liveNames = new Set<string>();
  for (const lb of env.compliance_spec?.[0]?.batches ?? []) {
    const name = batchNameOf(lb);
    if (!name) continue;
    liveNames.add(name);
    const was = seen.get(name);
    const parts: string[] = [];
    if (was?.status !== undefined && was.status !== lb.status) parts.push(`${String(was.status)} -> ${String(lb.status)}`);
    const file = fileIdOf(lb) ?? null;
    if (was?.file_id != null && was.file_id !== file) parts.push(`file_id ${show(was.file_id)} -> ${show(file)}`);
    const later = c.last_modified_on != null && typeof lb.updated_at === "number" && lb.updated_at > c.last_modified_on;
    if (!parts.length && later) parts.push(`${String(lb.status ?? "changed")} now`);
    if (!parts.length) continue;
    const who = batchWho(lb);
    out.push(`batch ${name} ${parts.join(", ")}${who.modified_by ? ` by ${who.modified_by}` : ""}${who.modified_on ? ` at ${shortIso(who.modified_on)}` : ""}`);
  }
  for (const name of seen.keys()) if (!liveNames.has(name)) out.push(`batch ${name} no longer in the service`);
  return out.length ? ` (${out.join("; ")})` : " (none of its batches shows what moved: a field of the policy itself may have)";
}

/** The batch the plan saw, and its upload: its file and values the ones the plan showed. Undefined when
 *  they are; the verdict that stops the write when not. */
async function sameUpload(
  run: SspRun,
  c: Change,
  p: BatchPayload,
  read: { env: SspEnvelope; lb: SspItem; core: ApiCore },
  bound: BoundCheck,
): Promise<{ blocked: string } | undefined> {
  const { env, lb, core } = read;
  const changed = ` changed in the service since the plan${whoWords(batchWho(lb), "batch last changed")}`;
  if (!p.values_checksum || (p.compliance_id !== null && p.file_id === undefined))
    return blocked(`${c.address}: the saved plan does not bind this batch to its values (it was made by an older revsync)`);
  const fileId = fileIdOf(lb) ?? null;
  if (p.compliance_id !== null && fileId !== p.file_id)
    return blocked(`${c.address}${changed}: file_id ${show(p.file_id)} -> ${show(fileId)}, a new upload nobody reviewed`);
  if (p.compliance_id === null && fileId && !run.fileSums.has(fileId) && run.createdIds.get(p.policy) === env.compliance_id) {
    // This run's own create uploaded this batch with the values the plan binds (held to it before
    // anything was sent): the file it made holds them, with no download to say so.
    run.fileSums.set(fileId, Promise.resolve(p.values_checksum));
  }
  const [otherwise] = (await bound(env, core)).batches;
  if (otherwise) return blocked(`${c.address}${changed}: its values are not the ones the plan showed (${otherwise.why})`);
  return undefined;
}

/** The policy's version, checked before this run's first write to it (its own writes move it after), and
 *  the batch's status, where the plan saw the policy in the service. */
function samePolicy(run: SspRun, c: Change, p: BatchPayload, env: SspEnvelope, lb: SspItem): { blocked: string } | undefined {
  if (p.compliance_id === null) return undefined;
  if (!run.policyChecked.has(p.policy)) {
    const what = (): string => policyMoves(p.policy, c, env, run.run.changes);
    const moved = versionMoved(c, env);
    if (moved.length)
      return blocked(`${sspAddress.policy(p.policy)} changed in the service since the plan${whoWords(envelopeWho(env))}: ${moved.join(", ")}${what()}`);
    run.policyChecked.add(p.policy);
  }
  const expected = (c.before as { status?: unknown } | null)?.status ?? null;
  if (lb.status !== expected)
    return blocked(
      `${c.address} changed in the service since the plan${whoWords(batchWho(lb), "batch last changed")}: status ${show(expected)} -> ${show(lb.status)}`,
    );
  return undefined;
}

/** A name held twice since the plan addresses nothing: the batch's reads go by the policy's name, its
 *  PATCH by the batch's name alone. The verdict that stops the write, or undefined. */
function heldTwiceNow(all: readonly SspEnvelope[], p: BatchPayload, action: Action): { blocked: string } | undefined {
  if (all.length > 1) return blocked(`the service holds ${all.length} SSP policies named ${JSON.stringify(p.policy)} now, not one as the plan saw`);
  const twice = (all[0]?.compliance_spec?.[0]?.batches ?? []).filter((b) => batchNameOf(b) === p.batch).length;
  if (twice > 1)
    return blocked(
      `the service holds ${twice} batches named ${JSON.stringify(p.batch)} in ${JSON.stringify(p.policy)} now, and the ${action} names the batch only by its name`,
    );
  return undefined;
}

/** The guard of a review or approve: the batch must still be where the plan saw it (status), the same
 *  upload (file_id) with the same values (checksum), of a policy at the version the plan read, and, for an
 *  approve under four eyes, not sent as its preparer. A batch at the status the write asks for is done
 *  already. */
function batchGuard(
  run: SspRun,
  c: Change,
  p: BatchPayload,
  step: { action: Action; core: ApiCore; bound: BoundCheck; facts: FourEyesFacts | undefined; seen?: (lb: SspItem) => void; sending?: (lb: SspItem) => void },
): GuardOf<{ ifMatch?: string; id: string }> {
  const { action, core, bound, facts } = step;
  return async (): Promise<GuardVerdict<{ ifMatch?: string; id: string }>> => {
    const policyAddr = sspAddress.policy(p.policy);
    const all = await ssp.getAll(core, p.policy);
    const env = all[0];
    if (!env || !env.compliance_id) return blocked(`${policyAddr} no longer exists in the service`);
    const twice = heldTwiceNow(all, p, action);
    if (twice) return twice;
    if (p.compliance_id === null) {
      // The run's own create: the batch moves on only while its policy holds its place alone (the graph
      // starts it after every create of the run, so the one check after them has its answer).
      const checked = await checkCreations(run, core);
      const clash = "failed" in checked ? undefined : checked.get(policyAddr);
      if (clash) return blocked(`${policyAddr}, created by this run, was ${clash}`);
    }
    // The policy the plan read, or the one this run created (a policy of that name made by someone else
    // is not ours to move forward, whatever its values).
    const ours = p.compliance_id ?? run.createdIds.get(p.policy);
    if (ours !== undefined && env.compliance_id !== ours) return blocked(`${policyAddr} is another policy of that name now${whoWords(envelopeWho(env))}`);
    const lb = env.compliance_spec?.[0]?.batches?.find((b) => batchNameOf(b) === p.batch);
    if (!lb) return blocked(`${c.address} no longer exists in the service`);
    const upload = await sameUpload(run, c, p, { env, lb, core }, bound);
    if (upload) return upload;
    const target = action === "review" ? ["reviewed", "approved"] : ["approved"];
    const here = { user: run.run.user, reviewedHere: run.reviewedHere.has(c.address), createdHere: run.createdIds.get(p.policy) === env.compliance_id };
    if (typeof lb.status === "string" && target.includes(lb.status)) {
      // Made by someone else: who prepared it, as far as the service still shows it (an approved batch no
      // longer names its reviewer: an earlier read of this write, or the plan's, does); who approved it is
      // the writeBatch's to take from this read.
      if (facts) {
        const now = runPreparers(env, lb, here);
        Object.assign(facts, { ...now, reviewed_by: now.reviewed_by ?? facts.reviewed_by ?? run.run.reviewers?.get(c.address) ?? null });
      }
      step.seen?.(lb);
      return { already: `the service shows it ${madeBy(lb)}, with the values the plan showed`, status: lb.status };
    }
    const moved = samePolicy(run, c, p, env, lb);
    if (facts) Object.assign(facts, runPreparers(env, lb, here), { approved_by: core.auth.username ?? null });
    if (moved) return moved;
    // Four eyes, last: a batch changed since the plan is blocked for that, in its own words.
    const broken = facts && run.run.fourEyes ? fourEyesBreach(facts, !!run.run.core.approverAuth, core.auth.identity) : undefined;
    if (broken && facts) {
      facts.rule = "blocked";
      return { blocked: broken };
    }
    run.run.log(`${c.address}: read again just now, unchanged since the plan; sending the ${action}`);
    step.sending?.(lb);
    return { go: { id: env.compliance_id, ...(env.version_id ? { ifMatch: env.version_id } : {}) } };
  };
}

/** One step: a review (as revsync's sign-in) or an approve (as the approver identity, four eyes), guarded
 *  before every send. The policy's id comes with the guard's read (a policy this run created has one only
 *  now). An approve that landed is read back: who approved it is who the service shows (a breach of four
 *  eyes when that is another user than it was sent as, or its preparer). An approve says who it went as,
 *  once there are two identities or the rule to keep: "approved as bob (reviewed by alice)". */
export async function writeBatch(run: SspRun, c: Change, p: BatchPayload, core: ApiCore, bound: BoundCheck): Promise<WriteResult> {
  const id = p.compliance_id ?? run.createdIds.get(p.policy) ?? "";
  const action: Action = c.action === "approve" ? "approve" : "review";
  const as = action === "approve" ? core.asApprover() : core;
  const facts: FourEyesFacts | undefined =
    action === "approve" ? { reviewed_by: null, uploaded_by: null, policy_created_by: null, approved_by: as.auth.username ?? null } : undefined;
  let read: SspItem | undefined;
  let compared: SspItem | undefined;
  const seen =
    facts &&
    ((b: SspItem | undefined): void => {
      read = b;
    });
  const sending = (lb: SspItem): void => {
    compared = lb;
  };
  const guard = batchGuard(run, c, p, { action, core: as, bound, facts, sending, ...(seen ? { seen } : {}) });
  const sent = await batchWrite(as, action, { id, name: p.policy }, p.batch, guard, seen);
  const landed = sent.kind === "done" || sent.kind === "confirmed";
  // The batch that moved is the one compared, or the step is not done (the PATCH names it by name alone).
  const moved = landed ? await movedWhatWasCompared(run, { action, p, core: as, compared }) : undefined;
  const o: WriteOutcome<SspUpdateResult> = moved && "unknown" in moved ? { kind: "unknown", error: moved.unknown } : sent;
  if (!facts) {
    if (landed) run.reviewedHere.add(c.address);
    return { outcome: o, ...(moved && "breached" in moved ? { breached: moved.breached } : {}) };
  }
  if (moved && "breached" in moved) return { outcome: o, four_eyes: facts, breached: moved.breached };
  return {
    outcome: o,
    four_eyes: facts,
    ...approveWords(facts, o, read, {
      fourEyes: run.run.fourEyes,
      approverConfigured: !!core.approverAuth,
      sendsAs: as.auth.username ?? null,
      ...(as.auth.identity ? { names: as.auth.identity } : {}),
    }),
  };
}

/** After a review or approve landed, which batch moved: the interface names the batch by its name alone,
 *  so the policy is read again, and the batch of that name must be the one the guard compared right before
 *  the send (its file_id) and hold the values the plan showed (their checksum, in its file and its own
 *  values). Undefined when it is; `breached` when the service shows that another batch, or other values,
 *  moved (a copy of the name, a new upload); `unknown` when it cannot be read or told. Never done. */
async function movedWhatWasCompared(
  run: SspRun,
  step: { action: Action; p: BatchPayload; core: ApiCore; compared: SspItem | undefined },
): Promise<{ breached: string } | { unknown: ApiError } | undefined> {
  const { action, p, core, compared } = step;
  const what = `the ${action} of batch ${JSON.stringify(p.batch)} of ${JSON.stringify(p.policy)} landed`;
  const unknown = (why: string): { unknown: ApiError } => ({
    unknown: new ApiError({
      method: "PATCH",
      path: `${action} ${p.policy}/${p.batch}`,
      status: 0,
      message: `outcome unknown: ${what}, but ${why}`,
      outcomeUnknown: true,
    }),
  });
  const fileOf = (b: SspItem | undefined): string | null => fileIdOf(b) ?? null;
  let all: SspEnvelope[];
  try {
    all = await ssp.getAll(core, p.policy);
  } catch (e) {
    return unknown(
      `reading the policy again failed (${e instanceof Error ? e.message : String(e)}), so whether the batch that moved is the one compared cannot be told`,
    );
  }
  if (all.length !== 1)
    return unknown(`the service holds ${all.length} SSP policies named ${JSON.stringify(p.policy)} now, so which batch moved cannot be told`);
  const named = (all[0]?.compliance_spec?.[0]?.batches ?? []).filter((b) => batchNameOf(b) === p.batch);
  if (named.length > 1)
    return {
      breached: `${what}, but the service holds ${named.length} batches of that name now (${named.map((b) => `file_id ${show(fileOf(b))} ${String(b.status)}`).join(", ")}) and the ${action} names the batch only by its name: the batch that moved may not be the one reviewed (file_id ${show(fileOf(compared))}); have the batches' statuses checked in the service`,
    };
  const lb = named[0];
  if (!lb) return unknown("the batch is no longer in the service");
  if (compared && fileOf(lb) !== fileOf(compared))
    return {
      breached: `${what}, but the batch of that name holds file_id ${show(fileOf(lb))} now, not ${show(fileOf(compared))}, the one compared: a new upload nobody reviewed may have moved; have it checked in the service`,
    };
  const otherwise = p.values_checksum ? await run.heldOtherwise(p.policy, lb, p.values_checksum, core).catch((e: unknown) => e) : undefined;
  if (otherwise instanceof Error) return unknown(`reading its values again failed (${otherwise.message})`);
  if (typeof otherwise === "string")
    return { breached: `${what}, but ${otherwise.replace(/^its /, "the batch's ")} now: values nobody reviewed moved; have the batch checked in the service` };
  return undefined;
}
