import { Command, Option } from "commander";
import { describe, expect, it } from "vitest";
import { completionScript, completionTree } from "./completion.js";

/** A small tree: what the scripts hold comes from it, never from a list kept by hand. */
function program(): Command {
  const p = new Command("revsync");
  const alpha = p.command("alpha").description("the first 'one'");
  alpha.addOption(new Option("--format <format>", "output format").choices(["text", "json"]));
  alpha.option("--out <file>", "where to write").option("--quiet", "less");
  const beta = p.command("beta").description("has children");
  beta.command("gamma").argument("<planfile>").description("takes a file");
  return p;
}

describe("shell completion", () => {
  it("reads commands, subcommands, flags, their values and file arguments from the command tree", () => {
    const tree = completionTree(program());
    expect(tree.children.map((c) => c.path)).toEqual([["alpha"], ["beta"]]);
    const alpha = tree.children[0];
    expect(alpha?.options.map((o) => [o.flags.join(","), o.values, o.file])).toEqual([
      ["--format", ["text", "json"], false],
      ["--out", [], true],
      ["--quiet", undefined, false],
      ["-h,--help", undefined, false],
    ]);
    // --version, which commander keeps among the root's options, once.
    const root = completionTree(program().version("1.0.0"));
    expect(root.options.filter((o) => o.flags.includes("--version"))).toHaveLength(1);
    expect(tree.children[1]?.children[0]).toMatchObject({ path: ["beta", "gamma"], fileArgument: true });
  });

  it("bash, zsh and fish scripts name every command and flag of the tree, quoting descriptions", () => {
    const bash = completionScript("bash", program());
    expect(bash).toContain(`"beta/gamma") p='beta/gamma' ;;`);
    expect(bash).toContain(`"alpha --format") _revsync_words 'text' 'json' ;;`);
    expect(bash).toContain(`"alpha --out") _revsync_files ;;`);
    // A flag that takes a value skips it when the command path is read.
    expect(bash).toContain(`"alpha --format"|"alpha --out")`);
    expect(bash).toContain("complete -F _revsync revsync");
    const zsh = completionScript("zsh", program());
    expect(zsh.startsWith("#compdef revsync\n")).toBe(true);
    expect(zsh).toContain(`'alpha:the first '\\''one'\\'''`);
    expect(zsh).toContain(`("alpha --format") compadd -- 'text' 'json' ;;`);
    const fish = completionScript("fish", program());
    expect(fish).toContain(`complete -c revsync -n '__revsync_at '\\'''\\''' -a 'alpha' -d 'the first '\\''one'\\'''`);
    expect(fish).toContain(`complete -c revsync -n '__revsync_at '\\''beta'\\''' -a 'gamma' -d 'takes a file'`);
    expect(fish).toContain(`complete -c revsync -n '__revsync_at '\\''alpha'\\''' -l format -x -a 'text json' -d 'output format'`);
    expect(fish).toContain(`            case 'alpha --format' 'alpha --out'`);
    expect(() => completionScript("powershell", program())).toThrow(/must be bash, zsh or fish/);
  });
});
