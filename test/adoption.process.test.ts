import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { removeDir, ROOT } from "../src/testing/helpers.js";

// init run as revsync is installed, from a clone of its own (npm run test:slow; docs/development.md):
// where revsync runs from is what init's pin follows. The rest of adopting a tenant, in process:
// test/adoption.e2e.test.ts.

describe("init --ci, run from a clone whose origin is a path on this machine", () => {
  it("pins a placeholder and says why: a git+file pin would install here and never in CI", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-init-local-"));
    try {
      // A revsync as a clone of a clone: its files, a git repository whose origin is a path.
      const own = join(dir, "revsync");
      for (const f of ["dist/bin.js", "dist/cli.cjs", "package.json"]) cpSync(join(ROOT, f), join(own, f));
      for (const d of ["schemas", "examples/ci"]) cpSync(join(ROOT, d), join(own, d), { recursive: true });
      execFileSync("git", ["init", "-q", own]);
      execFileSync("git", ["-C", own, "remote", "add", "origin", "/srv/git/revsync"]);
      const r = spawnSync(process.execPath, [join(own, "dist", "bin.js"), "init", "repo", "--ci", "github", "--realm", "demo"], { cwd: dir, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      const pin = JSON.parse(readFileSync(join(dir, "repo", "package.json"), "utf8")).devDependencies.revsync;
      expect(pin).toBe("git+https://<git host>/<org>/revsync.git#<release tag or full commit id>");
      expect(r.stderr).toContain(
        "package.json pins revsync at a placeholder: revsync runs from a clone whose origin is a path on this machine (/srv/git/revsync), and a pin to it would install only here, never in CI.",
      );
      // npm install of the placeholder would fail: the step says to fill it in first.
      expect(r.stdout).toMatch(/\n {2}npm install +# once devDependencies\.revsync names a real pin \(see above\)\n/);
    } finally {
      removeDir(dir);
    }
  });
});
