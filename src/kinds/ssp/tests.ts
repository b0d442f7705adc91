/** The SSP policies as the policy tests see them (revsync test, a plan's impact): as the service holds
 *  them, as git asks, and git's alone offline. */
import { isInexact } from "../../number.js";
import type { BatchModel, PolicyModel, ValueRow } from "../../policy-test/evaluate.js";
import type { SspItem } from "../../schema/generated/api.js";
import { batchNameOf } from "../../shared/address.js";
import { notShown, type Unknown } from "../../shared/unknown.js";
import { valuesFromCsv } from "../../ssp/csv.js";
import type { DesiredSsp } from "./files.js";
import { sspAddress, type LivePolicy, type ShownValues, type SspLive } from "./read.js";

type Item = Record<string, unknown>;

/** The values a batch prices with: its own values (ssp_values), else its uploaded file. */
function rowsOf(held: ShownValues | undefined): ValueRow[] {
  if (held?.values) return held.values;
  return held?.file ? valuesFromCsv(held.file.csv) : [];
}

/** The range fields an allocation needs when a value row gives no range of its own. */
const RANGE_FIELDS = ["floor_percentage", "ceiling_percentage"] as const;

function fromItem(name: string, item: Item, batches: BatchModel[], fromService = false): PolicyModel {
  const hidden = fromService ? RANGE_FIELDS.filter((k) => typeof item[k] !== "number") : [];
  const inexact = hidden.filter((k) => isInexact(item[k]));
  const place = item.hierarchy_no;
  return {
    name,
    active: item.active !== false,
    // A hierarchy_no that is not comparable (the one number rule) orders the policy by the double it reads
    // as, and marks its place unknown: a line it may price is an error, never a guess.
    hierarchy_no: typeof place === "number" ? place : isInexact(place) ? Number(place.text) : Number.MAX_SAFE_INTEGER,
    ...(isInexact(place) ? { placeUnknown: place.text } : {}),
    ...(inexact.length ? { notComparable: inexact } : {}),
    method: typeof item.method === "string" ? item.method : "",
    when: Array.isArray(item.when) ? (item.when as PolicyModel["when"]) : [],
    expression: typeof item.expression === "string" ? item.expression : "",
    ...(typeof item.apply_ssppercent_on === "string" ? { percentOn: item.apply_ssppercent_on } : {}),
    batches,
    ...(typeof item.floor_percentage === "number" ? { floorPercentage: item.floor_percentage } : {}),
    ...(typeof item.ceiling_percentage === "number" ? { ceilingPercentage: item.ceiling_percentage } : {}),
    ...(hidden.length ? { notShown: hidden } : {}),
    rules: {
      ...(typeof item.transaction_below_range === "string" ? { below: item.transaction_below_range } : {}),
      ...(typeof item.transaction_mid_range === "string" ? { mid: item.transaction_mid_range } : {}),
      ...(typeof item.transaction_above_range === "string" ? { above: item.transaction_above_range } : {}),
    },
  };
}

const iso = (epoch: number): string => new Date(epoch * 1000).toISOString().replace(".000Z", "Z");
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Which approved batch was approved last. The service gives a batch no approval time, only updated_at;
 *  an approved batch cannot change any more, so its updated_at is when it was approved, and it orders
 *  the service's batches. A batch git approves that the service has not approved yet will be approved
 *  after all of those. Offline, and between batches this change approves, no time is known: the order
 *  in which git lists a policy's batches stands for it (later listed, later approved). */
const APPROVED_BY_THIS_CHANGE = 1e15;
/** 1st, 2nd, 3rd, 4th… 11th, 12th, 13th, 21st for a 0-based index. */
export function ordinal(i: number): string {
  const n = i + 1;
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th")}`;
}

function liveBatch(policy: string, b: SspItem, live: SspLive): BatchModel {
  const name = batchNameOf(b);
  const at = typeof b.updated_at === "number" ? b.updated_at : -1;
  return {
    name,
    status: b.status ?? "",
    values: rowsOf(live.values.get(`${policy}/${name}`)),
    ...(str(b.effective_start_date) ? { effective_start_date: str(b.effective_start_date) } : {}),
    ...(str(b.effective_end_date) ? { effective_end_date: str(b.effective_end_date) } : {}),
    approved: at,
    approvedShown: at >= 0 ? `updated_at ${iso(at)}` : "no updated_at",
  };
}

/** The service's policies as it holds them (values: what the read downloaded). */
export function modelsFromLive(live: SspLive): PolicyModel[] {
  const first = [...live.ssp].map(([name, lp]) =>
    fromItem(
      name,
      lp.item as unknown as Item,
      (lp.batches ?? []).map((b) => liveBatch(name, b, live)),
      true,
    ),
  );
  // Every copy of a name the service holds twice prices order lines too: none is left out.
  const others = [...(live.copies ?? [])].flatMap(([name, copies]) => copies.slice(1).map((lp) => fromItem(name, lp.item as unknown as Item, [], true)));
  return [...first, ...others];
}

/** The service's state with git's value in each field of git's policies that the service does not show
 *  (null or left out): the one rule for what the service does not say (src/shared/unknown.ts) applied to
 *  the impact. Such a field is not compared, so the plan treats it as unchanged; the impact's two sides
 *  (the service now, and as git asks) then both hold git's value, and differ only by what the plan
 *  changes. `fromGit` says which fields were taken from git, by address, for the impact's notes. */
export function liveWithGitsUnknowns(desired: readonly DesiredSsp[], live: SspLive, fromGit: Unknown): SspLive {
  const ssp = new Map(live.ssp);
  for (const d of desired) {
    const lp = live.ssp.get(d.name);
    if (!lp) continue;
    const spec = d.spec as unknown as Item;
    const fields = notShown(spec, lp.item as unknown as Item);
    if (!fields.length) continue;
    fromGit.set(sspAddress.policy(d.name), fields);
    const item = { ...(lp.item as unknown as Item), ...Object.fromEntries(fields.map((u) => [u.field, spec[u.field]])) };
    ssp.set(d.name, { ...lp, item: item as unknown as LivePolicy["item"] });
  }
  return { ...live, ssp };
}

/** The policies as git asks for them: each of git's policies over its live self (a field git leaves out
 *  keeps its live value; a batch git lists takes git's status and git's values file when it names one),
 *  and the live policies git does not manage as they are. Without a live state (revsync test offline),
 *  git's policies alone. */
export function modelsFromGit(desired: readonly DesiredSsp[], live?: SspLive): PolicyModel[] {
  const out = new Map<string, PolicyModel>();
  if (live) for (const m of modelsFromLive(live)) out.set(m.name, m);
  for (const d of desired) {
    const lp = live?.ssp.get(d.name);
    const item = { ...((lp?.item as unknown as Item | undefined) ?? {}), ...(d.spec as Item) };
    const batches = new Map<string, BatchModel>();
    for (const b of out.get(d.name)?.batches ?? []) batches.set(b.name, b);
    d.batches.forEach((b, i) => {
      const before = batches.get(b.name);
      // Approved in the service already: its approval time stands.
      const keeps = b.status === "approved" && before?.status === "approved";
      // A batch the service holds keeps the service's dates: the interface cannot change them, so no
      // change of git's moves them (the plan shows git's other dates as unsupported). git's dates are the
      // batch's only where the service does not hold it (a batch a create uploads, or offline).
      const inService = live?.ssp.get(d.name)?.batches?.some((lb) => batchNameOf(lb) === b.name) ?? false;
      const start = inService ? before?.effective_start_date : (b.effective_start_date ?? before?.effective_start_date);
      const end = inService ? before?.effective_end_date : (b.effective_end_date ?? before?.effective_end_date);
      batches.set(b.name, {
        name: b.name,
        status: b.status,
        values: b.values ? b.values.rows : (before?.values ?? []),
        ...(start ? { effective_start_date: start } : {}),
        ...(end ? { effective_end_date: end } : {}),
        approved: keeps && before ? before.approved : (live ? APPROVED_BY_THIS_CHANGE : 0) + i,
        approvedShown: keeps && before ? before.approvedShown : live ? `approved by this change, listed ${ordinal(i)} in git` : `listed ${ordinal(i)} in git`,
      });
    });
    out.set(d.name, fromItem(d.name, item, [...batches.values()]));
  }
  return [...out.values()];
}

/** Offline (revsync test without --live): git's policies alone. A policy whose conditions or place in
 *  the hierarchy git leaves out (they keep their live values) cannot be placed without the service: it
 *  is left out, and named, rather than guessed. */
export function modelsFromGitOnly(desired: readonly DesiredSsp[]): { models: PolicyModel[]; skipped: string[] } {
  const skipped = desired.filter((d) => d.spec.when === undefined || d.spec.hierarchy_no === undefined).map((d) => d.name);
  const models = modelsFromGit(desired.filter((d) => !skipped.includes(d.name)));
  return { models, skipped };
}
