import { firstFailing, matchLine, order, sameSsp, showOutcome, showSsp, type Match, type PolicyModel } from "./evaluate.js";
import type { Line } from "./line.js";
import { allocate, expectDiffers, type AllocateOptions, type AllocatedLine, type Allocation, type Contract, type RuleReader } from "./allocate.js";

/** A case of a test file, as loaded from the policy repo (src/config/test-files.ts). */
export interface TestCase {
  name: string;
  file: string;
  line: number;
  column: number;
  input: Line;
  expect: { policy: string | null; ssp?: number };
  /** The file's date_field: the line field that gives the date for batch values. */
  dateField?: string;
}

export interface CaseResult {
  case: TestCase;
  got: Match;
  pass: boolean;
  /** Why it failed, in words (empty when it passed). */
  why: string[];
  /** Seconds its evaluation took (JUnit reports show it). */
  seconds: number;
}

const show = (p: string | null): string => (p === null ? "no policy" : p);

/** Why the expected policy did not win: missing, inactive, a condition that does not hold, or another
 *  policy earlier in the hierarchy. */
function explain(c: TestCase, got: Match, ordered: PolicyModel[], all: PolicyModel[]): string[] {
  const why: string[] = [];
  if (got.error) return [got.error];
  const winner = ordered.find((p) => p.name === got.policy);
  if (c.expect.policy !== got.policy) {
    why.push(got.policy === null ? "no active policy's conditions all hold" : `${got.policy} matched first (hierarchy_no ${winner?.hierarchy_no})`);
    const expected = all.find((p) => p.name === c.expect.policy);
    if (c.expect.policy !== null) {
      if (!expected) why.push(`${c.expect.policy} is not a policy here`);
      else if (!expected.active) why.push(`${c.expect.policy} is not active`);
      else {
        let failing: PolicyModel["when"][number] | undefined;
        try {
          failing = firstFailing(expected, c.input);
        } catch (e) {
          why.push(`${c.expect.policy}: ${(e as Error).message}`);
        }
        if (failing) {
          why.push(
            `${c.expect.policy}'s condition ${failing.field_name} ${failing.operator} ${JSON.stringify(failing.value)} does not hold (the line has ${failing.field_name} ${JSON.stringify(c.input[failing.field_name] ?? null)})`,
          );
        } else if (winner)
          why.push(
            `${c.expect.policy}'s conditions hold too, but ${winner.name} comes first (${
              winner.hierarchy_no === expected.hierarchy_no
                ? `both at hierarchy_no ${winner.hierarchy_no}: a tie goes by name`
                : `hierarchy_no ${winner.hierarchy_no} < ${expected.hierarchy_no}`
            })`,
          );
      }
    }
  } else if (c.expect.ssp !== undefined && !sameSsp(c.expect.ssp, got.ssp)) {
    const gives = got.ssp === null ? "no SSP" : `SSP ${showSsp(got.ssp)}`;
    why.push(`${show(got.policy)} gives ${gives}, expected ${showSsp(c.expect.ssp)}${got.note ? ` (${got.note})` : ""}`);
  }
  return why;
}

/** Every case against a set of policies. */
export function runCases(cases: readonly TestCase[], policies: readonly PolicyModel[]): CaseResult[] {
  const ordered = order(policies);
  return cases.map((c) => {
    const start = performance.now();
    const got = matchLine(ordered, c.input, c);
    const pass = !got.error && got.policy === c.expect.policy && (c.expect.ssp === undefined || sameSsp(c.expect.ssp, got.ssp));
    const why = pass ? [] : explain(c, got, ordered, [...policies]);
    return { case: c, got, pass, why, seconds: (performance.now() - start) / 1000 };
  });
}

export interface ImpactEntry {
  name: string;
  file: string;
  line: number;
  before: { policy: string | null; ssp: number | null };
  after: { policy: string | null; ssp: number | null };
}

/** The cases whose matched policy or SSP differs between two sets of policies (the service now, and
 *  as git asks): what a change does to revenue allocation. */
export function impact(cases: readonly TestCase[], before: readonly PolicyModel[], after: readonly PolicyModel[]): ImpactEntry[] {
  const ob = order(before);
  const oa = order(after);
  const out: ImpactEntry[] = [];
  for (const c of cases) {
    const b = matchLine(ob, c.input, c);
    const a = matchLine(oa, c.input, c);
    if (b.policy !== a.policy || !sameSsp(b.ssp, a.ssp)) {
      out.push({ name: c.name, file: c.file, line: c.line, before: { policy: b.policy, ssp: b.ssp }, after: { policy: a.policy, ssp: a.ssp } });
    }
  }
  return out;
}

/** One impact entry as a person reads it: "EU training course: Default SSP at 1,000 -> Training Courses SSP at 960". */
export function impactLine(e: ImpactEntry): string {
  return `${e.name}: ${showOutcome(e.before.policy, e.before.ssp)} -> ${showOutcome(e.after.policy, e.after.ssp)}`;
}

export interface ContractResult {
  contract: Contract;
  allocation: Allocation;
  pass: boolean;
  /** Why it failed: a line that differs from expect.allocation, a rule that cannot be read, a line
   *  that cannot be allocated when the contract expects an allocation. */
  why: string[];
}

/** Every contract against one set of policies. A contract that cannot be allocated passes (its output
 *  says why) unless it expects an allocation; a rule revsync cannot read always fails. */
export function runContracts(contracts: readonly Contract[], policies: readonly PolicyModel[], opts: AllocateOptions): ContractResult[] {
  const ordered = order(policies);
  return contracts.map((contract) => {
    const allocation = allocate(contract, ordered, opts);
    const why = [...allocation.errors];
    if (contract.expect) {
      if (allocation.status === "cannot allocate" && !allocation.errors.length) why.push(...allocation.why.map((w) => `cannot allocate: ${w}`));
      else if (!allocation.errors.length) why.push(...expectDiffers(contract, allocation));
    }
    return { contract, allocation, pass: why.length === 0, why };
  });
}

/** One side of a contract's line in the plan's impact. */
export interface AllocationSide {
  policy: string | null;
  ssp: number | null;
  basis: number | null;
  allocated: number | null;
}

export interface AllocationImpact {
  contract: string;
  file: string;
  line: number;
  currency: string;
  /** Each side's status (allocated, not carved, cannot allocate) and why, when it is not allocated. */
  before_status: Allocation["status"];
  after_status: Allocation["status"];
  why?: string[];
  lines: { id: string; before: AllocationSide; after: AllocationSide; shift: number | null }[];
  /** The revenue that moves between the contract's lines (the sum of the positive shifts); null when a
   *  side cannot be allocated. */
  moved: number | null;
}

const side = (l: AllocatedLine): AllocationSide => ({ policy: l.policy, ssp: l.ssp, basis: l.basis, allocated: l.allocated });

/** The contracts whose allocation differs between two sets of policies (and carves_allocation
 *  settings): the service now, and as git asks. Most revenue moved first, then in file order. */
export function allocationImpact(
  contracts: readonly Contract[],
  before: { policies: readonly PolicyModel[]; carves: boolean },
  after: { policies: readonly PolicyModel[]; carves: boolean },
  readRule: RuleReader,
): AllocationImpact[] {
  const ob = order(before.policies);
  const oa = order(after.policies);
  const out: AllocationImpact[] = [];
  for (const c of contracts) {
    const b = allocate(c, ob, { readRule, carves: before.carves });
    const a = allocate(c, oa, { readRule, carves: after.carves });
    const lines = c.lines.map((l, i) => {
      const lb = b.lines[i] as AllocatedLine;
      const la = a.lines[i] as AllocatedLine;
      const shift = lb.allocated === null || la.allocated === null ? null : Math.round((la.allocated - lb.allocated) * 100) / 100;
      return { id: l.id, before: side(lb), after: side(la), shift };
    });
    // What a controller asks: does revenue move? A new policy or SSP that leaves every amount where it was
    // is the cases' impact, not this one.
    const same = b.status === a.status && lines.every((l) => l.before.allocated === l.after.allocated);
    if (same) continue;
    const known = b.status !== "cannot allocate" && a.status !== "cannot allocate";
    const moved = known ? Math.round(lines.reduce((s, l) => s + Math.max(0, l.shift ?? 0), 0) * 100) / 100 : null;
    const why = [
      ...(b.status === "cannot allocate" ? [...b.errors, ...b.why].map((w) => `now: ${w}`) : []),
      ...(a.status === "cannot allocate" ? [...a.errors, ...a.why].map((w) => `after apply: ${w}`) : []),
    ];
    out.push({
      contract: c.name,
      file: c.file,
      line: c.line,
      currency: a.currency,
      before_status: b.status,
      after_status: a.status,
      ...(why.length ? { why } : {}),
      lines,
      moved,
    });
  }
  return out.sort((x, y) => (y.moved ?? -1) - (x.moved ?? -1));
}

/** The revenue moved across contracts, per currency (contracts that cannot be compared left out). */
export function movedByCurrency(entries: AllocationImpact[]): Map<string, number> {
  const by = new Map<string, number>();
  for (const e of entries) if (e.moved !== null) by.set(e.currency, Math.round(((by.get(e.currency) ?? 0) + e.moved) * 100) / 100);
  return by;
}
