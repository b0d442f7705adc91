/** What a record shows against its guardrails (evidence verify): a write that landed while the judgement
 *  the record holds says the plan was held back (a freeze window in force, a deny, approvals not given,
 *  a rule that could not be judged). apply refuses such a plan before it writes, so a record that shows
 *  one is an apply past a deny: made by another tool, an edited revsync, or a record edited after. Pure. */
import { HOLDS_BACK } from "../shared/facts.js";
import { LANDED, type EvidenceRecord } from "./record.js";

export function guardrailProblems(r: EvidenceRecord): string[] {
  const changes = Array.isArray(r.changes) ? r.changes : [];
  const landed = changes.filter((c) => LANDED.has(c.outcome) && c.outcome !== "already");
  if (!landed.length) return [];
  const out: string[] = [];
  for (const c of landed)
    for (const o of c.guardrails ?? [])
      if (HOLDS_BACK.includes(o.outcome)) out.push(`guardrails: ${c.address} (${c.action}) landed though ${o.rule} came to ${o.outcome} (${o.message})`);
  const held = r.guardrails?.held_back ?? [];
  if (held.length && !out.length) out.push(`guardrails: writes landed though the record's guardrails held the plan back: ${held.join("; ")}`);
  else
    for (const w of r.guardrails?.freeze ?? [])
      if (w.in_force && !w.overridden) out.push(`guardrails: writes landed inside freeze window ${w.name} (in force until ${w.until_local})`);
  return out;
}
