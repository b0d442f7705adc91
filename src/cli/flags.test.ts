import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { pickView, type Views } from "../report/view.js";
import { completionTree } from "./completion.js";
import { common } from "./flags.js";

describe("--format comes from the report's views", () => {
  // A report with one more format than text: its table is all a command needs to offer it.
  const views: Views<(n: number) => string> = {
    text: async () => (n) => `${n} things`,
    yaml: async () => (n) => `things: ${n}`,
  };
  const command = (): Command => {
    const program = new Command("revsync").exitOverride();
    common(program.command("count"), { views, offline: true })
      .exitOverride()
      .configureOutput({ writeErr: () => undefined })
      .action(() => undefined);
    return program;
  };

  it("offers the table's formats, the first the default, in help and completion, and picks the view of the one given", async () => {
    const count = command().commands[0] as Command;
    expect(count.helpInformation().replace(/\s+/g, " ")).toContain(
      '--format <format> output format (table is another name for text) (choices: "text", "yaml", default: "text")',
    );
    expect(completionTree(command()).children[0]?.options.find((o) => o.flags.includes("--format"))?.values).toEqual(["text", "yaml"]);
    const given = command();
    await given.parseAsync(["node", "revsync", "count", "--format", "yaml"]);
    const format = (given.commands[0] as Command).opts<{ format: string }>().format;
    expect((await pickView(views, format))(3)).toBe("things: 3");
    expect((await pickView(views, undefined))(3)).toBe("3 things");
    await expect(command().parseAsync(["node", "revsync", "count", "--format", "csv"])).rejects.toThrow("Allowed choices are text, yaml.");
  });
});
