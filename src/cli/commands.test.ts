import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { commandGroups, register, type Runner } from "./commands.js";
import { completionTree } from "./completion.js";

const idle: Runner = () => async () => {};

function tree(only?: string): Command {
  const program = new Command("revsync");
  register(program, idle, only);
  return program;
}

const commandsOf = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(commandsOf)];

/** Each command as help and completion read it: its help text, and its completion node. */
const shown = (cmd: Command): { help: string; completion: unknown }[] =>
  commandsOf(cmd).map((c) => ({ help: c.helpInformation(), completion: completionTree(c) }));

describe("the command tree of a run", () => {
  it("the table names every top-level command, in help's order", () => {
    expect(tree().commands.map((c) => c.name())).toEqual(commandGroups().flat());
  });

  it("a run of one command builds that command (and those registered with it) exactly as the whole tree holds it", () => {
    const whole = tree();
    for (const group of commandGroups())
      for (const name of group) {
        const own = tree(name);
        if (name === "completion") {
          expect(own.commands.map((c) => c.name())).toEqual(commandGroups().flat());
          continue;
        }
        expect(own.commands.map((c) => c.name())).toEqual(group);
        for (const c of own.commands) expect(shown(c)).toEqual(shown(whole.commands.find((w) => w.name() === c.name()) as Command));
      }
  });

  it("any other first word (a flag, help, a typo, nothing) builds the whole tree", () => {
    for (const first of [undefined, "--help", "-h", "--version", "help", "plna", "", "PLAN"])
      expect(tree(first).commands.map((c) => c.name())).toEqual(commandGroups().flat());
  });
});
