import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT, cli, needsTool } from "../src/testing/helpers.js";

// Each shell's script of the real command tree, loaded in the real shell and asked as it asks at a Tab,
// in a folder holding a file whose name has a space. CI installs zsh and fish (.ci/run); elsewhere a
// missing shell's case is not run (npm run test:tools counts it so).
const dir = mkdtempSync(join(tmpdir(), "revsync-completion-"));
const needs = (ctx: Parameters<typeof needsTool>[0], shell: string): void =>
  needsTool(ctx, shell, ["-c", "exit 0"], `apt-get install ${shell}`, "its completion");
const scripts: Record<string, string> = {};

beforeAll(async () => {
  writeFileSync(join(dir, "my plan.json"), "{}");
  writeFileSync(join(dir, "other.json"), "{}");
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await cli(["completion", shell]);
    expect(r.code).toBe(0);
    scripts[shell] = join(dir, `revsync.${shell}`);
    writeFileSync(scripts[shell], r.stdout);
  }
});

/** Runs a shell once for all the lines; each line's candidates, as a list, in order. */
function ask(shell: string, args: string[], lines: string[]): string[][] {
  const r = spawnSync(shell, [...args, ...lines], { cwd: dir, encoding: "utf8", timeout: 30_000 });
  expect(r.stderr).toBe("");
  const answers = r.stdout
    .split("--\n")
    .slice(0, -1)
    .map((a) => a.split("\n").filter(Boolean).sort());
  expect(answers).toHaveLength(lines.length);
  return answers;
}

/** The line each test asks, and what every shell must offer (a shell's own quoting or extras apart). */
const LINES = [
  "revsync show my",
  "revsync plan --format ",
  "revsync init --ci ",
  "revsync emulator --seed ",
  "revsync emulator --profile ",
  "revsync errors --type ",
  "revsync errors --kind ",
  "revsync test record --kind ",
  "revsync approvals list --format ",
  "revsync plan --env test --det",
  "revsync test --env test rec",
  "revsync completion ",
  "revsync log",
  "revsync login --app",
  "revsync --v",
];
const OFFERS = [
  ["my plan.json"],
  ["json", "markdown", "text"],
  ["github", "gitlab"],
  ["demo", "empty", "multi-env"],
  ["default", "literal"],
  ["event", "invoice", "mje", "order"],
  ["discarded", "remediable"],
  ["discarded", "remediable"],
  ["json", "text"],
  ["--detailed-exitcode"],
  ["record"],
  ["bash", "fish", "zsh"],
  ["login", "logout"],
  ["--approver"],
  ["--verbose", "--version"].filter((f) => f === "--version"),
];

describe("revsync completion", () => {
  it("bash: file names with spaces as one word, every fixed-choice flag's values, --opt=value, option values are not commands", () => {
    // COMP_WORDS as bash splits the line: at spaces, and at = (COMP_WORDBREAKS), "--format=j" -> --format = j.
    const split = (line: string): string[] => line.replace(/=/g, " = ").split(/ +(?=[^ ]|$)/);
    const all = [...LINES, "revsync plan --format=", "revsync plan --format=j", "revsync show my\\ p"];
    const probe = all
      .map((line) => {
        const words = line === "revsync show my\\ p" ? ["revsync", "show", "my\\ p"] : split(line);
        return `COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _revsync; printf '%s\\n' "\${COMPREPLY[@]}"; echo --`;
      })
      .join("\n");
    const r = spawnSync("bash", ["--norc", "-c", `source '${scripts.bash}'\n${probe}`], { cwd: dir, encoding: "utf8" });
    expect(r.stderr).toBe("");
    const answers = r.stdout
      .split("--\n")
      .slice(0, -1)
      .map((a) => a.split("\n").filter(Boolean).sort());
    expect(answers).toEqual([...OFFERS, ["json", "markdown", "text"], ["json"], ["my plan.json"]]);
  });

  it("zsh (with compinit): the same, through zsh's completion system", (ctx) => {
    needs(ctx, "zsh");
    const answers = ask("zsh", ["-f", join(ROOT, "test", "fixtures", "zsh-complete.zsh"), scripts.zsh as string], [...LINES, "revsync plan --format=j"]);
    // zsh hands compadd the word as it will insert it: the space quoted, one word.
    expect(answers).toEqual([["my\\ plan.json"], ...OFFERS.slice(1), ["--format=json"]]);
    // Without compinit the script says what to add instead of failing on compdef.
    const bare = spawnSync("zsh", ["-f", "-c", `source '${scripts.zsh}'`], { encoding: "utf8" });
    expect(bare.stderr).toContain("autoload -Uz compinit && compinit");
  });

  it("fish: the same, through complete -C", (ctx) => {
    needs(ctx, "fish");
    const asks = [...LINES, "revsync plan --format=j", "revsync plan --env test --"];
    const r = spawnSync("fish", ["-N", "-c", `source '${scripts.fish}'; for l in $argv; complete -C"$l"; echo -- --; end`, ...asks], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    const answers = r.stdout
      .split("--\n")
      .slice(0, -1)
      .map((a) =>
        a
          .split("\n")
          .filter(Boolean)
          .map((l) => l.split("\t")[0] ?? "")
          .sort(),
      );
    expect(answers.slice(0, LINES.length)).toEqual(OFFERS);
    expect(answers[LINES.length]).toEqual(["--format=json"]);
    // --env test leaves plan the command: plan's flags, not test's (--live), and --version once at the root.
    expect(answers[LINES.length + 1]).toContain("--detailed-exitcode");
    expect(answers[LINES.length + 1]).not.toContain("--live");
  });

  it("refuses a shell it does not know", async () => {
    const bad = await cli(["completion", "powershell"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.");
  });
});
