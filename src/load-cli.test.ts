import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { contentKey, runBundle } from "./load-cli.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A bundle: the same length whatever the letter. */
const bundle = (letter: string) => `exports.which = function () { return "${letter.repeat(3)}"; };\nexports.which();\n`;

describe("runBundle", () => {
  it("runs a bundle, from the code cache made for its content or without one", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-bundle-"));
    dirs.push(dir);
    const file = join(dir, "cli.cjs");
    writeFileSync(file, bundle("a"));
    const first = runBundle<{ which(): string }>(file);
    expect(first.exports.which()).toBe("aaa");
    const cache = first.cache();
    expect(cache.subarray(0, cache.indexOf(10)).toString()).toBe(contentKey(Buffer.from(bundle("a"))));
    writeFileSync(`${file}.cache`, cache);
    expect(runBundle<{ which(): string }>(file).exports.which()).toBe("aaa");
  });

  it("never uses the cache of other content, though V8 would take it for a source of the same length (an in-place edit)", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-bundle-"));
    dirs.push(dir);
    const file = join(dir, "cli.cjs");
    writeFileSync(file, bundle("a"));
    writeFileSync(`${file}.cache`, runBundle<{ which(): string }>(file).cache());
    writeFileSync(file, bundle("b"));
    expect(runBundle<{ which(): string }>(file).exports.which()).toBe("bbb");
  });
});
