import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliProcess, DEMO_ENV, removeDir, ROOT, startEmu, tempRepo, type Emu } from "../src/testing/helpers.js";

describe("build", () => {
  it("package.json has no script npm runs or prepares for on install: every commit holds dist/, so a git install has nothing to build", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    // A git dependency with any of these is prepared (npm install in its clone): with --global still
    // set, npm then links the global package to the clone it deletes. "build" counts: hence npm run dist.
    for (const s of ["prepare", "prepack", "preinstall", "install", "postinstall", "build"]) expect(pkg.scripts[s], s).toBeUndefined();
    expect(pkg.scripts.dist).toMatch(/node scripts\/build\.mjs$/);
    expect(readFileSync(join(ROOT, "dist", ".build-hash"), "utf8")).toMatch(
      /^sources [0-9a-f]{64}\ndist\/cli\.cjs [0-9a-f]{64}\ndist\/bin\.js [0-9a-f]{64}\n$/,
    );
  });

  it("the check npm test runs: passes on dist/ as built; fails on a changed source, an edited or extra file of dist/, naming the one command that fixes it", () => {
    // A copy of what the check reads: the build's inputs and dist/.
    const copy = mkdtempSync(join(tmpdir(), "revsync-build-"));
    try {
      for (const f of ["src", "dist", "scripts", "package-lock.json", "tsconfig.json", "schemas/generated"])
        cpSync(join(ROOT, f), join(copy, f), { recursive: true });
      const check = () => spawnSync(process.execPath, [join(copy, "scripts", "build.mjs"), "--check"], { encoding: "utf8" });
      expect(check().stderr).toBe("");
      expect(check().status).toBe(0);
      const fails = (what: RegExp) => {
        const r = check();
        expect(r.status).toBe(1);
        expect(r.stderr).toMatch(/^dist\/ is not what the build makes from these sources: run `npm run dist` and commit dist\/\.\n/);
        expect(r.stderr).toMatch(what);
      };
      appendFileSync(join(copy, "src", "errors.ts"), "\n// changed\n");
      fails(/it was built from other sources/);
      cpSync(join(ROOT, "src", "errors.ts"), join(copy, "src", "errors.ts"));
      // A devDependency the bundle never holds leaves it as it is; another version of a dependency does not.
      const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string; dev?: boolean }> };
      lock.packages["node_modules/some-dev-tool"] = { version: "1.0.0", dev: true };
      writeFileSync(join(copy, "package-lock.json"), JSON.stringify(lock, null, 2));
      expect(check().status).toBe(0);
      (lock.packages["node_modules/yaml"] as { version: string }).version = "2.0.0";
      writeFileSync(join(copy, "package-lock.json"), JSON.stringify(lock, null, 2));
      fails(/it was built from other sources/);
      cpSync(join(ROOT, "package-lock.json"), join(copy, "package-lock.json"));
      appendFileSync(join(copy, "dist", "cli.cjs"), "\n");
      fails(/dist\/cli\.cjs differs from what the build wrote/);
      cpSync(join(ROOT, "dist", "cli.cjs"), join(copy, "dist", "cli.cjs"));
      writeFileSync(join(copy, "dist", "cli.cjs.map"), "{}");
      fails(/dist\/cli\.cjs\.map is not one the build wrote/);
    } finally {
      removeDir(copy);
    }
  });

  describe("the V8 code cache", () => {
    let emu: Emu;
    let repo: string;
    let cacheHome: string;
    beforeAll(async () => {
      emu = await startEmu();
      repo = tempRepo(emu.url);
      cacheHome = mkdtempSync(join(tmpdir(), "revsync-cache-"));
    });
    afterAll(async () => {
      removeDir(repo);
      removeDir(cacheHome);
      await emu.close();
    });
    const cacheFiles = () => readdirSync(join(cacheHome, "revsync")).filter((n) => n.endsWith(".cache"));
    const cache = () => readFileSync(join(cacheHome, "revsync", cacheFiles()[0] ?? "none"));
    const header = () => cache().subarray(0, cache().indexOf(10)).toString();
    const run = async (args: string[]) => {
      const r = await cliProcess(args, { cwd: repo, env: { ...DEMO_ENV, XDG_CACHE_HOME: cacheHome } });
      expect(r.code, r.stderr).toBe(0);
    };

    it("is made in the user's cache folder by the first run, grows with each command's first run (plan's too, which changes a V8 flag), and is then only read", async () => {
      await run(["validate"]);
      expect(cacheFiles()).toHaveLength(1);
      expect(header()).toMatch(/^sha256:[0-9a-f]{64} validate$/);
      const first = cache();
      // Taken by V8: a cache it refused would be made again.
      await run(["validate"]);
      expect(cache().equals(first)).toBe(true);
      await run(["plan", "--env", "demo"]);
      expect(header()).toMatch(/ validate,plan$/);
      expect(cache().length).toBeGreaterThan(first.length);
      const grown = cache();
      await run(["plan", "--env", "demo"]);
      await run(["validate"]);
      expect(cache().equals(grown)).toBe(true);
      expect(cacheFiles()).toHaveLength(1);
    });

    it("V8 reports reading it", () => {
      const env = { ...process.env, XDG_CACHE_HOME: cacheHome, NO_COLOR: "1" };
      const args = ["--profile-deserialization", join(ROOT, "dist", "bin.js"), "--version"];
      spawnSync(process.execPath, args, { cwd: ROOT, env });
      // Flags have their own cache: the one made just now.
      const made = readdirSync(join(cacheHome, "revsync"))
        .map((n) => readFileSync(join(cacheHome, "revsync", n)))
        .find((b) => b.subarray(0, b.indexOf(10)).toString().endsWith(" -"));
      expect(made).toBeDefined();
      const r = spawnSync(process.execPath, args, { cwd: ROOT, env, encoding: "utf8" });
      expect(r.stdout).toContain(`[Deserializing from ${(made?.length ?? 0) - (made?.indexOf(10) ?? 0) - 1} bytes`);
      expect(r.stdout.trim().split("\n").at(-1)).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
    });
  });
});
