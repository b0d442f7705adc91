import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, npxShim, removeDir, ROOT } from "../src/testing/helpers.js";

// Every `sh` block of the README and of the docs pages runs here as written, page after page in the
// order of PAGES (a reader's order: the quick start starts the emulator and signs in, the pages after
// it say "against the demo emulator of the quick start"), in a copy of the project's policy repo. A line
// marked "(runs until stopped)" is started in the background (through the real npx, on a port the OS
// picks, so that a quick-start emulator on 4010 never breaks npm test) and stopped at the end; the lines
// after it reach it through REVSYNC_BASE_URL/REVSYNC_AUTH_URL, the documented overrides, and a literal
// http://127.0.0.1:4010 in a line is its URL. The other `npx revsync` lines run the built CLI directly
// (npxShim), and so does a plain `revsync` (shell completion needs one on the PATH, as a global install
// gives). `console` blocks (npm ci, npm start, npm test) are what CI and the npm start test run.
const PAGES = ["README.md", "docs/adopting.md", "docs/commands.md", "docs/emulator.md"];
const shBlocks = (page: string): string[] => [...readFileSync(join(ROOT, page), "utf8").matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
const blocks = PAGES.flatMap(shBlocks);
const work = join(ROOT, ".revsync-tmp", `readme-${process.pid}`);
const background: ChildProcess[] = [];

afterAll(() => {
  // npx runs the emulator as a grandchild: stop the whole process group, not just the shell.
  for (const c of background) {
    try {
      if (c.pid) process.kill(-c.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  removeDir(work);
});

function run(cmd: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["--norc", "-c", cmd], { cwd: work, env });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("close", (code) => resolve({ code: code ?? -1, out }));
  });
}

function startBackground(cmd: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    // The real npx, not the shim: the quick start's first command is resolved as a user's would be.
    const realEnv = { ...env, PATH: env.PATH?.split(":").slice(1).join(":") ?? "" };
    const child = spawn("bash", ["--norc", "-c", `exec ${cmd} --port 0`], { cwd: work, env: realEnv, detached: true });
    background.push(child);
    let out = "";
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /^base_url (\S+)$/m.exec(out);
      if (m) resolve(m[1] as string);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("close", (code) => reject(new Error(`${cmd} exited ${code}: ${out}`)));
  });
}

describe("README and docs pages", () => {
  it("has sh blocks to run on every page it runs, and runs every page that has one", () => {
    for (const page of PAGES) expect(shBlocks(page).length, page).toBeGreaterThan(0);
    const withBlocks = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((p) => p.endsWith(".md") && shBlocks(p).length > 0);
    expect(withBlocks.sort()).toEqual([...PAGES].sort());
  });

  it("every command in its sh blocks runs as written and succeeds", async () => {
    mkdirSync(work, { recursive: true });
    cpSync(join(ROOT, "revsync.yaml"), join(work, "revsync.yaml"));
    cpSync(join(ROOT, "policies"), join(work, "policies"), { recursive: true });
    cpSync(join(ROOT, "policy-tests"), join(work, "policy-tests"), { recursive: true });
    const shim = npxShim();
    writeFileSync(join(shim, "revsync"), `#!/usr/bin/env bash\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 });
    const env: Record<string, string> = { ...(process.env as Record<string, string>), NO_COLOR: "1", PATH: `${shim}:${process.env.PATH ?? ""}` };
    let url = "";
    for (const k of ["REVSYNC_CLIENT_ID", "REVSYNC_CLIENT_SECRET", "REVSYNC_USERNAME", "REVSYNC_PASSWORD", "REVSYNC_TOKEN", "REVSYNC_BASE_URL", "REVSYNC_ENV"])
      delete env[k];
    let ran = 0;
    for (const block of blocks) {
      for (const raw of block.split("\n")) {
        const line = raw.trim();
        if (!line || line.startsWith("#")) continue;
        if (line.startsWith("export ")) {
          for (const [, k, v] of line.slice(7).matchAll(/(\w+)=(\S+)/g))
            env[k as string] = url ? (v as string).replaceAll("http://127.0.0.1:4010", url) : (v as string);
          continue;
        }
        if (line.includes("(runs until stopped)")) {
          url = await startBackground(line.replace(/#.*$/, "").trim(), env);
          Object.assign(env, { REVSYNC_BASE_URL: url, REVSYNC_AUTH_URL: url });
          continue;
        }
        const r = await run(url ? line.replaceAll("http://127.0.0.1:4010", url) : line, env);
        ran++;
        expect(`${line}\n${r.out}`).not.toMatch(/internal error/);
        expect({ line, code: r.code, out: r.code === 0 ? "" : r.out }).toEqual({ line, code: 0, out: "" });
      }
    }
    expect(ran).toBeGreaterThanOrEqual(15);
    // About 25 CLI runs one after another: some 12 s on an idle machine, more than twice that when the
    // suite shares two cores; the default 30 s would fail it on load, not on what it checks.
  }, 120_000);
});

describe("npm start", () => {
  it("prints a plan with changes within the minute and exits 0", async () => {
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      const child = spawn("npm", ["start", "--silent"], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("close", (code) => resolve({ code: code ?? -1, out }));
    });
    expect(r.out).toContain("Started a demo emulator at http://127.0.0.1:");
    expect(r.out).toContain("Plan: 1 to create, 1 to update, 2 to review, 3 to approve.");
    // With policy tests in the repo, the plan says what the change does to them.
    expect(r.out).toContain("Impact: 3 policy test cases change:");
    expect(r.out).toContain("EU training course: no policy -> Training Courses SSP at 960");
    // And how far it moves a bundle's revenue between its lines (carves_allocation turned on).
    expect(r.out).toContain("Allocation impact: 1 contract's allocation changes (USD 35.71 of revenue moves between lines):");
    expect(r.code).toBe(0);
  });
});
