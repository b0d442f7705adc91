import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../src/testing/helpers.js";

/** A function of exactly `lines` lines, first to last. */
const fn = (name: string, lines: number): string =>
  [`export function ${name}(): number {`, "  let x = 0;", ...Array.from({ length: lines - 4 }, () => "  x++;"), "  return x;", "}"].join("\n");

describe("npm test holds every function to 60 lines", () => {
  it("names each function over 60 lines, passes one of 60, and names a listed function that is no longer long", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-lengths-"));
    try {
      mkdirSync(join(dir, "src", "emulator"), { recursive: true });
      writeFileSync(join(dir, "src", "long.ts"), `${fn("sixty", 60)}\n\n${fn("sixtyOne", 61)}\n`);
      // A listed data table (the emulator's demo tenant) that is short here: the list must say so.
      writeFileSync(join(dir, "src", "emulator", "seed.ts"), `${fn("demoTenant", 10)}\n`);
      const run = await promisify(execFile)(process.execPath, [join(ROOT, "scripts", "longest-functions.mjs"), "--check", "--root", dir]).catch(
        (e: { code: number; stdout: string }) => e,
      );
      expect("code" in run ? run.code : 0).toBe(1);
      const lines = run.stdout.split("\n");
      expect(lines).toContain("src/long.ts:62: sixtyOne is 61 lines, over 60: split it into steps a reader can hold");
      expect(run.stdout).not.toContain("sixty is");
      expect(lines).toContain(
        "scripts/longest-functions.mjs lists src/emulator/seed.ts demoTenant, which is no longer over 60 lines (or is gone): take it off the list",
      );
      // That this repository passes is npm test's own `functions` check (scripts/checks.mjs).
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
