import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { cli } from "../src/testing/helpers.js";

// The bash script of the real command tree, loaded in a real bash and asked as bash asks at a Tab.
describe("revsync completion bash", () => {
  it("completes commands, subcommands, flags and --format values of the real CLI", async () => {
    const r = await cli(["completion", "bash"]);
    expect(r.code).toBe(0);
    const ask = (line: string): string => {
      const words = line.split(" ");
      const script = `${r.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _revsync; echo "\${COMPREPLY[*]}"`;
      const b = spawnSync("bash", ["-c", script], { encoding: "utf8" });
      expect(b.stderr).toBe("");
      return b.stdout.trim();
    };
    expect(ask("revsync sh")).toBe("show");
    expect(ask("revsync ssp ")).toBe("batches template download");
    expect(ask("revsync approvals list --format ")).toBe("text json");
    expect(ask("revsync plan --format m")).toBe("markdown");
    expect(ask("revsync test --format ")).toBe("text json junit");
    expect(ask("revsync completion ")).toBe("bash zsh fish");
    expect(ask("revsync drift --all")).toBe("--all-envs");
    const bad = await cli(["completion", "powershell"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.");
  });
});
