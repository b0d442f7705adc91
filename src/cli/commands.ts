import { Argument, type Command } from "commander";
import { applyViews } from "../report/views/apply.js";
import { approvalsActViews, approvalsListViews } from "../report/views/approvals.js";
import { driftViews } from "../report/views/drift.js";
import { fleetViews } from "../report/views/fleet.js";
import { errorsViews } from "../report/views/errors.js";
import { evidenceShowViews, evidenceVerifyViews } from "../report/views/evidence.js";
import { lockStatusViews } from "../report/views/lock.js";
import { planViews, showViews } from "../report/views/plan.js";
import { testViews } from "../report/views/policy-test.js";
import { sspBatchesViews } from "../report/views/ssp.js";
import { validateViews } from "../report/views/validate.js";
import { choiceOption, common, formatOption, overrideOptions } from "./flags.js";
import type { Output, Redactor } from "./output.js";

export type Runner = <F extends object>(
  fn: (flags: F, out: Output, redactor: Redactor, args: string[]) => Promise<number>,
) => (...args: unknown[]) => Promise<void>;

type Register = (program: Command, run: Runner) => void;

/** Every command, in the order help lists them, with the names each registers at the top level. */
const COMMANDS: readonly (readonly [names: readonly string[], add: Register])[] = [
  [["emulator"], registerEmulator],
  [["validate"], registerValidate],
  [["init"], registerInit],
  [["test"], registerTest],
  [["plan"], registerPlan],
  [["show"], registerShow],
  [["apply"], registerApply],
  [["drift"], registerDrift],
  [["summary"], registerSummary],
  [["export"], registerExport],
  [["evidence"], registerEvidence],
  [["lock", "unlock"], registerLock],
  [["login", "logout"], registerLogin],
  [["approvals"], registerApprovals],
  [["errors"], registerErrors],
  [["ssp"], registerSsp],
  [["completion"], registerCompletion],
  [["demo"], registerDemo],
];

/** The names of the top-level commands each entry of `register` adds, in help's order (what the tests
 *  hold the table to). */
export const commandGroups = (): string[][] => COMMANDS.map(([names]) => [...names]);

/** Registers the commands, in the order help lists them; each loads its implementation only when it
 *  runs (validate stays fast). `only`: the first word of the command line. When it names a command, just
 *  the commands registered with it are built, each flag and subcommand of theirs as always: what a
 *  command does, says, refuses or suggests reads its own part of the tree and the root's, never the
 *  commands beside it, and building all of them was some 0.7 ms of CPU of every run (one, 0.02 ms). Any
 *  other first word (a flag, help, a typo whose suggestion names the commands) and completion (its
 *  script is the whole tree) get the whole tree. */
export function register(program: Command, run: Runner, only?: string): void {
  const own = COMMANDS.find(([names]) => only !== undefined && only !== "completion" && names.includes(only));
  for (const [, add] of own ? [own] : COMMANDS) add(program, run);
}

/** revsync emulator: the local service, in this process. */
function registerEmulator(program: Command, run: Runner): void {
  program
    .command("emulator")
    .description("run the local Revenue Automation Service (every endpoint, OAuth, the state rules)")
    .option("--port <port>", "port to listen on (0 picks a free one)", "4010")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--state <file>", "keep state in this JSON file (atomic writes); loaded on start when it exists")
    .addOption(
      choiceOption(
        "--seed <name>",
        "initial state when there is no state file: demo, empty, or multi-env (the two tenants of examples/multi-env)",
        ["demo", "empty", "multi-env"],
        "demo",
      ),
    )
    .option("--access-ttl <seconds>", "access token lifetime", "300")
    .option("--refresh-ttl <seconds>", "refresh token lifetime", "1800")
    .addOption(
      choiceOption(
        "--profile <profile>",
        "answer profile: default, or literal (the spec read literally: nulls where it types null, operator symbols, refusals as 200 with an error array, extra fields, other list orders)",
        ["default", "literal"],
        "default",
      ),
    )
    .option(
      "--rate-limit <rate>",
      "a rate limit in front of the API: a token bucket of N requests per second and its burst (default: one second's worth), e.g. 25/s or 25/s,10; an empty bucket answers 429 at once",
    )
    .option("--no-retry-after", "the rate limit's 429 answers carry no Retry-After")
    .option(
      "--ignore-if-match",
      "accept writes whatever their If-Match header says, as a service that does not honour it would (the interface does not promise it)",
    )
    .option(
      "--four-eyes",
      "refuse (403, with a message) an approve of an SSP batch by the user who reviewed or uploaded it, as the rule that an uploader cannot approve their own file refuses them",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  revsync emulator --seed demo --port 4010\n  revsync emulator --rate-limit 25/s,10     # 429s as a gateway of 25 requests/s, burst 10, would answer\n  curl -s -d grant_type=password -d client_id=revsync -d client_secret=demo-secret \\\n    -d username=alice -d password=alice-password \\\n    http://127.0.0.1:4010/auth/realms/demo/protocol/openid-connect/token",
    )
    .action(run(async (f, out) => (await import("./emulator.js")).runEmulator(f as never, out)));
}

/** revsync validate: the policy repo checked offline. */
function registerValidate(program: Command, run: Runner): void {
  common(
    program
      .command("validate")
      .description("check the policy repo offline: YAML, schemas and semantic rules; no network, no credentials")
      .addHelpText(
        "after",
        "\nExamples:\n  revsync validate\n  revsync validate --format json\n  revsync validate --env production\n\nEvery environment of revsync.yaml is checked unless --env names one.\nExit: 0 valid, 1 invalid. In GitHub Actions (GITHUB_ACTIONS=true) problems are also annotations.",
      ),
    { views: validateViews, offline: true },
  ).action(run(async (f, out) => (await import("./validate.js")).runValidate(f, out)));
}

/** revsync init: a policy repo scaffolded, or what one lacks added. */
function registerInit(program: Command, run: Runner): void {
  program
    .command("init")
    .argument("[dir]", "folder to scaffold (default: this one)")
    .description(
      "scaffold a policy repo, or add what an existing one lacks: revsync.yaml, policies/, schemas for editors, .gitignore, a package.json pinning revsync, and CI recipes on request",
    )
    .option("--env <name>", "the environment's name in a new revsync.yaml (default: sandbox)")
    .option("--base-url <url>", "the service's base URL (default: ${<ENV>_BASE_URL}, set in the environment or CI)")
    .option("--realm <realm>", "the tenant's realm (default: ${<ENV>_REALM})")
    .addOption(choiceOption("--ci <kind>", "also write CI recipes: github or gitlab (for the environments of revsync.yaml)", ["github", "gitlab"]))
    .option("--pin <spec>", "what package.json pins revsync to, an npm dependency spec (default: the git repository revsync came from, at tag v<version>)")
    .option("--force", "overwrite files that exist (revsync.yaml too)")
    .addHelpText(
      "after",
      "\nExamples:\n  revsync init my-policies --env sandbox --realm acme-sandbox\n  revsync init . --ci github          # in a repo that has revsync.yaml: adds the recipes for its environments\n\nThen: npm install, export the tenant's policies (revsync export), validate, plan.\nAdds only what is missing: a file that exists is kept (and named) unless --force; an existing\n.gitignore gets the lines it lacks, an existing package.json the revsync pin (--pin changes it).",
    )
    .action(run(async (f, out, _r, args) => (await import("./init.js")).runInit(f, out, args)));
}

/** revsync test, and test record under it. */
function registerTest(program: Command, run: Runner): void {
  common(
    program
      .command("test")
      .description(
        "policy tests: which SSP policy each test case's order line meets first, at what SSP, and how each contract's price is allocated over its lines",
      )
      .option("--live", "evaluate against the service's policies (read-only) instead of git's; with --all-envs or --envs, each environment's")
      .addHelpText(
        "after",
        '\nExamples:\n  revsync test\n  revsync test --live --env production\n  revsync test --format junit > policy-tests.xml\n  revsync test record --from-errors --out tests/recorded-orders.yaml\n\nTest files (kind SspPolicyTest) live in the folder that tests: in revsync.yaml names (default tests/).\nOffline no --env is needed: every environment\'s vars are read. The matching rules are in the README\n("Policy tests"); how a contract is allocated, and service.allocation_rules, under "Contracts".\nExit: 0 every case and contract passes (or there are none, with a note), 1 one fails or a file is invalid.',
      ),
    { views: testViews, fleet: true },
  ).action(run(async (f, out) => (await import("./test.js")).runTest(f, out)));
  registerTestRecord(program.commands.find((c) => c.name() === "test") as Command, run);
}

/** revsync test record: cases from real orders. One source today, named by a flag (--from-errors) so
 *  the command reads as what it does, and its filters are those of revsync errors, so a person previews
 *  with errors and records with the same flags. */
function registerTestRecord(test: Command, run: Runner): void {
  common(
    test
      .command("record")
      .description("write policy test cases from the order lines of the service's error transactions, pinning today's routing")
      .option("--from-errors", "take the order lines of error transactions (spec 4.10; required: the one source)")
      .option("--out <file>", "the new test file to write (required; inside the tests folder)")
      .option("--mask <fields>", "replace these fields' values by pseudonyms, e.g. customer_name,customer_id")
      .option("--omit <fields>", "leave these fields out of every line")
      .addOption(choiceOption("--type <type>", "transaction type: order (the default, and the only one with order lines)", ["order"]))
      .addOption(choiceOption("--kind <kind>", "remediable or discarded", ["remediable", "discarded"]))
      .option("--code <code>", "error code, e.g. ERR-00015")
      .option("--request-id <id>", "request id of the processed file")
      .option("--financial-id <id>", "order financial id")
      .option("--from <date>", "from this date, YYYY-MM-DD, inclusive")
      .option("--to <date>", "to this date, YYYY-MM-DD, inclusive")
      .option("--legal-entity <entity>", "one legal entity")
      .addHelpText(
        "after",
        "\nExamples:\n  revsync test record --from-errors --out policy-tests/recorded-orders.yaml\n  revsync test record --from-errors --code ERR-00015 --from 2026-10-01 --mask customer_name,customer_id --out tests/october.yaml\n\nEach case pins the policy and SSP the service's policies give the line today (as revsync test --live\nwould compute them); revsync test --live passes on the new file, and plan's impact lists a case that a\nchange in git re-routes. Credentials are never written. Exit: 0 written, 1 error (nothing written).",
      ),
  ).action(run(async (f, out) => (await import("./test-record.js")).runTestRecord(f, out)));
}

/** revsync plan. */
function registerPlan(program: Command, run: Runner): void {
  const cmd = common(
    program
      .command("plan")
      .description("compare the policy repo with the service and print what apply would change")
      .option("--out <file>", "save the plan (JSON) to apply exactly it later; with --all-envs or --envs, a folder: one <environment>.plan.json each")
      .option(
        "--detailed-exitcode",
        "exit 2 when apply would change something, else 0 (blocked, not in git and unsupported entries are listed, not counted); across environments: 1 if any failed, else 2 if any has changes",
      )
      .addHelpText(
        "after",
        "\nExamples:\n  revsync plan\n  revsync plan --format markdown > plan.md\n  revsync plan --out demo.plan.json --detailed-exitcode\n  revsync plan --target 'ssp/Hardware SSP'\n  revsync plan --all-envs --format markdown > plans.md\n  revsync plan --envs sandbox,production --out plans/",
      ),
    { views: planViews, target: true, fleet: true },
  );
  overrideOptions(cmd).action(run(async (f, out) => (await import("./plan.js")).runPlan(f, out)));
}

/** revsync show: a saved plan, offline. */
function registerShow(program: Command, run: Runner): void {
  program
    .command("show")
    .argument("<planfile>", "a plan saved with plan --out")
    .description("print a saved plan as plan prints one; offline: no revsync.yaml, no credentials, no request")
    .addOption(formatOption(showViews))
    .option("-q, --quiet", "print the plan only, no notes")
    .option("--no-color", "plain output (also NO_COLOR)")
    .addHelpText(
      "after",
      "\nExamples:\n  revsync show demo.plan.json\n  revsync show demo.plan.json --format markdown > plan.md\n\nThe file is checked as apply checks it: a plan edited by hand, of another format or invalid is refused (exit 1).",
    )
    .action(run(async (f, out, _r, args) => (await import("./show.js")).runShow(f, out, args)));
}

/** revsync apply. */
function registerApply(program: Command, run: Runner): void {
  const cmd = common(
    program
      .command("apply")
      .argument("[planfile]", "a plan saved with plan --out; without it, apply plans first")
      .description("make the planned changes, in dependency order; asks first unless --auto-approve")
      .option("--auto-approve", "do not ask (required without a terminal)")
      .option("--evidence <dir>", "also write one hash-chained JSON evidence record of this run into DIR (default: evidence: of revsync.yaml)")
      .option("--lock-timeout <duration>", "wait up to this long (30s, 10m) for another apply's lock of the environment (default: fail at once, naming it)")
      .addOption(
        choiceOption("--lock <bool>", "--lock=false: apply without the environment's lock (said in the evidence record); only explicitly", ["true", "false"]),
      )
      .addHelpText(
        "after",
        "\nExamples:\n  revsync apply                       # plan, show, ask, apply\n  revsync apply demo.plan.json --auto-approve\n  revsync apply demo.plan.json --auto-approve --evidence evidence/\n  revsync apply demo.plan.json --auto-approve --lock-timeout 10m\n\nA saved plan is refused when anything it touches changed since it was made.\nOne writer per tenant: apply holds the lock of the environment's tenant from its first write to its\nlast (revsync lock status shows the holder; revsync unlock --env NAME LOCK_ID releases a dead one's).\nWith --evidence, every run that gets as far as a plan leaves a record (revsync evidence verify, show).\nExit: 0 done, 1 error, failure, refused or locked, 130 interrupted (SIGINT/SIGTERM).",
      ),
    { views: applyViews, target: true },
  );
  overrideOptions(cmd).action(run(async (f, out, r, args) => (await import("./apply.js")).runApply(f, out, r, args)));
}

/** revsync drift. */
function registerDrift(program: Command, run: Runner): void {
  common(
    program
      .command("drift")
      .description("report what differs between the service and git (read-only)")
      .addHelpText(
        "after",
        "\nExamples:\n  revsync drift\n  revsync drift --all-envs --format markdown\n  revsync drift --envs prod-eu,prod-us --parallel 2\n\nExit: 0 no drift, 2 drift, 1 error (across environments: 1 if any failed, else 2 if any drifted).",
      ),
    { views: driftViews, target: true, fleet: true },
  ).action(run(async (f, out) => (await import("./drift.js")).runDrift(f, out)));
}

/** revsync summary: a CI matrix's JSON outputs as one fleet's summary, offline. */
function registerSummary(program: Command, run: Runner): void {
  program
    .command("summary")
    .argument("[files...]", "JSON outputs of plan, drift or test --live, one environment each (a failed run's included), or of a run across environments")
    .description("sum up a CI matrix's jobs: their JSON outputs as one summary of every environment, failures first, as --all-envs prints it; offline")
    .option("--all-envs", "expect every environment of revsync.yaml: one that no file holds is a failure")
    .option("--envs <names>", "expect these environments (comma-separated): one that no file holds is a failure")
    .option("--config <file>", "path of revsync.yaml (default: found from the working directory upwards)")
    .option("--detailed-exitcode", "exit 2 when a plan has changes apply would make (drift exits 2 on drift whatever this says)")
    .addOption(formatOption(fleetViews))
    .option("-q, --quiet", "print the summary only, no notes")
    .option("--no-color", "plain output (also NO_COLOR)")
    .addHelpText(
      "after",
      "\nExamples:\n  revsync summary outputs/*.json\n  revsync summary --all-envs --format markdown drift-*.json > drift.md\n\nExit: 1 if any environment failed (or, with --all-envs or --envs, has no output), else 2 if any drifted\n(or, with --detailed-exitcode, a plan has changes), else 0.",
    )
    .action(run(async (f, out, _r, args) => (await import("./summary.js")).runSummary(f as never, out, args)));
}

/** revsync export. */
function registerExport(program: Command, run: Runner): void {
  common(
    program
      .command("export")
      .description(
        "write the service's current policies as policy files: each file git has is updated in place (found by metadata.name), a new one only for a policy git lacks",
      )
      .option("--dir <dir>", "folder to write into (default: the policies folder of revsync.yaml)")
      .option("--dry-run", "say which files would be written or updated; write nothing")
      .option(
        "--all-envs",
        "adopt every environment of revsync.yaml into one set of files: a field that differs becomes a ${VAR} with each environment's value in its vars",
      )
      .addHelpText(
        "after",
        "\nExamples:\n  revsync export --env sandbox\n  revsync export --all-envs\n  revsync export --dry-run\n  revsync export --target 'ssp/Hardware SSP' --dir policies\n\nA policy's file keeps its name and its comments; only what differs from the service changes.",
      ),
    { target: true },
  ).action(
    run(async (f, out) =>
      (f as { allEnvs?: boolean }).allEnvs ? (await import("./export-all-envs.js")).runExportAllEnvs(f, out) : (await import("./export.js")).runExport(f, out),
    ),
  );
}

/** revsync approvals list, approve and reject. */
function registerApprovals(program: Command, run: Runner): void {
  const approvalsCmd = program
    .command("approvals")
    .description("manual-upload approvals (spec 4.8, 4.9)")
    .addHelpText(
      "after",
      '\nExamples:\n  revsync approvals list\n  revsync approvals approve APR-0003 --comment "Checked against the CRM export"\n  revsync approvals reject --all --uploaded-by carol --comment "Duplicate upload" --dry-run',
    );
  common(approvalsCmd.command("list").description("list uploads pending approval").addHelpText("after", "\nExample:\n  revsync approvals list --format json"), {
    views: approvalsListViews,
  }).action(run(async (f, out) => (await import("./approvals.js")).runApprovalsList(f, out)));
  for (const action of ["approve", "reject"] as const) {
    common(
      approvalsCmd
        .command(action)
        .argument("[ids...]", "approval ids (from approvals list)")
        .description(
          action === "approve"
            ? "approve pending uploads (your own uploads are left out: an uploader cannot approve their file)"
            : "reject pending uploads (an uploader may reject their own)",
        )
        .option("--comment <text>", "mandatory comment recorded with the action")
        .option("--all", "act on every pending upload that the filters select")
        .option("--type <type>", "with --all: transaction type, e.g. ORDER")
        .option("--uploaded-by <user>", "with --all: uploader")
        .option("--file <text>", "with --all: file name contains")
        .option("--dry-run", "list what would be acted on; send nothing")
        .option("--yes", "do not ask before acting on more than one upload (required without a terminal)")
        .addHelpText(
          "after",
          `\nExamples:\n  revsync approvals ${action} APR-0003 APR-0004 --comment "Checked against CRM"\n  revsync approvals ${action} --all --type ORDER --comment "Month-end batch" --dry-run\n  revsync approvals ${action} --all --type ORDER --comment "Month-end batch" --yes\n\nMore than one upload (or --all): asks first on a terminal; without one, --yes is required.`,
        ),
      { views: approvalsActViews },
    ).action(run(async (f, out, _r, args) => (await import("./approvals.js")).runApprovalsAct(action, f, out, args)));
  }
}

/** revsync errors. */
function registerErrors(program: Command, run: Runner): void {
  common(
    program
      .command("errors")
      .description("error transactions (spec 4.10), filtered")
      .addOption(choiceOption("--type <type>", "order, invoice, event or mje (required)", ["order", "invoice", "event", "mje"]))
      .addOption(choiceOption("--kind <kind>", "remediable or discarded", ["remediable", "discarded"]))
      .option("--code <code>", "error code, e.g. ERR-00015")
      .option("--request-id <id>", "request id of the processed file")
      .option("--financial-id <id>", "order or bill financial id")
      .option("--from <date>", "from this date, YYYY-MM-DD, inclusive")
      .option("--to <date>", "to this date, YYYY-MM-DD, inclusive")
      .option("--legal-entity <entity>", "one legal entity")
      .option("--summary", "group by error code with counts and the suggested fix")
      .addHelpText(
        "after",
        "\nExamples:\n  revsync errors --type order --from 2026-10-01 --to 2026-10-31\n  revsync errors --type order --summary\n  revsync errors --type invoice --format csv > invoice-errors.csv",
      ),
    { views: errorsViews },
  ).action(run(async (f, out) => (await import("./errors.js")).runErrors(f, out)));
}

/** revsync ssp batches, template and download. */
function registerSsp(program: Command, run: Runner): void {
  const sspCmd = program
    .command("ssp")
    .description("SSP batches and their files (spec 4.3, 4.4, 4.5)")
    .addHelpText(
      "after",
      "\nExamples:\n  revsync ssp batches 'Hardware SSP'\n  revsync ssp template --output new-batch.csv\n  revsync ssp download FILE-SSP-HW-2 --output fy26-h1.csv",
    );
  common(
    sspCmd
      .command("batches")
      .argument("[policy]", "only this SSP policy (its exact name)")
      .description("list SSP batches: status, file id (what ssp download takes), rows and dates; read-only")
      .addHelpText("after", "\nExamples:\n  revsync ssp batches\n  revsync ssp batches 'Hardware SSP' --format json"),
    { views: sspBatchesViews },
  ).action(run(async (f, out, _r, args) => (await import("./ssp-batches.js")).runSspBatches(f, out, args)));
  common(
    sspCmd
      .command("template")
      .description("print the SSP batch template (CSV); for a batch the service does not have yet, the generic one")
      .option("--batch <name>", "template for this batch (a new name gets the generic template)")
      .option("--output <file>", "write to a file instead of stdout")
      .addHelpText("after", "\nExample:\n  revsync ssp template --output new-batch.csv"),
  ).action(run(async (f, out, _r, args) => (await import("./ssp-files.js")).runSspFile("template", f, out, args)));
  common(
    sspCmd
      .command("download")
      .argument("<file_id>", "file id of an uploaded batch")
      .description("download an uploaded SSP batch's values (CSV), byte for byte")
      .option("--output <file>", "write to a file instead of stdout")
      .addHelpText("after", "\nExample:\n  revsync ssp download FILE-SSP-HW-2 --output fy26-h1.csv"),
  ).action(run(async (f, out, _r, args) => (await import("./ssp-files.js")).runSspFile("download", f, out, args)));
}

/** revsync completion: a shell's completion script, read from the command tree. */
function registerCompletion(program: Command, run: Runner): void {
  program
    .command("completion")
    .addArgument(new Argument("<shell>", "the shell: bash, zsh or fish").choices(["bash", "zsh", "fish"]))
    .description("print a shell completion script for revsync's commands and flags")
    .addHelpText(
      "after",
      "\nExamples:\n  source <(revsync completion bash)                      # this shell; add the line to ~/.bashrc to keep it\n  source <(revsync completion zsh)                       # this shell; add the line to ~/.zshrc to keep it\n  revsync completion fish > ~/.config/fish/completions/revsync.fish",
    )
    .action(
      run(async (_f, out, _r, args) => {
        out.raw((await import("./completion.js")).completionScript(args[0] ?? "", program));
        return 0;
      }),
    );
}

/** revsync demo (npm start). */
function registerDemo(program: Command, run: Runner): void {
  common(
    program
      .command("demo")
      .description("start a demo emulator in this process and plan policies/ against it (what npm start runs)")
      .addHelpText("after", "\nExample:\n  npm start            # the same as: npx revsync demo"),
    { views: planViews, target: true },
  ).action(run(async (f, out) => (await import("./demo.js")).runDemo(f, out)));
}

/** revsync lock status, revsync unlock: who holds an environment's lock, and releasing a dead holder's. */
function registerLock(program: Command, run: Runner): void {
  const lockCmd = program
    .command("lock")
    .description("the environment's lock that apply holds while it writes (one writer per environment)")
    .addHelpText("after", "\nExamples:\n  revsync lock status --env production\n  revsync unlock --env production 8dbd59891142");
  common(
    lockCmd
      .command("status")
      .description("who holds the environment's lock: user, host, CI run, since when, the plan's checksum, the lock id; read-only")
      .addHelpText(
        "after",
        "\nExamples:\n  revsync lock status --env production\n  revsync lock status --env production --format json\n\nExit: 0 (locked or not), 1 when the lock cannot be read.",
      ),
    { views: lockStatusViews },
  ).action(run(async (f, out) => (await import("./lock.js")).runLockStatus(f, out)));
  const unlock = common(
    program
      .command("unlock")
      .argument("<lock_id>", "the lock's id, as lock status and a waiting apply show it (7 characters or more of it)")
      .option("--force", "release without asking (required without a terminal), even the lock of a process running on this host")
      .description("release the environment's lock left by an apply that died (killed, its runner gone), as terraform force-unlock")
      .addHelpText(
        "after",
        "\nExample:\n  revsync unlock --env production 8dbd59891142\n\n--env is required, and the id must name the lock held now: a lock another apply took since is never\nreleased by mistake. Release only a lock whose apply is no longer running: the lock of a process that\nruns on this host is refused unless --force; any other is released once you answer yes on a terminal,\nor with --force where there is none (CI).\nExit: 0 released (or not locked), 1 refused, declined, another lock is held, or an error.",
      ),
  );
  // The lock of one environment, named on purpose: unlock takes no default environment (neither the only
  // one nor REVSYNC_ENV), so its --env says so instead of the shared flag's default.
  const env = unlock.options.find((o) => o.long === "--env");
  if (env) env.description = "the environment whose lock to release (required: unlock takes neither the only environment nor REVSYNC_ENV)";
  unlock.action(run(async (f, out, _r, args) => (await import("./lock.js")).runUnlock(f, out, args)));
}

/** revsync login and logout: a person's sign-in through the browser (the spec's implicit flow), kept
 *  for its lifetime. */
function registerLogin(program: Command, run: Runner): void {
  const where = (cmd: Command): Command =>
    cmd
      .option("--env <name>", "environment of revsync.yaml (default: the only one, or REVSYNC_ENV)")
      .option("--config <file>", "path of revsync.yaml (default: found from the working directory upwards)");
  where(
    program
      .command("login")
      .description(
        "sign in through your browser (the service's implicit flow): the token is kept, readable by you alone, for its lifetime (5 minutes by the spec), for this environment",
      )
      .option("--approver", "sign in the four-eyes approver identity (approves are sent as it), not revsync's own sign-in")
      .option("--timeout <duration>", "how long to wait for the browser's answer, e.g. 90s, 5m", "5m"),
  )
    .option("-q, --quiet", "print results only, no notes")
    .option("--no-color", "plain output (also NO_COLOR)")
    .addHelpText(
      "after",
      "\nExamples:\n  revsync login --env sandbox\n  revsync login --env production --approver\n  BROWSER=firefox revsync login\n\nNeeds REVSYNC_CLIENT_ID (no secret). Opens BROWSER, else the system's browser, at the realm's sign-in page\n(and prints its address); the service sends the browser back to a listener on 127.0.0.1, which takes one\nanswer whose state matches and closes. Commands use the kept token when no REVSYNC_TOKEN,\nREVSYNC_USERNAME or REVSYNC_PASSWORD (for --approver: REVSYNC_APPROVER_*) is set; once it ends they\nsay to sign in again.\nExit: 0 signed in, 1 not signed in (refused, no answer in time), 130 stopped (Ctrl-C).",
    )
    .action(run(async (f, out) => (await import("./login.js")).runLogin(f, out)));
  where(program.command("logout").description("remove the tokens revsync login kept for this environment (yours and the approver's)"))
    .option("-q, --quiet", "print results only, no notes")
    .option("--no-color", "plain output (also NO_COLOR)")
    .addHelpText("after", "\nExample:\n  revsync logout --env sandbox\n\nExit: 0 (removed, or nothing kept), 1 an error.")
    .action(run(async (f, out) => (await import("./login.js")).runLogout(f, out)));
}

/** revsync evidence verify and show. */
function registerEvidence(program: Command, run: Runner): void {
  const evidenceCmd = program
    .command("evidence")
    .description("check and print the evidence records apply --evidence writes (for auditors)")
    .addHelpText(
      "after",
      "\nExamples:\n  revsync evidence verify evidence/\n  revsync evidence verify evidence/ --live --env production\n  revsync evidence show evidence/ --format markdown > change-log.md",
    );
  common(
    evidenceCmd
      .command("verify")
      .argument("<dir>", "the folder of evidence records")
      .description("check every record's hash and each environment's chain; with --live, whether what each record applied still holds")
      .option("--live", "also read the service: per record, what it applied that still holds, and what changed since and who changed it")
      .addHelpText(
        "after",
        "\nExamples:\n  revsync evidence verify evidence/\n  revsync evidence verify evidence/ --live --format json\n\nNames each record that was edited, removed from the middle of its chain or reordered, and prints the\nlatest hash of each environment: anchor it where the team cannot edit it (the job log, a protected branch);\nof a chain that does not hold it names the last record that does instead.\nExit: 0 every record intact (with --live, and what each applied still holds), 1 a record failed the check\n(or, with --live, a change it applied no longer holds), or an error.",
      ),
    { views: evidenceVerifyViews },
  ).action(run(async (f, out, _r, args) => (await import("./evidence.js")).runEvidenceVerify(f, out, args)));
  common(
    evidenceCmd
      .command("show")
      .argument("<record>", "an evidence record, or a folder of them")
      .description("print evidence records for an auditor: what was approved, by whom, when, what was sent, what became of it; offline")
      .option("--last <n>", "only the last N records (of --env, when given)")
      .addHelpText(
        "after",
        "\nExamples:\n  revsync evidence show evidence/2026-11-24T060102.123Z-production-3f2a9c1b0d4e.json\n  revsync evidence show evidence/ --env production --last 10 --format markdown\n\nEach record is checked as evidence verify checks it in its folder: one verify does not hold is flagged, and show exits 1.",
      ),
    { views: evidenceShowViews, offline: true },
  ).action(run(async (f, out, _r, args) => (await import("./evidence.js")).runEvidenceShow(f, out, args)));
}
