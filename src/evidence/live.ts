/** Whether what evidence records applied still holds in the service: each change checked by its kind,
 *  against one read per resource. */
import type { ApiCore } from "../api/core.js";
import type { AppliedChange, LiveFinding, Registry } from "../kinds/kind.js";
import { KINDS, kindOf } from "../kinds/registry.js";
import { LANDED, type EvidenceRecord } from "./record.js";

export type { LiveFinding };

/** Later changes to the same resource (a record's own, or later records'), and the fields they applied:
 *  theirs to answer for, not compared for this one. */
function laterChanges(records: { file: string; record: EvidenceRecord }[], i: number, j: number): { later: string[]; paths: Set<string> } {
  const { record } = records[i] as { record: EvidenceRecord };
  const c = record.changes[j] as EvidenceRecord["changes"][number];
  const after = [
    ...record.changes.slice(j + 1).map((x) => ({ x, where: "this record" })),
    ...records.slice(i + 1).flatMap((r) => r.record.changes.map((x) => ({ x, where: r.file }))),
  ];
  const later: string[] = [];
  const paths = new Set<string>();
  for (const { x, where } of after) {
    if (x.address !== c.address || !LANDED.has(x.outcome)) continue;
    later.push(`${x.action} in ${where}`);
    for (const d of x.diff) paths.add(d.path);
  }
  return { later, paths };
}

/** Reads the service once per resource for every landed change of these records (oldest first). */
export async function checkLive(
  core: ApiCore,
  records: { file: string; record: EvidenceRecord }[],
  kinds: Registry = KINDS,
): Promise<Map<string, LiveFinding[]>> {
  const checkers = new Map(kinds.map((k) => [k, k.evidence(core)] as const));
  const check = (c: AppliedChange): Promise<Omit<LiveFinding, "later">> => {
    const kind = kindOf(kinds, c.address);
    const checker = kind && checkers.get(kind);
    if (checker) return checker(c);
    const base = { address: c.address, action: c.action, differs: [], modified_by: null, modified_on: null };
    return Promise.resolve({ ...base, holds: false, note: "revsync does not know this kind of address" });
  };
  const out = new Map<string, LiveFinding[]>();
  for (const [i, { file, record }] of records.entries()) {
    const findings: LiveFinding[] = [];
    for (const [j, c] of record.changes.entries()) {
      if (!LANDED.has(c.outcome)) continue;
      const { later, paths } = laterChanges(records, i, j);
      findings.push({ ...(await check({ ...c, diff: c.diff.filter((d) => !paths.has(d.path)) })), later });
    }
    out.set(file, findings);
  }
  return out;
}
