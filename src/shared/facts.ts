/** What a guardrail reads of a change (its facts) and what it comes to (its outcome), as plain data: a
 *  plan carries both for each change it applies, a resource kind gives its own facts, and the evidence
 *  record keeps the outcomes. How they are computed and judged is src/guardrails/. */

/** A fact's value: a number, a text (a date is YYYY-MM-DD text), true or false, or null (not known, or
 *  not about this change). */
export type FactValue = number | string | boolean | null;

/** A change's facts, by name. */
export type Facts = Record<string, FactValue>;

/** One fact, as docs/guardrails.md's table lists it: its name, what kind of value it is, and what it says. */
export interface FactDoc {
  name: string;
  kind: "number" | "text" | "boolean" | "any";
  about: string;
  /** baseline: reading it costs a read of the policy's last approved batch's values (plan reads them only
   *  when a rule in force reads the fact); clock: computed when the rule is judged, from the moment of
   *  judging (plan, apply, a GuardrailTest's moment), never saved. */
  needs?: "baseline" | "clock";
}

/** What one rule came to for one change: `pass` (its condition does not hold), `deny`, `warn`,
 *  `approval_needed` (require_approval, fewer approvals than its count), `approved` (enough approvals),
 *  `overridden` (apply --override by one of override_by), `excepted` (an exception of the rule, in force),
 *  `error` (the condition could not be judged: a deny or require_approval rule then holds the plan back). */
export type GuardrailResult = "pass" | "deny" | "warn" | "approval_needed" | "approved" | "overridden" | "excepted" | "error";

export interface GuardrailOutcome {
  rule: string;
  effect: "deny" | "warn" | "require_approval";
  outcome: GuardrailResult;
  /** In words: the condition and the values it read, who approved, the override's or exception's reason. */
  message: string;
  /** require_approval: the identities of `from` that approved. */
  approved_by?: string[];
  /** overridden: who, and why. */
  override?: { by: string; reason: string };
}

/** The outcomes that hold a plan back: apply refuses it while one stands. */
export const HOLDS_BACK: readonly GuardrailResult[] = ["deny", "approval_needed", "error"];
