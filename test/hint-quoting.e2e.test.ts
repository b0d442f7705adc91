import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { binaryString } from "../src/testing/arbitraries.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unsafeName } from "../src/config/rules.js";
import { REASONS_NOT_IN_GIT } from "../src/kinds/ssp/compare.js";
import { unlockCommand } from "../src/lock/lock.js";
import { pasteable, shellQuote } from "../src/shell-quote.js";
import { cli, DEMO_ENV, removeDir, startEmu, tempRepo, type Emu } from "../src/testing/helpers.js";

// A hint's command runs as written: outside text (a policy's name from the service, a lock id, an
// environment's name) is one word a real shell reads back as exactly that text, never a command.

/** The words bash makes of each command line (without its leading `revsync`), all in one bash run.
 *  --norc: a `bash -c` whose stdin is a socket (as node's pipes are) takes itself for one started by
 *  sshd and reads ~/.bashrc first, which is the user's, not the test's (a second and more on a machine
 *  whose .bashrc loads tools, and its aliases or functions could change the words). */
function wordsOf(commands: string[]): string[][] {
  const script = ["f() { printf '%s\\0' \"$@\"; printf '\\1\\0'; }", ...commands.map((c) => `f ${c.replace(/^revsync /, "")}`)].join("\n");
  const r = spawnSync("bash", ["--norc", "-c", script], { encoding: "utf8", env: { PATH: process.env.PATH, LC_ALL: "C.UTF-8" }, maxBuffer: 64 * 1024 * 1024 });
  expect(r.status, r.stderr).toBe(0);
  const out: string[][] = [[]];
  for (const w of r.stdout.split("\0").slice(0, -1)) {
    if (w === "\u0001") out.push([]);
    else out[out.length - 1]?.push(w);
  }
  return out.slice(0, -1);
}

/** Names as an attacker would write them in the service: shell syntax of every kind, quotes, blanks,
 *  dot segments, control characters, right-to-left marks, astral characters. */
const adversarial = fc
  .array(
    fc.oneof(
      fc.constantFrom("$(touch /tmp/pwned)", "`id`", "'", '"', "\\", "$HOME", "${X}", "!", "!!", "*", "?", "[a]", "~", "{a,b}", ";", "&", "|", "<", ">", "#"),
      fc.constantFrom(" ", "\t", "\n", "..", ".", "-", "=", "%", "é", "\u202e", "\u0085", "\u00a0", "\u{1F600}", "'\\''", "--force"),
      binaryString({ maxLength: 6 }),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(""));

describe("one shell-quoting rule for every hint", () => {
  it("over adversarial names: the export hint of a policy not in git, parsed by bash, gives exactly its address; a name no command can carry gets what to do instead", () => {
    const names = [...fc.sample(adversarial, { numRuns: 400, seed: 36 }), "Pwn $(touch /tmp/pwned)", "Pwn `touch /tmp/pwned`", "..", "   ", "a\nb"];
    const prefix = "or keep it by adding its file (";
    const commands: string[] = [];
    const expected: string[][] = [];
    for (const name of names) {
      const reason = REASONS_NOT_IN_GIT.policy(name);
      const hint = reason.slice(reason.indexOf(prefix) + prefix.length, -1);
      if (unsafeName(name) || !pasteable(name)) {
        expect(hint, JSON.stringify(name)).not.toMatch(/--target (ssp|')/);
        expect(hint).toMatch(/rename it in the service|with every other policy/);
        continue;
      }
      expect(hint.endsWith(" writes one"), hint).toBe(true);
      commands.push(hint.slice(0, -" writes one".length));
      expected.push(["export", "--dir", "DIR", "--target", `ssp/${name}`]);
      const batch = REASONS_NOT_IN_GIT.batch(name, "B1");
      const bhint = batch.slice(batch.lastIndexOf("(revsync ") + 1, -" writes the policy's file with it)".length);
      commands.push(bhint);
      expected.push(["export", "--dir", "DIR", "--target", `ssp/${name}`]);
      commands.push(unlockCommand(name, name, true));
      expected.push(["unlock", "--env", name, name, "--force"]);
    }
    expect(commands.length).toBeGreaterThan(300);
    expect(wordsOf(commands)).toEqual(expected);
    // A plain word stays as it is; anything else is quoted.
    expect(shellQuote("ssp/Hardware-SSP_1.0")).toBe("ssp/Hardware-SSP_1.0");
    expect(shellQuote("ssp/Pwn $(touch /tmp/pwned)")).toBe("'ssp/Pwn $(touch /tmp/pwned)'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });

  it("a batch whose name a policy file cannot hold gets what to do instead of a command", () => {
    expect(REASONS_NOT_IN_GIT.batch("Hardware SSP", "..")).toContain("its name cannot be written in a policy file");
    expect(REASONS_NOT_IN_GIT.batch("Hardware SSP", "..")).not.toContain("revsync export");
  });
});

describe("a plan of a policy the service names to run a command", () => {
  let emu: Emu;
  let repo: string;
  const pwned = join(mkdtempSync(join(tmpdir(), "revsync-pwned-")), "pwned");
  const name = `Pwn $(touch ${pwned}) \`touch ${pwned}\``;
  beforeAll(async () => {
    emu = await startEmu("demo");
    const state: any = await emu.admin("GET", "state");
    const copy = structuredClone(state.tenants[0].ssp.find((p: any) => p.compliance_name === "Software Subscriptions SSP"));
    Object.assign(copy, { compliance_name: name, compliance_id: "SSP-PWN" });
    Object.assign(copy.item, { name, hierarchy_no: 88 });
    state.tenants[0].ssp.push(copy);
    await emu.admin("POST", "reset", { state });
    repo = tempRepo(emu.url);
  });
  afterAll(async () => {
    removeDir(repo);
    removeDir(join(pwned, ".."));
    await emu.close();
  });

  it("text and markdown name it quoted for a shell; the hint pasted into bash runs nothing and names the policy", async () => {
    const p = await cli(["plan"], { cwd: repo, env: DEMO_ENV });
    const quoted = shellQuote(`ssp/${name}`);
    expect(quoted.startsWith("'")).toBe(true);
    expect(p.stdout).toContain(`revsync export --dir DIR --target ${quoted} writes one`);
    const md = await cli(["plan", "--format", "markdown"], { cwd: repo, env: DEMO_ENV });
    expect(md.stdout).not.toContain(`--target "ssp/Pwn`);
    const line = p.stdout.split("\n").find((l) => l.includes("--target 'ssp/Pwn")) as string;
    const hint = line.slice(line.indexOf("revsync export"), line.lastIndexOf(" writes one"));
    expect(wordsOf([hint])).toEqual([["export", "--dir", "DIR", "--target", `ssp/${name}`]]);
    expect(existsSync(pwned)).toBe(false);
  });
});
