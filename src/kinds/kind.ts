/** What a resource kind is: everything revsync knows of one kind of thing a tenant holds, behind one
 *  interface (as decK's Entity and Terraform's provider interface). Plan, drift, --target, apply, export
 *  and evidence loop over the registry (./registry.ts) and know no kind. docs/architecture.md, "A
 *  resource kind", walks through adding one. */
import type { ApiCore } from "../api/core.js";
import type { WriteOutcome } from "../api/write.js";
import type { DesiredState } from "../config/repo.js";
import type { FileKind } from "../config/rules.js";
import type { PolicyModel } from "../policy-test/evaluate.js";
import type { Action, Change, DriftItem, FourEyesApprove, FourEyesFacts, KeptLive, PlanFourEyes, Unread } from "../shared/entries.js";
import type { FactDoc, Facts } from "../shared/facts.js";
import type { SourceFinding } from "../shared/promotion.js";
import type { FieldDiff } from "../shared/normalize.js";
import type { Unknown } from "../shared/unknown.js";
import type { DocInGit, EnvsDocInGit, EnvsMerge, ExportedFile, Holding } from "./export-file.js";

export type { DesiredState, Unread };

/** The service's state: what each kind read, by the kind's name (a kind whose reads failed whole is not
 *  in it), and, when the reads were allowed to be partial (ReadOptions.partial), what was not read. */
export type LiveState = ReadonlyMap<string, unknown> & { readonly unread?: readonly Unread[] };

/** Whether `address` is fed by a read that failed: it is, or lies below, an unread address. */
export const unreadAt = (live: LiveState, address: string): Unread | undefined =>
  live.unread?.find((u) => address === u.address || address.startsWith(`${u.address}/`));

/** The kinds whose state was read (a kind whose reads failed whole has none). */
export const readKinds = <K extends { name: string }>(kinds: readonly K[], live: LiveState): K[] => kinds.filter((k) => live.has(k.name));

/** What to read of the service, beyond what plan and drift compare: the reads of export and the policy
 *  tests. Each kind reads what these ask of it. */
export interface ReadOptions {
  concurrency: number;
  targets: string[];
  /** Everything the service holds in detail (export), not only what git manages. */
  allDetails?: boolean;
  /** What git manages in detail, even where git lists nothing below it (drift: what git does not list). */
  managedDetails?: boolean;
  /** The values git holds a file of (plan, drift). */
  values?: boolean;
  /** What the policy tests run against: every approved batch's values. */
  approvedValues?: boolean;
  /** Every value read in detail (export keeps them in git). */
  allValues?: boolean;
  /** A read that still fails after its retries fails only what it feeds (plan, drift): it is said in
   *  LiveState.unread, and the rest is read. Without it, a read that fails ends the reading. */
  partial?: boolean;
  /** What guardrails measure a change's values against (a fact that needs the baseline, read by a rule
   *  in force): the values of each policy's last approved batch whose values a change moves forward. */
  baselineValues?: boolean;
}

/** Progress of the reads: `more` announces reads, `done` ends one (named for a terminal's progress line). */
export interface ReadProgress {
  more(n: number): void;
  done(what: string): void;
  /** A read of `address` (and what lies below it) failed after its retries: true when it is recorded
   *  and the kind goes on without it (partial reading), false when the kind must throw `error`. */
  unread(address: string, error: unknown): boolean;
}

/** What building a plan found that its entries cannot carry: problems (the plan cannot be made, nothing
 *  may be sent) and the fields git sets that the service does not show, by address. */
export interface PlanFindings {
  targets: string[];
  problems: { file: string; line: number; column: number; message: string }[];
  unknown: Unknown;
}

/** Something the service holds that git does not: plan shows it as `not in git` (with `reason`), drift
 *  as `unmanaged`, or `unmanaged_batch` for a part of something git manages. One list for both, so that
 *  plan and drift classify the same things the same way. */
export interface Unmanaged {
  address: string;
  class: "unmanaged" | "unmanaged_batch";
  /** Why revsync leaves it, for the plan, and what to do. */
  reason: string;
  before: Record<string, unknown>;
  version_id: string | null;
  last_modified_on: number | null;
  modified_by: string | null;
  modified_on: string | null;
  /** What drift says of it, where more than "in the service, not in git". */
  drift?: { message: string; diff: FieldDiff[] };
}

/** A name the service holds more than once (a policy of a kind, a batch of one policy): the interface names each by its name, so none of them is git's, none is written, and plan,
 *  drift and export show the name as a problem of its own, every copy listed (docs/decisions.md, "A name
 *  held twice addresses nothing"). */
export interface HeldTwice {
  address: string;
  /** What the copies are, plural ("SSP policies", "batches of Hardware SSP"). */
  what: string;
  /** Each copy in words, as the service shows it (its id, file, status, who changed it last). */
  copies: string[];
}

/** Who a plan's approves would go as (four eyes): the sign-in, the approver identity where one is
 *  configured; `approverKnown` false where this run cannot say (a CI job that names no approver identity). */
export interface Approvers {
  signIn: string | null;
  approver: string | null;
  approverConfigured: boolean;
  approverKnown?: boolean;
}

/** One step's write, done by its kind: the write unit's outcome, and what the report says beside it. */
export interface WriteResult {
  outcome: WriteOutcome<unknown>;
  /** An approve's people (four eyes). */
  four_eyes?: FourEyesFacts;
  /** The step failed for a reason of its kind's (a refusal the four-eyes rule explains), in words. */
  failed?: string;
  /** The write landed, and broke a rule of its kind's (four eyes: the service shows the approve made by its
   *  preparer, or by another user than the one it was sent as), in words: the step's outcome is
   *  "breached", and the run fails. */
  breached?: string;
  /** Words after the outcome's ("as bob (reviewed by alice)"). */
  also?: string;
}

/** A kind's writes in one apply run: what they share (reads, what this run made) lives here. */
export interface KindApply {
  /** One change of the plan, written: its guard, request, read-back and check, through the write unit.
   *  `core`: the view of the client the step's requests go through. */
  write(c: Change, core: ApiCore): Promise<WriteResult>;
  /** After every step: writes that landed and are undone now (overwritten), or could not be checked
   *  (unchecked), by address; of `landed`, the changes of this kind whose writes landed. */
  settle?(landed: readonly Change[]): Promise<Map<string, { overwritten: string } | { unchecked: string }>>;
}

/** What an apply run gives a kind. */
export interface ApplyRun {
  core: ApiCore;
  /** The signed-in user, whom a write may name. */
  user: string;
  /** The plan's entries. */
  changes: readonly Change[];
  /** four_eyes: no batch is approved by its reviewer or its policy's creator. */
  fourEyes: boolean;
  /** What the plan said of its approves under four eyes (its four_eyes), where it says it. */
  planFourEyes?: PlanFourEyes;
  /** The verbose log. */
  log(line: string): void;
}

/** Of a write this kind's steps wait for: steps that must succeed first (`needs`) and that must have ended
 *  first (`after`), as indexes into the kind's own changes. */
export interface StepOrder {
  needs: number[];
  after: number[];
}

/** One change an evidence record says landed, to be checked against the service now. */
export interface AppliedChange {
  address: string;
  action: string;
  diff: FieldDiff[];
}

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

/** What a kind gives the policy tests (revsync test, a plan's impact): SSP policies, and whether the
 *  tenant reallocates (carves_allocation); `skipped`, what git alone cannot place. */
export interface TestModels {
  policies?: PolicyModel[];
  carves?: boolean;
  skipped?: string[];
}

/** What export asks of a kind: the targets, a file name no other file takes, and a place for each entry
 *  left out because git cannot hold its name. */
export interface ExportContext {
  targets: string[];
  unique(file: string): string;
  unnamed: string[];
  /** What export refuses to write, by name, with why (a name the service holds twice): export fails. */
  refused: string[];
}

/** One resource kind. `D`: an entry of git's state (one policy file's document); `L`: what it reads of
 *  the service. The members are the kind's whole story, in the order of a run. */
export interface Kind<D = unknown, L = unknown> extends FileKind<D> {
  /** The address of an entry of this kind named `name`: `${name of the kind}/${name}`. */
  address(name: string): string;
  /** Its addresses, as help shows them ("ssp/<policy name>"). */
  readonly addressForms: readonly string[];

  /** Reads the service: what plan, drift, export or the tests compare against (`desired`: git's entries). */
  read(core: ApiCore, desired: readonly D[], opts: ReadOptions, progress: ReadProgress): Promise<L>;
  /** Every address the service holds of this kind. */
  addressesLive(live: L): string[];
  /** git's entries as the targets select them (`on`: whether an address is targeted). */
  targeted(desired: readonly D[], live: L, on: (address: string) => boolean): D[];

  /** The plan's entries of git's entries: each write to make, and each difference it cannot make with
   *  the reason. */
  plan(desired: readonly D[], live: L, findings: PlanFindings): Change[];
  /** Where an entry stands among the plan's entries of its action (SSP creates by hierarchy_no). */
  rank?(c: Change): number;
  /** Drift: everything in which the service differs from git's entries. */
  drift(desired: readonly D[], live: L, findings: Pick<PlanFindings, "targets" | "unknown">): DriftItem[];
  /** What the service holds of this kind and git does not (plan: not in git; drift: unmanaged). */
  unmanaged(desired: readonly D[], live: L, targets: string[]): Unmanaged[];
  /** The names the service holds more than once: each addresses nothing (plan blocks every write at
   *  and below it; drift and export name it, every copy listed). */
  heldTwice?(live: L): HeldTwice[];
  /** Of git's entries the service holds, the fields their files leave out and the service holds a value
   *  of (plan and drift show them; never a change). */
  kept?(desired: readonly D[], live: L, targets: string[]): KeptLive[];
  /** Four eyes (four_eyes of revsync.yaml: nothing is approved by who prepared it): the plan's word on
   *  each approve of its changes (`changes`: the kind's own), who prepared it and whether the rule would
   *  block it as the plan sees it. */
  fourEyes?(changes: readonly Change[], live: L, who: Approvers): FourEyesApprove[];

  /** What is wrong with a change's payload against its reviewed diff (a saved plan may have been edited):
   *  problems in words; none when it sends exactly what it shows. */
  payloadProblems(c: Change, changes: readonly Change[]): string[];
  /** What is wrong with a saved plan's change against what git asks for now (`desired`: this kind's entries
   *  of git, loaded as the run loads them): problems in words, each naming what differs; none when the
   *  change writes what git asks for. A change git no longer asks for at all says so. A plan's checksum
   *  is no signature: this, not the checksum, holds a saved plan to git (docs/security.md). */
  gitProblems(c: Change, desired: readonly D[], changes: readonly Change[]): string[];
  /** The payloads of its writes, by their `kind`: the actions each carries and its JSON Schema, which a
   *  saved plan's schema holds (src/plan/schema.ts: npm run gen:types writes them into
   *  schemas/plan.schema.json). `#/definitions/X` in one names a definition of schemas/api.schema.json
   *  (copied into the plan's schema); a kind defined outside the tree writes its payload's schema whole. */
  readonly payloads: Readonly<Record<string, { actions: readonly Action[]; schema: object }>>;
  /** Refuses, before anything is sent, a plan its writes cannot be made for (a write needs the user; an
   *  approve, an approver identity other than the sign-in). Asked of every kind, its applied changes
   *  given (none, where the plan holds none of its). */
  ready?(changes: readonly Change[], core: ApiCore, opts: { fourEyes: boolean }): void;
  /** Refuses, once the sign-in and the approver identity have signed in and before anything is sent, a
   *  plan its writes cannot be made for as the service's tokens name them. */
  signedIn?(changes: readonly Change[], core: ApiCore, opts: { fourEyes: boolean }): void;
  /** The order among the kind's own steps (`changes`: the kind's applied changes, in plan order). Kinds
   *  apply in the registry's order: every step of a kind waits for the steps of the kinds before it. */
  order?(changes: readonly Change[]): StepOrder[];
  /** The kind's writes of one apply run. */
  apply(run: ApplyRun): KindApply;

  /** The service's state of this kind as policy files. */
  export(live: L, ctx: ExportContext): ExportedFile[];
  /** A spec field's value as plan compares it (lists as sets, operator spellings as one); as it is
   *  where the kind compares values as they are. */
  compared?(field: string, value: unknown): unknown;
  /** What it exports beyond a document's spec (its batches), brought into git's document of the entry in
   *  place (export into a folder that holds policy files). */
  placeInGit?(f: ExportedFile, doc: DocInGit): void;
  /** The values files a document of git names (relative to its file's folder): export gives no other
   *  file these names. */
  valuesNamed?(value: unknown): string[];
  /** What it exports beyond a document's spec (its batches), merged over the environments that hold the
   *  entry (export --all-envs, a file git does not hold): the document's further keys, and the values
   *  files beside it (relative to the policy file). */
  mergeEnvs?(holdings: readonly Holding[], m: EnvsMerge): { value: Record<string, unknown>; valuesFiles: { file: string; text: string }[] };
  /** What it exports beyond a document's spec, brought into git's document of the entry for every
   *  environment that reads it, before each environment's own placement (export --all-envs). */
  prepareEnvsInGit?(d: EnvsDocInGit): void;

  /** What an evidence record of its changes shows against four eyes (`fourEyes`: the record's environment
   *  keeps it): problems fail evidence verify, notes are said. */
  recorded?(changes: readonly RecordedChange[], fourEyes: boolean): { problems: string[]; notes: string[] };
  /** What the reports say of its entries beyond every entry's own words. */
  words?: KindWords;

  /** Checks changes an evidence record applied against the service (reads shared across calls). */
  evidence(core: ApiCore): (c: AppliedChange) => Promise<Omit<LiveFinding, "later">>;

  /** Promotion (promote_from): what the source environment holds of what a change of this kind sets,
   *  against what git asks of the source (`desired`: git's entries as the source reads them, its own vars
   *  and scope; `live`: what was read of it, values included; `here`: git's entries as this environment
   *  reads them, so that both come from the same document). Without it, a change of this kind is never
   *  promoted (src/promotion/ blocks it, saying so). */
  promotion?(c: Change, desired: readonly D[], live: L, here: readonly D[]): SourceFinding;

  /** What guardrails read of its changes (none: every change's facts alone). */
  guardrails?: KindFacts<D, L>;

  /** What the policy tests take of this kind: from the service, as git asks (over the service, or
   *  git's alone offline), and the service's state with git's values where the service shows none. */
  tests?: {
    live(live: L): TestModels;
    git(desired: readonly D[], live: L | undefined): TestModels;
    known?(desired: readonly D[], live: L, fromGit: Unknown): L;
  };
}

/** What guardrails read of a kind's changes beyond every change's facts (docs/guardrails.md, "Facts"). */
export interface KindFacts<D, L> {
  /** The facts it adds, as the docs' table lists them. */
  facts: readonly FactDoc[];
  /** Fields its changes have before and after beyond its file's spec (a batch's status). */
  fields?: readonly string[];
  /** One change's facts (every name of `facts`, null where it does not apply), from git's entries and
   *  what was read of the service. */
  of(c: Change, desired: readonly D[], live: L): Facts;
  /** The policies (as the policy tests name them) a change concerns, or every one (a setting of the
   *  tenant's): whose contracts' allocation shift is the change's. */
  concerns(c: Change): readonly string[] | "all";
}

/** One step's outcome as an apply report lists it: what became of its write, and an approve's people. */
export interface AppliedOutcome {
  address: string;
  action: string;
  outcome: string;
  four_eyes?: FourEyesFacts;
}

/** What an apply's outcomes of a kind call for, in words; of its writes, those its own rule held back
 *  (`held`: blocked or refused; their fix is not another plan) and, of those, the ones blocked. */
export interface AppliedWords {
  notes: string[];
  held: number;
  ruleBlocked: number;
}

/** What the reports say of a kind's entries beyond every entry's own words (its action, address,
 *  reason, fields, who changed it last): plain text, which each report escapes and places. */
export interface KindWords {
  /** Said once, above the first of its changes that `above` selects (four eyes above the first approve). */
  head?(plan: { four_eyes?: PlanFourEyes }): { lines: string[]; above(c: Change): boolean } | undefined;
  /** Lines under one change ("values: 12 rows, …", "four eyes: reviewed by …"). */
  lines?(c: Change, plan: { four_eyes?: PlanFourEyes }): string[];
  /** The change in a few words, where a list of one line each has no reason for it (the values it moves). */
  summary?(c: Change): string | undefined;
  /** The drift classes it reports, counted: singular and plural words ("unmanaged batch", "unmanaged
   *  batches"). */
  drift?: Readonly<Record<string, readonly [string, string]>>;
  /** After an apply: what its outcomes call for. */
  applied?(outcomes: readonly AppliedOutcome[]): AppliedWords;
  /** What four eyes keeps of its writes, for an evidence record's reader ("no SSP batch is approved by
   *  …"). */
  fourEyesRule?: string;
  /** Lines of one change of an evidence record beyond its own ("four eyes: reviewed by alice, …"), each
   *  value of the record passed through `esc`, the report's escape. */
  recordLines?(c: RecordedChange, esc: (text: string) => string): string[];
  /** An evidence record's four-eyes table of its changes in markdown (`md`, `code`: the report's
   *  escapes of text and of a table cell's code); none where it has nothing to say. */
  recordTable?(changes: readonly RecordedChange[], md: (text: string) => string, code: (text: string) => string): string[];
}

/** One change as an evidence record holds it: what became of it (apply's outcome, and in words), an
 *  approve's people, the requests sent for it. */
export interface RecordedChange {
  address: string;
  action: string;
  outcome: string;
  why: string;
  four_eyes?: FourEyesFacts;
  requests?: readonly { method: string; path: string; status: number | null; user?: string | null }[];
}

/** The registry's list: the kinds revsync knows, in apply order. */
export type Registry = readonly Kind[];

/** A kind's entries of git's state. */
export const desiredOf = <D, L>(kind: Kind<D, L>, state: DesiredState): readonly D[] => (state.get(kind.name) ?? []) as readonly D[];

/** What a kind read of the service. */
export const liveOf = <D, L>(kind: Kind<D, L>, state: LiveState): L => state.get(kind.name) as L;

/** Whether an address is one of this kind's. */
export const owns = (kind: Pick<Kind, "name">, address: string): boolean => address.startsWith(`${kind.name}/`);
