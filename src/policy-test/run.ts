import { firstFailing, matchLine, order, sameSsp, showOutcome, showSsp, type Match, type PolicyModel } from "./evaluate.js";
import type { Line } from "./line.js";

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
          why.push(`${c.expect.policy}'s conditions hold too, but ${winner.name} comes first (hierarchy_no ${winner.hierarchy_no} < ${expected.hierarchy_no})`);
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
