import type { ApiCore } from "../api/core.js";
import { ssp, tenantConfigurations } from "../api/resources.js";
import type { SspEnvelope, TenantConfigurationList } from "../schema/generated/api.js";
import { batchNameOf } from "../shared/address.js";
import { normalizeSspFields } from "../shared/normalize.js";
import { sameJson } from "../canonical-json.js";
import { LANDED, type EvidenceChange, type EvidenceRecord } from "./record.js";

/** Whether one change a record applied still holds in the service, and if not, what differs now and
 *  who changed the resource last (as the service says, as drift says it). */
export interface LiveFinding {
  address: string;
  action: string;
  holds: boolean;
  /** Each applied field that differs now: the value the record applied and the value the service holds. */
  differs: { path: string; applied: unknown; now: unknown }[];
  /** Gone from the service, or not readable as a resource of this kind. */
  note?: string;
  modified_by: string | null;
  modified_on: string | null;
  /** Later changes to the same resource (this record's own, or later records'): the fields they applied
   *  are theirs to answer for, and are not compared for this one. */
  later: string[];
}

const isoOf = (epoch: unknown): string | null => (typeof epoch === "number" ? new Date(epoch * 1000).toISOString() : null);

function at(o: unknown, path: string): unknown {
  let cur: unknown = o;
  for (const part of path.split(".")) cur = cur && typeof cur === "object" ? (cur as Record<string, unknown>)[part] : undefined;
  return cur;
}

/** Reads the service once per resource for every landed change of these records (oldest first). */
export async function checkLive(core: ApiCore, records: { file: string; record: EvidenceRecord }[]): Promise<Map<string, LiveFinding[]>> {
  let tenants: Promise<TenantConfigurationList> | undefined;
  const policies = new Map<string, Promise<SspEnvelope | undefined>>();
  const policy = (name: string): Promise<SspEnvelope | undefined> => {
    let p = policies.get(name);
    if (!p) policies.set(name, (p = ssp.get(core, name)));
    return p;
  };
  const out = new Map<string, LiveFinding[]>();
  for (const [i, { file, record }] of records.entries()) {
    const findings: LiveFinding[] = [];
    for (const [j, c] of record.changes.entries()) {
      if (!LANDED.has(c.outcome)) continue;
      const later: string[] = [];
      const laterPaths = new Set<string>();
      const after = [
        ...record.changes.slice(j + 1).map((x) => ({ x, where: "this record" })),
        ...records.slice(i + 1).flatMap((r) => r.record.changes.map((x) => ({ x, where: r.file }))),
      ];
      for (const { x, where } of after) {
        if (x.address !== c.address || !LANDED.has(x.outcome)) continue;
        later.push(`${x.action} in ${where}`);
        for (const d of x.diff) laterPaths.add(d.path);
      }
      const mine = { ...c, diff: c.diff.filter((d) => !laterPaths.has(d.path)) };
      findings.push({ ...(await checkChange(mine, () => (tenants ??= tenantConfigurations.list(core)), policy)), later });
    }
    out.set(file, findings);
  }
  return out;
}

async function checkChange(
  c: EvidenceChange,
  tenants: () => Promise<TenantConfigurationList>,
  policy: (name: string) => Promise<SspEnvelope | undefined>,
): Promise<Omit<LiveFinding, "later">> {
  const base = { address: c.address, action: c.action, differs: [] as LiveFinding["differs"], modified_by: null, modified_on: null };
  if (c.address.startsWith("tenant-configuration/")) {
    const name = c.address.slice("tenant-configuration/".length);
    const env = (await tenants()).find((e) => e.compliance_name === name);
    if (!env) return { ...base, holds: false, note: "it is no longer in the service" };
    const item = env.compliance_spec?.[0] ?? {};
    const differs = c.diff.filter((d) => !sameJson(at(item, d.path), d.after)).map((d) => ({ path: d.path, applied: d.after, now: at(item, d.path) }));
    return { ...base, holds: !differs.length, differs, modified_by: env.last_modified_by ?? null, modified_on: isoOf(env.last_modified_on) };
  }
  if (!c.address.startsWith("ssp/")) return { ...base, holds: false, note: "revsync does not know this kind of address" };
  const rest = c.address.slice("ssp/".length);
  const cut = rest.lastIndexOf("/batch/");
  const name = cut < 0 ? rest : rest.slice(0, cut);
  const env = await policy(name);
  if (!env) return { ...base, holds: false, note: "it is no longer in the service" };
  const who = { modified_by: env.last_modified_by ?? null, modified_on: isoOf(env.last_modified_on) };
  const item = env.compliance_spec?.[0];
  if (cut >= 0) {
    const batchName = rest.slice(cut + "/batch/".length);
    const batch = item?.batches?.find((b) => batchNameOf(b) === batchName);
    if (!batch) return { ...base, ...who, holds: false, note: "the batch is no longer in the service" };
    const byBatch = { modified_by: batch.updated_by ?? who.modified_by, modified_on: isoOf(batch.updated_at) ?? who.modified_on };
    const differs = c.diff.filter((d) => !sameJson(at(batch, d.path), d.after)).map((d) => ({ path: d.path, applied: d.after, now: at(batch, d.path) }));
    return { ...base, ...byBatch, holds: !differs.length, differs };
  }
  // An SSP policy revsync created: the fields it sent, compared as plan compares them.
  const fields = c.diff.map((d) => d.path.split(".")[0] as string).filter((k) => k !== "batches");
  const now = normalizeSspFields(item ?? {}, fields);
  const applied = normalizeSspFields(Object.fromEntries(c.diff.map((d) => [d.path.split(".")[0], d.after])), fields);
  const differs = Object.keys(applied)
    .filter((k) => !sameJson(now[k], applied[k]))
    .map((k) => ({ path: k, applied: applied[k], now: now[k] }));
  return { ...base, ...who, holds: !differs.length, differs };
}
