/** The flags every command shares, and their type: what each command's module needs of the command
 *  line (main.ts registers the commands and runs them). */
import { InvalidArgumentError, Option, type Command } from "commander";
import { formatsOf, type Views } from "../report/view.js";
import type { CliIo } from "./io.js";

export interface GlobalFlags {
  env?: string;
  config?: string;
  format?: string;
  target?: string[];
  concurrency?: string;
  rateLimit?: string;
  timeout?: string;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
  /** Internal (never a flag): variables that take precedence over the process environment for this run
   *  (revsync demo points the run at its own emulator without writing process.env). */
  envOverride?: Record<string, string | undefined>;
  /** Internal (never a flag): the run's streams, environment, working directory and signals. */
  io?: CliIo;
  /** Internal (never a flag): where the reads' progress goes instead of a progress line of their own (one
   *  environment of a fleet: the fleet's line shows it beside the others in flight). */
  progressTo?: (text: string) => void;
}

/** Other names of a format: `table` was the name of text in some commands, and still works. */
const FORMAT_ALIASES: Record<string, string> = { table: "text" };

/** --format, one vocabulary for every command: `text` (the default, for people), then the machine ones:
 *  the formats of the report's views (src/report/view.ts), in their order. */
export function formatOption(views: Views<unknown>): Option {
  const choices = formatsOf(views);
  const aliases = Object.entries(FORMAT_ALIASES).filter(([, to]) => choices.includes(to));
  const also = aliases.length ? ` (${aliases.map(([a, to]) => `${a} is another name for ${to}`).join(", ")})` : "";
  const option = new Option("--format <format>", `output format${also}`).default(choices[0]).argParser((value: string) => {
    const v = FORMAT_ALIASES[value] && choices.includes(FORMAT_ALIASES[value]) ? FORMAT_ALIASES[value] : value;
    if (!choices.includes(v)) throw new InvalidArgumentError(`Allowed choices are ${choices.join(", ")}.`);
    return v;
  });
  // Shown in --help and offered by shell completion; the parser above also takes the aliases.
  option.argChoices = choices;
  return option;
}

/** An option whose value is one of a fixed list: the list shows in --help and shell completion offers it.
 *  The command checks the value itself (its own words; some take other spellings, e.g. ORDER). */
export function choiceOption(flags: string, description: string, choices: string[], defaultValue?: string): Option {
  const option = new Option(flags, description);
  if (defaultValue !== undefined) option.default(defaultValue);
  option.argChoices = choices;
  return option;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Overrides of guardrails and freeze windows (plan shows them, apply applies them). */
export interface OverrideFlags {
  override?: string[];
  reason?: string;
}

/** --override NAME (repeatable) and --reason TEXT (docs/guardrails.md, "Overrides"). */
export function overrideOptions(cmd: Command): Command {
  return cmd
    .option(
      "--override <name>",
      "override this guardrail or freeze window (repeatable); only one with override_by, when the approver identity or, in CI, a pull request approval is one of them",
      collect,
    )
    .option("--reason <text>", "why the overrides are made: shown in the plan and kept in the evidence (required with --override)");
}

/** The flags commands share (README, "Commands"), in one place. `offline` commands (validate, init, test)
 *  leave out what only means something when talking to the service; `views`: the report the command
 *  prints, whose formats --format offers. */
export function common(cmd: Command, opts: { views?: Views<unknown>; target?: boolean; offline?: boolean; fleet?: boolean } = {}): Command {
  cmd
    .option("--env <name>", "environment of revsync.yaml (default: the only one, or REVSYNC_ENV)")
    .option("--config <file>", "path of revsync.yaml (default: found from the working directory upwards)");
  if (!opts.offline) {
    cmd
      .option("--concurrency <n>", "requests in flight at once", "8")
      .option(
        "--rate-limit <n>",
        "requests per second the service allows: start there, never above (default: rate_limit of the environment, else learned from its 429s)",
      )
      .option("--timeout <duration>", "time limit of the run's requests, e.g. 90s, 10m, 1h: nothing is sent (or sent again) after it", "10m");
  }
  cmd.option("-q, --quiet", "print results only, no progress or notes");
  if (!opts.offline) cmd.option("-v, --verbose", "log each request (method, path with its query, status, time, retries); never secrets");
  cmd.option("--no-color", "plain output (also NO_COLOR)");
  if (opts.views) cmd.addOption(formatOption(opts.views));
  if (opts.target) cmd.option("--target <address>", "only this resource (repeatable), e.g. ssp/Hardware SSP", collect);
  if (opts.fleet) fleetOptions(cmd);
  return cmd;
}

/** The flags of a run across environments (plan, drift, test --live): which environments, how many at once. */
export function fleetOptions(cmd: Command): Command {
  return cmd
    .option("--all-envs", "every environment of revsync.yaml, several at once, with one summary")
    .option("--envs <names>", "these environments (comma-separated), several at once, with one summary")
    .option("--parallel <n>", "environments at once with --all-envs or --envs, each with its own sign-in and rate governor (default: 4)");
}
