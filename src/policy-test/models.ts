import type { DesiredState } from "../config/repo.js";
import type { LiveState } from "../live/read.js";
import { batchNameOf } from "../plan/model.js";
import { valuesFromCsv } from "../ssp/csv.js";
import type { PolicyModel, ValueRow } from "./evaluate.js";

type Item = Record<string, unknown>;

function rowsOf(held: LiveState["values"] extends Map<string, infer V> ? V | undefined : never): ValueRow[] {
  if (!held) return [];
  return Array.isArray(held) ? held : valuesFromCsv(held.csv);
}

function fromItem(name: string, item: Item, batches: PolicyModel["batches"]): PolicyModel {
  return {
    name,
    active: item.active !== false,
    hierarchy_no: typeof item.hierarchy_no === "number" ? item.hierarchy_no : Number.MAX_SAFE_INTEGER,
    method: typeof item.method === "string" ? item.method : "",
    when: Array.isArray(item.when) ? (item.when as PolicyModel["when"]) : [],
    expression: typeof item.expression === "string" ? item.expression : "",
    batches,
  };
}

/** The service's policies as it holds them (values: what the read downloaded). */
export function modelsFromLive(live: LiveState): PolicyModel[] {
  return [...live.ssp].map(([name, lp]) =>
    fromItem(
      name,
      lp.item as unknown as Item,
      (lp.batches ?? []).map((b) => ({ name: batchNameOf(b), status: b.status ?? "", values: rowsOf(live.values.get(`${name}/${batchNameOf(b)}`)) })),
    ),
  );
}

/** The policies as git asks for them: each of git's policies over its live self (a field git leaves out
 *  keeps its live value; a batch git lists takes git's status and git's values file when it names one),
 *  and the live policies git does not manage as they are. Without a live state (revsync test offline),
 *  git's policies alone. */
export function modelsFromGit(desired: DesiredState, live?: LiveState): PolicyModel[] {
  const out = new Map<string, PolicyModel>();
  if (live) for (const m of modelsFromLive(live)) out.set(m.name, m);
  for (const d of desired.ssp) {
    const lp = live?.ssp.get(d.name);
    const item = { ...((lp?.item as unknown as Item | undefined) ?? {}), ...(d.spec as Item) };
    const batches = new Map<string, PolicyModel["batches"][number]>();
    for (const b of out.get(d.name)?.batches ?? []) batches.set(b.name, b);
    for (const b of d.batches) {
      const before = batches.get(b.name);
      batches.set(b.name, { name: b.name, status: b.status, values: b.values ? b.values.rows : (before?.values ?? []) });
    }
    out.set(d.name, fromItem(d.name, item, [...batches.values()]));
  }
  return [...out.values()];
}

/** Offline (revsync test without --live): git's policies alone. A policy whose conditions or place in
 *  the hierarchy git leaves out (they keep their live values) cannot be placed without the service: it
 *  is left out, and named, rather than guessed. */
export function modelsFromGitOnly(desired: DesiredState): { models: PolicyModel[]; skipped: string[] } {
  const skipped = desired.ssp.filter((d) => d.spec.when === undefined || d.spec.hierarchy_no === undefined).map((d) => d.name);
  const models = modelsFromGit({ ...desired, ssp: desired.ssp.filter((d) => !skipped.includes(d.name)) });
  return { models, skipped };
}
