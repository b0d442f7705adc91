import { existsSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { errorTransactions } from "../api/resources.js";
import { UserError } from "../errors.js";
import { order, type PolicyModel } from "../policy-test/evaluate.js";
import { testsDir } from "../config/test-files.js";
import { modelsFromLive } from "../plan/policy-models.js";
import { nothingInGit } from "../live/read.js";
import { recordCases, testedWarnings, testFileText, type RecordAsked } from "../export/test-cases.js";
import { recordedText } from "../report/test-record.js";
import type { ErrorTransactionFilter, ErrorTransactionRecord } from "../schema/generated/api.js";
import type { ResolvedEnv } from "../config/repo.js";
import { writeUserFile } from "../user-files.js";
import { plural } from "../words.js";
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

const list = (v: string | undefined, flag: string): string[] => {
  if (v === undefined) return [];
  const names = v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!names.length) throw new UserError(`${flag} needs field names separated by commas, e.g. ${flag} customer_name,customer_id`);
  return names;
};

/** What the flags ask to be written: which errors, where, and which fields masked or left out. */
interface Request extends RecordAsked {
  target: string;
  /** The file as the user sees it. */
  shown: string;
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
  const recorded = recordCases(records, order(policies), request);
  for (const w of recorded.warnings) out.warn(w);
  if (!recorded.cases.length) {
    throw new UserError(
      `no order lines to record: ${plural(records.length, "error transaction")} matched${records.length ? ", none with an order document revsync can read" : ""}; nothing was written`,
      records.length ? undefined : "revsync errors --type order with the same filters lists what the service holds",
    );
  }
  for (const w of testedWarnings(policies, request)) out.warn(w);
  const text = testFileText(env.name, request, recorded);
  // What revsync knows to be secret never reaches a file.
  const safe = out.redactor.redact(text);
  if (safe !== text) out.warn("a value of the order documents held a secret revsync uses: it is written as [redacted]");
  writeUserFile(request.target, safe);
  const dir = testsDir(repo);
  if (!(request.target === dir || request.target.startsWith(dir + sep))) {
    out.warn(`${request.shown} is outside the tests folder (${relative(out.io.cwd, dir) || "."}): revsync test and plan's impact do not read it there`);
  }
  recordedText(records.length, request, recorded, out);
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
