import { mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileRefused, READ_CAPS, readUserFileBytes, realPathInside } from "./user-files.js";

describe("reading a file a user, a repo or a CI gives revsync", () => {
  it("a regular file within its cap is read; over the cap it is refused before it is read; a device or a folder by its type", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-read-"));
    try {
      const f = join(dir, "a.yaml");
      writeFileSync(f, "x: 1\n");
      expect(readUserFileBytes(f, 1024).toString()).toBe("x: 1\n");
      writeFileSync(f, "x".repeat(100_000));
      expect(readUserFileBytes(f, 100_000).length).toBe(100_000);
      // A file whose size the system says is 0 (Linux's /proc) is read to its end, or refused past the cap.
      if (process.platform === "linux") {
        const proc = readUserFileBytes("/proc/self/environ", 1024 * 1024);
        expect(proc.length).toBeGreaterThan(0);
        expect(proc.equals(readFileSync("/proc/self/environ"))).toBe(true);
        expect(() => readUserFileBytes("/proc/self/environ", proc.length - 1)).toThrow(/it is over/);
      }
      // A sparse file of 6 MiB: refused by its size, not read.
      truncateSync(f, 6 * 1024 * 1024);
      const big = (() => {
        try {
          readUserFileBytes(f, READ_CAPS.text);
        } catch (e) {
          return e;
        }
      })();
      expect(big).toBeInstanceOf(FileRefused);
      expect((big as FileRefused).why).toBe("it is over 5 MiB, the most revsync reads of such a file");
      expect(() => readUserFileBytes("/dev/zero", 1024)).toThrow("cannot read /dev/zero: it is a character device, not a regular file");
      expect(() => readUserFileBytes(dir, 1024)).toThrow("it is a folder, not a regular file");
      // The reading side of the files-in-their-folder rule.
      symlinkSync("/dev/zero", join(dir, "z.yaml"));
      expect(() => readUserFileBytes(join(dir, "z.yaml"), 1024, { folder: dir, words: { folderName: "the policy repo" } })).toThrow(
        `${join(dir, "z.yaml")} is a symbolic link to /dev/zero, outside the policy repo: nothing is read through it`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a write's path is checked for its length before it is written", () => {
  it("a name over 255 bytes or a path over 4095 is refused, naming it", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-long-"));
    try {
      expect(() => realPathInside(dir, join(dir, `${"é".repeat(128)}.csv`))).toThrow(/is 260 bytes, over the 255 a file name may have/);
      expect(() => realPathInside(dir, join(dir, ...Array(20).fill("x".repeat(220)), "a.csv"))).toThrow(/over the 4095 a path may have/);
      expect(realPathInside(dir, join(dir, `${"q".repeat(250)}.csv`))).toMatch(/q{250}\.csv$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
