import { existsSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { Document, isMap, isSeq, type YAMLMap } from "yaml";
import { errorTransactions } from "../api/resources.js";
import { UserError } from "../errors.js";
import { matchLine, order, showSsp, type PolicyModel } from "../policy-test/evaluate.js";
import { testsDir } from "../config/test-files.js";
import { lineProblems, type Line } from "../policy-test/line.js";
import { modelsFromLive } from "../plan/policy-models.js";
import { nothingInGit } from "../live/read.js";
import { quotedWhereNeeded } from "../export/mapping.js";
import type { ErrorTransactionFilter, ErrorTransactionRecord } from "../schema/generated/api.js";
import type { ResolvedEnv } from "../config/repo.js";
import { writeUserFile } from "../user-files.js";
import { openClient, openEnv, openRepo } from "./context.js";
import { errorFilter, type ErrorsFlags } from "./errors.js";
import { kindsOf } from "./io.js";
import type { Output } from "./output.js";
import { readWithProgress } from "./reading.js";

export interface RecordFlags extends ErrorsFlags {
  fromErrors?: boolean;
  mask?: string;
  omit?: string;
  out?: string;
}

/** Fields of an order document that name a person or a customer: the summary says when a recorded
 *  file holds them as the service gave them. */
const PERSONAL = ["customer_name", "customer_id", "po_number"];

/** A field whose name says it holds a credential is never written, whatever the service sends. */
const CREDENTIAL = /secret|passw(or)?d|token|api_?key|credential|authori[sz]ation|bearer/i;

const list = (v: string | undefined, flag: string): string[] => {
  if (v === undefined) return [];
  const names = v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!names.length) throw new UserError(`${flag} needs field names separated by commas, e.g. ${flag} customer_name,customer_id`);
  return names;
};

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** One order document as a test line: its fields as the service wrote them (text, numbers, booleans),
 *  without credentials and the fields asked to be left out, the masked ones replaced by a pseudonym
 *  that is the same for the same value (so equal values stay equal). */
function lineOf(
  details: Record<string, unknown>,
  omit: Set<string>,
  mask: Set<string>,
  pseudonyms: Map<string, Map<string, string>>,
  dropped: Set<string>,
): Line {
  const line: Line = {};
  for (const [k, v] of Object.entries(details)) {
    if (omit.has(k)) continue;
    if (CREDENTIAL.test(k)) {
      dropped.add(k);
      continue;
    }
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") continue;
    if (mask.has(k)) {
      const seen = pseudonyms.get(k) ?? new Map<string, string>();
      pseudonyms.set(k, seen);
      const key = String(v);
      if (!seen.has(key)) seen.set(key, `masked-${seen.size + 1}`);
      line[k] = seen.get(key) as string;
    } else line[k] = v;
  }
  return line;
}

/** A recorded case: the line, and the routing it pins. */
interface RecordedCase {
  name: string;
  line: Line;
  expect: { policy: string | null; ssp?: number };
}

/** What the flags ask to be written: which errors, where, and which fields masked or left out. */
interface Request {
  filter: ErrorTransactionFilter;
  mask: Set<string>;
  omit: Set<string>;
  target: string;
  /** The file as the user sees it. */
  shown: string;
}

/** The cases recorded, each with the comment above it (the error it came from, its routing in words),
 *  and what was left out and why. */
interface Recorded {
  cases: RecordedCase[];
  comments: string[];
  same: number;
  withoutDocument: number;
}

/** revsync test record --from-errors: the order lines of error transactions as policy test
 *  cases that pin the routing the service's policies give them today (like revsync test --live), in a
 *  new test file. Read-only against the service. */
export async function runTestRecord(flags: RecordFlags, out: Output): Promise<number> {
  const request = checkRequest(flags, out);
  const repo = openRepo(flags);
  if (existsSync(request.target)) throw new UserError(`${request.shown} exists: test record writes a new file; choose another name, or remove it first`);
  const env = openEnv(repo, flags);
  const { records, policies } = await readSources(env, request.filter, flags, out);
  const recorded = recordCases(records, order(policies), request, out);
  if (!recorded.cases.length) {
    throw new UserError(
      `no order lines to record: ${plural(records.length, "error transaction")} matched${records.length ? ", none with an order document revsync can read" : ""}; nothing was written`,
      records.length ? undefined : "revsync errors --type order with the same filters lists what the service holds",
    );
  }
  warnTested(policies, request, out);
  const text = testFileText(env.name, request, recorded);
  // What revsync knows to be secret never reaches a file.
  const safe = out.redactor.redact(text);
  if (safe !== text) out.warn("a value of the order documents held a secret revsync uses: it is written as [redacted]");
  writeUserFile(request.target, safe);
  const dir = testsDir(repo);
  if (!(request.target === dir || request.target.startsWith(dir + sep))) {
    out.warn(`${request.shown} is outside the tests folder (${relative(out.io.cwd, dir) || "."}): revsync test and plan's impact do not read it there`);
  }
  sayRecorded(records.length, request, recorded, out);
  return 0;
}

/** The flags, checked before anything is read: a source, a new file, an order filter, the fields. */
function checkRequest(flags: RecordFlags, out: Output): Request {
  if (!flags.fromErrors) throw new UserError("test record needs a source: --from-errors (the order lines of the service's error transactions)");
  if (!flags.out) throw new UserError("test record needs --out FILE: the new test file to write (inside the tests folder, so that revsync test reads it)");
  const type = (flags.type ?? "order").toLowerCase();
  if (type !== "order") throw new UserError(`--type must be order: policy tests are about order lines, got ${JSON.stringify(flags.type)}`);
  const filter = errorFilter({ ...flags, type });
  const mask = new Set(list(flags.mask, "--mask"));
  const omit = new Set(list(flags.omit, "--omit"));
  for (const f of mask) if (omit.has(f)) throw new UserError(`${f} is in both --mask and --omit: choose one`);
  const target = resolve(out.io.cwd, flags.out);
  return { filter, mask, omit, target, shown: relative(out.io.cwd, target) || flags.out };
}

/** The error transactions the filter selects, and the service's policies, read at the same time. */
async function readSources(
  env: ResolvedEnv,
  filter: ErrorTransactionFilter,
  flags: RecordFlags,
  out: Output,
): Promise<{ records: ErrorTransactionRecord[]; policies: PolicyModel[] }> {
  const core = openClient(env, flags, out);
  try {
    const [list, live] = await Promise.all([
      errorTransactions.list(core, filter),
      readWithProgress(core, nothingInGit(kindsOf(out.io)), flags, out, { approvedValues: true }),
    ]);
    return { records: list.flatMap((e) => e.compliance_spec ?? []), policies: modelsFromLive(live, kindsOf(out.io)) };
  } finally {
    await core.close();
  }
}

/** Each record's order line as a case, once per distinct line: a line without a document, one that is
 *  not a valid line, or whose routing cannot be told today, is left out (said). */
function recordCases(records: ErrorTransactionRecord[], ordered: PolicyModel[], { mask, omit }: Request, out: Output): Recorded {
  const pseudonyms = new Map<string, Map<string, string>>();
  const dropped = new Set<string>();
  const seen = new Set<string>();
  const recorded: Recorded = { cases: [], comments: [], same: 0, withoutDocument: 0 };
  for (const r of records) {
    const details = r.document_details as Record<string, unknown> | undefined;
    if (!details || typeof details !== "object") {
      recorded.withoutDocument++;
      continue;
    }
    const line = lineOf(details, omit, mask, pseudonyms, dropped);
    const key = JSON.stringify(line);
    if (seen.has(key)) {
      recorded.same++;
      continue;
    }
    seen.add(key);
    const id = r.error_id ?? `record ${recorded.cases.length + 1}`;
    const bad = lineProblems(line);
    if (bad.length) {
      out.warn(`${id} left out: its ${bad.map((b) => `${b.field} ${b.message}`).join("; ")}`);
      continue;
    }
    const got = matchLine(ordered, line);
    if (got.error) {
      out.warn(`${id} left out: its routing cannot be told today (${got.error})`);
      continue;
    }
    const product = typeof line.product_id === "string" ? ` ${line.product_id}` : "";
    recorded.comments.push(
      ` ${[r.error_warning_code, r.error_date, r.error_warning_type].filter(Boolean).join(", ")}: ${got.policy === null ? "meets no policy" : `${got.policy}, SSP ${showSsp(got.ssp)}`}${got.note ? ` (${got.note})` : ""}`,
    );
    recorded.cases.push({ name: `${id}${product}`, line, expect: { policy: got.policy, ...(got.ssp !== null ? { ssp: Number(got.ssp.toFixed(6)) } : {}) } });
  }
  if (dropped.size) out.warn(`left out of every line, because their names say they hold credentials: ${[...dropped].join(", ")}`);
  return recorded;
}

/** A field masked or left out that a policy tests: the recorded routing is that of the line as written. */
function warnTested(policies: PolicyModel[], { mask, omit }: Request, out: Output): void {
  for (const f of [...mask, ...omit]) {
    const by = policies.filter((p) => p.when.some((c) => c.field_name === f)).map((p) => p.name);
    if (by.length)
      out.warn(
        `${f} is ${mask.has(f) ? "masked" : "left out"}, but ${by.join(", ")} test${by.length === 1 ? "s" : ""} it: the recorded routing is that of the line as written`,
      );
  }
}

/** The test file: a header saying where the cases came from, then the cases, each with its comment. */
function testFileText(envName: string, { filter, mask, omit }: Request, { cases, comments }: Recorded): string {
  const when = new Date().toISOString().slice(0, 10);
  const filters = Object.entries(filter)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(", ");
  const header = [
    `Recorded by revsync test record --from-errors on ${when}, from the error transactions of environment ${envName} (${filters}).`,
    "Each case is an order line as the service wrote it (spec 4.10 document_details) and pins the policy, and the SSP,",
    "that the service's policies gave it then. The date for batch values is the first of date, ssp_date, order_date a line has.",
    ...(mask.size ? [`Masked: ${[...mask].join(", ")}.`] : []),
    ...(omit.size ? [`Left out: ${[...omit].join(", ")}.`] : []),
  ];
  const doc = new Document({
    apiVersion: "revsync/v1",
    kind: "SspPolicyTest",
    metadata: { name: `Recorded order lines (${envName}, ${when})` },
    cases,
  });
  // The service's text as text for every reader: a date stays text for a YAML 1.1 reader (ajv-cli).
  quotedWhereNeeded(doc.contents);
  const seq = doc.get("cases", true);
  if (isSeq(seq)) {
    seq.items.forEach((item, i) => {
      if (!isMap(item)) return;
      item.commentBefore = comments[i];
      const expect = item.get("expect", true) as YAMLMap | undefined;
      if (expect) expect.flow = true;
    });
  }
  return `${header.map((h) => `# ${h}`).join("\n")}\n${doc.toString({ lineWidth: 0 })}`;
}

/** What was recorded: cases by the policy each pins, what was left out, and personal fields kept. */
function sayRecorded(read: number, { mask, omit, shown }: Request, { cases, same, withoutDocument }: Recorded, out: Output): void {
  const routes = new Map<string, number>();
  for (const c of cases) routes.set(c.expect.policy ?? "no policy", (routes.get(c.expect.policy ?? "no policy") ?? 0) + 1);
  const skippedNote = [same ? `${plural(same, "line")} the same as another` : "", withoutDocument ? `${withoutDocument} without an order document` : ""]
    .filter(Boolean)
    .join(", ");
  out.out(
    `Recorded ${plural(cases.length, "case")} from ${plural(read, "error transaction")}${skippedNote ? ` (left out: ${skippedNote})` : ""} in ${shown}: ${[
      ...routes,
    ]
      .map(([p, n]) => `${n} ${p}`)
      .join(", ")}.`,
  );
  const personal = PERSONAL.filter((f) => !mask.has(f) && !omit.has(f) && cases.some((c) => f in c.line));
  if (personal.length) {
    out.info(`Note: the cases hold ${personal.join(", ")} as the service gave them; --mask ${personal.join(",")} masks them, --omit leaves them out.`);
  }
}
