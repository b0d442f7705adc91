/** Promotion (promote_from of revsync.yaml) as plain data: what a kind found its change's source
 *  environment to hold, what a plan says of each change (promoted, or blocked and why) and of the whole
 *  promotion (the source, the commit, what was compared, the policy tests run live there). A plan, a saved
 *  plan and an evidence record carry them; how they are found is src/promotion/. */

/** What a kind found the source environment to hold of one change's resulting values. */
export interface SourceFinding {
  /** What the source holds of what the change sets, as compared: each field git sets and the change
   *  writes, a batch's status and its values' checksum (what the record of a promotion keeps). */
  compared: Record<string, unknown>;
  /** What the source does not hold yet, in words (it holds nothing of that name, a batch is behind,
   *  a field still holds what this environment holds now): the change has not reached it. */
  notYet: string[];
  /** Where the source holds something else than git asks of it: each field, its value there, git's. */
  differs: { field: string; source: unknown; git: unknown }[];
  /** Fields git sets that the source does not show (null, or left out): not compared, as plan compares
   *  nothing the service does not show, and said beside the change. */
  notShown: string[];
  /** git's files leave it out of the source (metadata.environments): it cannot be promoted from there. */
  leftOut?: true;
}

/** Where git's entry comes from, as a finding names it: its file and the line of its name. */
type Origin = { file: string; line: number };

/** An entry this environment reads from another document than the source does (a twin scoped with
 *  metadata.environments): what the source was tried with is not what this environment would get, so the
 *  write differs in the source whatever it holds. Undefined: the same document. */
export function otherOrigin(here: Origin, there: Origin): SourceFinding | undefined {
  if (here.file === there.file && here.line === there.line) return undefined;
  return { compared: {}, notYet: [], differs: [{ field: "file", source: `${there.file}:${there.line}`, git: `${here.file}:${here.line}` }], notShown: [] };
}

/** The writes a promotion is about. */
export type PromotedAction = "create" | "update" | "review" | "approve";

/** What a plan says of one change of an environment with promote_from. */
export interface ChangePromotion {
  /** promoted: the source holds the same resulting values; blocked: it does not, or its policy tests
   *  fail there (the change's action is then blocked, its reason says why). */
  status: "promoted" | "blocked";
  /** The source environment. */
  from: string;
  /** The write this is: the change's action, or, of one blocked for promotion, the write it would be. */
  action: PromotedAction;
  /** What the source holds of what the change sets, as compared (SourceFinding.compared). */
  compared: Record<string, unknown>;
  /** blocked: the fields the source holds otherwise than git asks (none when it has not got there yet). */
  differs?: SourceFinding["differs"];
  /** Fields git sets that the source does not show: not compared. */
  not_shown?: string[];
}

/** The policy tests, run live against the source environment: what `revsync test --live --env SOURCE`
 *  runs, from the same commit. */
export interface PromotionTests {
  cases: number;
  contracts: number;
  /** Each case or contract that failed (its name, file:line and why), or each test file with an error. */
  failed: string[];
}

/** What a plan says of its promotion as a whole. */
export interface PlanPromotion {
  /** The source environment, and the tenant it was read at. */
  from: string;
  base_url: string;
  realm: string;
  /** The signed-in user the source was read as. */
  user: string | null;
  /** The commit of the policy repo the plan was made from (null: git cannot tell), and the policy files
   *  that differ from it (then the source was compared with the files as they are). */
  commit: string | null;
  uncommitted?: string[];
  /** When the source was read (ISO); null: the plan has no write to promote, so nothing was read. */
  read_at: string | null;
  promoted: number;
  blocked: number;
  /** sha256 of what was compared of every change (each change's promotion.compared, by address and
   *  action): the checksum a record of the apply keeps of the source's values. */
  compared_checksum: string;
  /** With policy tests in the repo: what they came to, live against the source. */
  tests?: PromotionTests;
}

/** A change's promotion in one line: "promoted from sandbox" or why it is blocked. */
export const promotionWords = (p: ChangePromotion): string => (p.status === "promoted" ? `promoted from ${p.from}` : `blocked for promotion from ${p.from}`);
