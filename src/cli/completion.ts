import type { Command, Option } from "commander";
import { completionScript as scriptOf, type CompletionNode, type CompletionOption } from "../report/completion.js";

/** Options whose value is a path: completed with file names. */
const FILE_OPTIONS = new Set(["--config", "--out", "--output", "--dir", "--state"]);
/** Arguments that name a file or folder. */
const FILE_ARGUMENTS = new Set(["planfile", "dir"]);

function optionOf(o: Option): CompletionOption {
  const flags = [o.short, o.long].filter((f): f is string => !!f);
  const takesValue = o.required || o.optional;
  const file = !!o.long && FILE_OPTIONS.has(o.long);
  return { flags, description: o.description, values: takesValue ? (o.argChoices ?? []) : undefined, file };
}

export function completionTree(cmd: Command, path: string[] = []): CompletionNode {
  const args = (cmd as unknown as { registeredArguments?: { name(): string; argChoices?: string[] }[] }).registeredArguments ?? [];
  const options = cmd.options.filter((o) => !o.hidden).map(optionOf);
  // commander keeps --version (root only) among the options, and --help apart from them.
  if (!options.some((o) => o.flags.includes("--help"))) options.push({ flags: ["-h", "--help"], description: "show help", file: false });
  return {
    path,
    description: cmd.description(),
    children: cmd.commands.map((c) => completionTree(c, [...path, c.name()])),
    options,
    fileArgument: args.some((a) => FILE_ARGUMENTS.has(a.name())),
    argumentValues: args.flatMap((a) => a.argChoices ?? []),
  };
}

/** The completion script of one shell for a command tree (src/report/completion.ts writes it). */
export function completionScript(shell: string, program: Command): string {
  return scriptOf(shell, completionTree(program));
}
