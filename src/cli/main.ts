import { Command, CommanderError } from "commander";
import { Cancelled, UserError, environmentOf } from "../errors.js";
import type { Runner } from "./commands.js";
import type { GlobalFlags } from "./flags.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../package-root.js";
import { colorFor, Output, Redactor, unsafeSecretRefusal } from "./output.js";
import { processIo, type CliIo } from "./io.js";
import { secretNames, unsafeSecretPlan } from "../session/secrets.js";
import { pickView, viewNamed } from "../report/view.js";
import { failureViews, type Failure, type FailureView } from "../report/views/failure.js";

const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;

function makeOutput(flags: GlobalFlags, redactor: Redactor, io: CliIo): Output {
  return new Output(redactor, io.stdout, io.stderr, { quiet: flags.quiet, verbose: flags.verbose, noColor: flags.color === false, io });
}

/** The command entry: runs one command line (argv as process.argv has it) with the streams, environment,
 *  working directory and signals of `io` (the process's own unless given), and returns the exit code. */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const redactor = new Redactor();
  for (const name of secretNames(io.env)) redactor.add(io.env[name], name);
  const program = programFor(io);
  // The command that runs: its flags and output (for the one error report below), and its exit code.
  const ran: { current?: { flags: GlobalFlags; out: Output; command?: string }; code: number } = { code: 0 };
  const run: Runner =
    (fn) =>
    async (...args) => {
      const cmd = args[args.length - 1] as Command;
      const flags = { ...cmd.optsWithGlobals(), io } as Parameters<typeof fn>[0] & GlobalFlags;
      const out = makeOutput(flags, redactor, io);
      ran.current = { flags, out, command: commandPath(cmd).join(" ") };
      keepSecretsOut(cmd, flags, out, ran);
      ran.code = await fn(flags, out, redactor, cmd.args);
      saySecretsAltered(redactor, out);
    };
  // The command the command line names, alone when that is enough (register says when it is not).
  (await import("./commands.js")).register(program, run, argv[2]);
  // The command whose command line commander refused: its flags, as parsed, pick the failure's view.
  let refused: Command | undefined;
  for (const cmd of commandsOf(program))
    cmd.exitOverride((e) => {
      refused = cmd;
      throw e;
    });
  try {
    await program.parseAsync(argv);
    return ran.code;
  } catch (e) {
    const out = ran.current?.out ?? makeOutput(program.opts() as GlobalFlags, redactor, io);
    const format = ran.current ? ran.current.flags.format : (refused?.opts() as GlobalFlags | undefined)?.format;
    const code = await report(e, out, format, ran.current ? { about: whose(e, ran.current) } : { said: true });
    saySecretsAltered(redactor, out);
    return code;
  }
}

/** revsync and every command under it. */
const commandsOf = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(commandsOf)];

/** The names of a command and the commands above it: ["evidence", "verify"]. */
function commandPath(cmd: Command): string[] {
  const path: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) path.unshift(c.name());
  return path;
}

/** What a failed run's JSON says it was: the command, and the environment whose work the error stopped
 *  (else the one --env or REVSYNC_ENV named), so that a CI matrix's outputs, a failed job's included, are
 *  summed up by environment (revsync summary). A run across environments names none: each environment's
 *  failure is in its own entry. */
function whose(e: unknown, ran: { flags: GlobalFlags; command?: string }): { command?: string; environment?: string } {
  const fleet = (ran.flags as { allEnvs?: boolean; envs?: string }).allEnvs || (ran.flags as { envs?: string }).envs !== undefined;
  const environment = environmentOf(e) ?? (fleet ? undefined : (ran.flags.env ?? (ran.flags.io?.env ?? process.env).REVSYNC_ENV));
  return { ...(ran.command ? { command: ran.command } : {}), ...(environment ? { environment } : {}) };
}

/** Commands that send nothing (no sign-in, no request): an unsafe secret cannot leak through them. */
function sendsNothing(cmd: Command, flags: GlobalFlags): boolean {
  const [top, sub] = commandPath(cmd);
  const live = !!(flags as { live?: boolean }).live;
  if (top === "test") return sub === undefined && !live;
  // evidence verify --live signs in and reads the service.
  return (
    top === "validate" ||
    top === "show" ||
    top === "summary" ||
    top === "completion" ||
    top === "init" ||
    (top === "evidence" && ((sub === "verify" && !live) || sub === "show"))
  );
}

/** A secret that cannot be blanked out without garbling output stops a command that would send anything,
 *  before it does, in words no redactor touches (src/session/secrets.ts says which); a command that sends
 *  nothing goes on, said once, and leaves it in its output. */
function keepSecretsOut(cmd: Command, flags: GlobalFlags, out: Output, ran: { current?: { flags: GlobalFlags; out: Output } }): void {
  const env = flags.io?.env ?? process.env;
  const plan = unsafeSecretPlan(env, sendsNothing(cmd, flags));
  for (const name of plan.drop) out.redactor.drop(env[name]);
  if (plan.refuse) {
    // Said through a redactor of its own: the refusal's words never hold the secret.
    ran.current = { flags, out: makeOutput(flags, new Redactor(), flags.io ?? processIo()) };
    throw unsafeSecretRefusal(plan.refuse);
  }
  if (plan.warning) out.hint(plan.warning);
}

/** A secret revsync holds, blanked out of text it printed (a policy's name, a field's value, a file's
 *  line that holds it): said once, so that "[redacted]" is never taken for what the service or the
 *  file holds. */
function saySecretsAltered(redactor: Redactor, out: Output): void {
  const holders = redactor.altered();
  if (holders.length && out.once("secrets-altered"))
    out.hint(
      `Warning: the value of ${holders.join(", ")} stands in text revsync printed (text from the service or a file, such as a policy's name or a field's value) and is shown there as [redacted]: that text is not what the service or the file holds`,
    );
}

/** revsync itself: its words, its version, and commander writing to the run's streams. */
function programFor(io: CliIo): Command {
  return new Command("revsync")
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
}

/** The one place errors become exit codes; the failure's view, picked by the format the command's report
 *  was asked in (--format, as commander parsed it), says it. A command line commander refused (an
 *  unknown flag, a bad value) before any command ran: commander has said it on stderr, and its view writes
 *  the rest (--format json promises a JSON error object on stdout, whatever went wrong; a CI test report
 *  is read even when the command line was wrong). */
async function report(e: unknown, out: Output, format: string | undefined, failure: Omit<Failure, "error">): Promise<number> {
  if (e instanceof CommanderError) {
    if (e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help") return 0;
    if (failure.said) (await failureView(format))({ error: new UserError(e.message.replace(/^error: /, "")), said: true }, out);
    return 1;
  }
  (await failureView(format))({ error: e, ...failure }, out);
  return e instanceof Cancelled ? 130 : 1;
}

/** The failure's view of a format; a command without --format, or of a format with no view of its own
 *  for a failure, is said as text. */
const failureView = async (format: string | undefined): Promise<FailureView> =>
  (await viewNamed(failureViews, format)) ?? (await pickView(failureViews, undefined));
