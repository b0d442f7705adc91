import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sourceHash } from "../scripts/source-hash.mjs";
import { staleBuildWarning } from "./dev-build.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A clone in miniature: src/, the configs, the lock file, the precompiled validators, the build scripts,
 *  and a dist/ built an hour ago. */
async function clone(): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), "revsync-devbuild-"));
  dirs.push(root);
  mkdirSync(join(root, "src", "cli"), { recursive: true });
  mkdirSync(join(root, "dist"));
  mkdirSync(join(root, "scripts"));
  mkdirSync(join(root, "schemas", "generated"), { recursive: true });
  writeFileSync(join(root, "schemas", "generated", "validators.cjs"), "exports.config = () => true;\n");
  cpSync(join(import.meta.dirname, "..", "scripts", "source-hash.mjs"), join(root, "scripts", "source-hash.mjs"));
  writeFileSync(join(root, "scripts", "build.mjs"), "// builds\n");
  writeFileSync(join(root, "package-lock.json"), "{}");
  writeFileSync(join(root, "tsconfig.json"), "{}");
  writeFileSync(join(root, "src", "cli", "main.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "src", "cli", "main.test.ts"), "// not built\n");
  writeFileSync(join(root, "dist", ".build-hash"), `${await sourceHash(root)}\n`);
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(join(root, "dist", ".build-hash"), hourAgo, hourAgo);
  for (const f of ["scripts/build.mjs", "package-lock.json", "schemas/generated/validators.cjs", "tsconfig.json", "src/cli/main.ts", "src/cli/main.test.ts"])
    utimesSync(join(root, f), hourAgo, hourAgo);
  return root;
}

describe("staleBuildWarning", () => {
  it("says nothing when dist/ was built from what src/ holds", async () => {
    expect(await staleBuildWarning(await clone())).toBeUndefined();
  });

  it("a source touched but unchanged (a checkout): nothing, and nothing written", async () => {
    const root = await clone();
    const stamp = statSync(join(root, "dist", ".build-hash")).mtimeMs;
    writeFileSync(join(root, "src", "cli", "main.ts"), "export const a = 1;\n");
    expect(await staleBuildWarning(root)).toBeUndefined();
    expect(statSync(join(root, "dist", ".build-hash")).mtimeMs).toBe(stamp);
  });

  it("a changed source, a new one, a changed config or other dependencies (the CLI bundles them): the warning, naming the way out", async () => {
    for (const change of ["src/cli/main.ts", "src/cli/new.ts", "tsconfig.json", "package-lock.json", "schemas/generated/validators.cjs"]) {
      const root = await clone();
      writeFileSync(join(root, change), "export const b = 2;\n");
      expect(await staleBuildWarning(root), change).toMatch(/dist\/ was built from other sources than src\/ holds now: run npm run build \(or npm ci\)/);
    }
  });

  it("a test file changed, or an installed revsync (no src/, no stamp): nothing", async () => {
    const root = await clone();
    writeFileSync(join(root, "src", "cli", "main.test.ts"), "// changed\n");
    expect(await staleBuildWarning(root)).toBeUndefined();
    rmSync(join(root, "src"), { recursive: true });
    expect(await staleBuildWarning(root)).toBeUndefined();
    expect(await staleBuildWarning(join(root, "nowhere"))).toBeUndefined();
  });
});
