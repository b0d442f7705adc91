import { Command, CommanderError } from "commander";
import { ApiError, Cancelled, InternalError, PolicyProblems, UserError, adviceFor, errorObject } from "../errors.js";
import { choiceOption, type GlobalFlags } from "./flags.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../package-root.js";
import { colorFor, Output, Redactor, refuseUnsafeSecrets } from "./output.js";
import { processIo, type CliIo } from "./io.js";
import { SECRET_VARIABLES } from "../api/auth.js";

const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;

function makeOutput(flags: GlobalFlags, redactor: Redactor, io: CliIo): Output {
  return new Output(redactor, io.stdout, io.stderr, { quiet: flags.quiet, verbose: flags.verbose, noColor: flags.color === false, io });
}

/** The command entry: runs one command line (argv as process.argv has it) with the streams, environment,
 *  working directory and signals of `io` (the process's own unless given), and returns the exit code. */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const redactor = new Redactor();
  for (const name of SECRET_VARIABLES) redactor.add(io.env[name]);
  let code = 0;
  // The command that runs: its flags and output, for the one error report below.
  let current: { flags: GlobalFlags; out: Output } | undefined;
  const program = new Command("revsync")
    .description(
      "Policy-as-code for a Revenue Automation Service: keep tenant configuration and SSP policies in git, plan and apply changes, and detect drift.",
    )
    .version(VERSION)
    .exitOverride()
    .configureOutput({
      writeErr: (s) => io.stderr.write(s),
      writeOut: (s) => io.stdout.write(s),
      // commander's own default when the width is unknown (not a terminal).
      getOutHelpWidth: () => (io.stdout.isTTY && io.stdout.columns) || 80,
      getErrHelpWidth: () => (io.stderr.isTTY && io.stderr.columns) || 80,
      getOutHasColors: () => colorFor(io.stdout, false, io.env),
      getErrHasColors: () => colorFor(io.stderr, false, io.env),
      // "Error: …" as every other error of revsync's says it.
      outputError: (s, write) => write(s.replace(/^error:/, "Error:")),
    })
    .showSuggestionAfterError(true)
    .addHelpText(
      "after",
      `
Examples:
  revsync emulator --seed demo          # a local service on http://127.0.0.1:4010
  revsync validate                      # check the policy repo offline
  revsync plan                          # what would change
  revsync apply --auto-approve          # make those changes
  revsync drift                         # what changed outside git

Exit codes: 0 success, 1 error, 2 changes or drift (plan --detailed-exitcode, drift), 130 interrupted.`,
    );

  const run =
    <F extends object>(fn: (flags: F, out: Output, redactor: Redactor, args: string[]) => Promise<number>) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      const flags = { ...cmd.optsWithGlobals(), io } as F & GlobalFlags;
      const out = makeOutput(flags, redactor, io);
      current = { flags, out };
      refuseUnsafeSecrets(io.env, SECRET_VARIABLES);
      code = await fn(flags, out, redactor, cmd.args);
    };

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

  const { register } = await import("./commands.js");
  register(program, run);

  try {
    await program.parseAsync(argv);
    return code;
  } catch (e) {
    const out = current?.out ?? makeOutput(program.opts() as GlobalFlags, redactor, io);
    if (e instanceof CommanderError && !current && e.exitCode !== 0) {
      const format = formatWanted(argv);
      const error = new UserError(e.message.replace(/^error: /, ""));
      // A CI test report is read even when the command line was wrong: the error becomes one; and
      // --format json promises a JSON error object on stdout, whatever went wrong.
      if (format === "junit" && testCommand(argv)) out.raw((await import("../report/policy-test.js")).testJunitError(error));
      if (format === "json") out.json(errorObject(error));
    }
    return report(e, out, current?.flags.format);
  }
}

/** The --format the command line asks for, read before (or without) commander. */
function formatWanted(argv: string[]): string | undefined {
  const args = argv.slice(2);
  for (const [i, a] of args.entries()) {
    if (a === "--") return undefined;
    if (a.startsWith("--format=")) return a.slice("--format=".length);
    if (a === "--format") return args[i + 1];
  }
  return undefined;
}

/** Whether the command line runs `revsync test` (not test record). */
function testCommand(argv: string[]): boolean {
  const args = argv.slice(2);
  const command = args.findIndex((a) => !a.startsWith("-"));
  return args[command] === "test" && args[command + 1] !== "record";
}

/** The one place errors become words and exit codes. With a machine format (json, markdown), stdout
 *  holds only a JSON error object (json) or nothing (markdown); the words go to stderr. */
function report(e: unknown, out: Output, format?: string): number {
  if (e instanceof CommanderError) {
    if (e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help") return 0;
    return 1; // commander printed the message already
  }
  if (e instanceof Cancelled) {
    out.error(e.message);
    return 130;
  }
  if (format === "json") out.json(errorObject(e));
  if (e instanceof PolicyProblems) {
    for (const d of e.diagnostics) out.errorLine(`${d.file}:${d.line}:${d.column}: ${d.severity}: ${d.message}`);
  }
  if (e instanceof UserError) {
    out.error(e.message);
    if (e.hint) out.hint(`Hint: ${e.hint}`);
    return 1;
  }
  if (e instanceof ApiError) {
    out.error(e.message);
    const advice = e.hint ?? adviceFor(e.status);
    if (advice) out.hint(`Hint: ${advice}`);
    return 1;
  }
  const err = e instanceof Error ? e : new InternalError(String(e));
  out.error(`revsync hit an internal error; please report it with this output.\n${err.stack ?? err.message}`);
  return 1;
}
