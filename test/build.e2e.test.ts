import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../src/testing/helpers.js";

// npm runs `prepare` on the first npx of this folder too, while other CLIs of the suite (or of a user)
// run from dist/. A prepare that rebuilt dist/ under them broke whichever command loaded a module as it
// was rewritten: the build must leave an up-to-date dist/ untouched.
describe("build", () => {
  it("npm's prepare leaves a dist/ built from these sources untouched", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(pkg.scripts.prepare).toBe("node scripts/build.mjs --if-stale");
    const before = statSync(join(ROOT, "dist", "bin.js")).mtimeMs;
    const r = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).toBe("dist/ is up to date with src/: not rebuilt\n");
    expect(r.status).toBe(0);
    expect(statSync(join(ROOT, "dist", "bin.js")).mtimeMs).toBe(before);
  });

  it("the CLI starts from the V8 code cache the build made for it (V8 reports reading it)", () => {
    const cache = readFileSync(join(ROOT, "dist", "cli.cjs.cache"));
    const r = spawnSync(process.execPath, ["--profile-deserialization", join(ROOT, "dist", "bin.js"), "--version"], { cwd: ROOT, encoding: "utf8" });
    expect(r.stdout).toContain(`[Deserializing from ${cache.length - cache.indexOf(10) - 1} bytes`);
    expect(r.stdout.trim().split("\n").at(-1)).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
  });
});
