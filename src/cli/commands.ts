import type { Command } from "commander";
import { common } from "./main.js";
import type { Output, Redactor } from "./output.js";

export type Runner = <F extends object>(
  fn: (flags: F, out: Output, redactor: Redactor, args: string[]) => Promise<number>,
) => (...args: unknown[]) => Promise<void>;

/** Registers the commands; each loads its implementation only when it runs (validate stays fast). */
export function register(program: Command, run: Runner): void {
  common(
    program
      .command("validate")
      .description("check the policy repo offline: YAML, schemas and semantic rules; no network, no credentials")
      .addHelpText("after", "\nExamples:\n  revsync validate\n  revsync validate --format json\n\nExit: 0 valid, 1 invalid. In GitHub Actions (GITHUB_ACTIONS=true) problems are also annotations."),
    { format: ["text", "json"] },
  ).action(run(async (f, out) => (await import("./validate.js")).runValidate(f, out)));
  registerEngine(program, run);
}

export function registerEngine(program: Command, run: Runner): void {
  common(
    program
      .command("plan")
      .description("compare the policy repo with the service and print what apply would change")
      .option("--out <file>", "save the plan (JSON) to apply exactly it later")
      .option("--detailed-exitcode", "exit 0 when there are no changes, 2 when there are")
      .addHelpText("after", "\nExamples:\n  revsync plan\n  revsync plan --format markdown > plan.md\n  revsync plan --out demo.plan.json --detailed-exitcode\n  revsync plan --target 'ssp/Hardware SSP'"),
    { format: ["text", "json", "markdown"], target: true },
  ).action(run(async (f, out) => (await import("./engine.js")).runPlan(f, out)));

  common(
    program
      .command("apply")
      .argument("[planfile]", "a plan saved with plan --out; without it, apply plans first")
      .description("make the planned changes, in dependency order; asks first unless --auto-approve")
      .option("--auto-approve", "do not ask (required without a terminal)")
      .addHelpText("after", "\nExamples:\n  revsync apply                       # plan, show, ask, apply\n  revsync apply demo.plan.json --auto-approve\n\nA saved plan is refused when anything it touches changed since it was made.\nExit: 0 done, 1 error, failure or refused, 130 interrupted (SIGINT/SIGTERM)."),
    { format: ["text", "json"], target: true },
  ).action(run(async (f, out, r, args) => (await import("./engine.js")).runApply(f, out, r, args)));

  common(
    program
      .command("drift")
      .description("report what differs between the service and git (read-only)")
      .option("--all-envs", "check every environment of revsync.yaml")
      .addHelpText("after", "\nExamples:\n  revsync drift\n  revsync drift --all-envs --format markdown\n\nExit: 0 no drift, 2 drift, 1 error (with --all-envs: 1 if any failed, else 2 if any drifted)."),
    { format: ["text", "json", "markdown"], target: true },
  ).action(run(async (f, out) => (await import("./engine.js")).runDrift(f, out)));

  common(
    program
      .command("export")
      .description("write the service's current policies as policy files")
      .option("--dir <dir>", "folder to write into (default: the policies folder of revsync.yaml)")
      .addHelpText("after", "\nExample:\n  revsync export --env sandbox --dir policies"),
    { target: true },
  ).action(run(async (f, out) => (await import("./engine.js")).runExport(f, out)));
}
