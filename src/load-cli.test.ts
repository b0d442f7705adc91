import { chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codeCacheFile, contentKey, runBundle } from "./load-cli.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const temp = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "revsync-bundle-"));
  dirs.push(dir);
  return dir;
};

/** A bundle: the same length whatever the letter. */
const bundle = (letter: string) => `exports.which = function () { return "${letter.repeat(3)}"; };\nexports.which();\n`;

describe("runBundle", () => {
  it("runs a bundle, from the code cache made for its content or without one", () => {
    const dir = temp();
    const file = join(dir, "cli.cjs");
    const cacheFile = join(dir, "cli.cache");
    writeFileSync(file, bundle("a"));
    const first = runBundle<{ which(): string }>(file, () => cacheFile);
    expect(first.exports.which()).toBe("aaa");
    expect(first.cached).toBe(false);
    expect(first.commands).toEqual([]);
    const cache = first.cache(["validate", "test"]);
    expect(cache.subarray(0, cache.indexOf(10)).toString()).toBe(`${contentKey(Buffer.from(bundle("a")))} validate,test`);
    writeFileSync(cacheFile, cache);
    const second = runBundle<{ which(): string }>(file, () => cacheFile);
    expect(second.exports.which()).toBe("aaa");
    expect(second.cached).toBe(true);
    expect(second.commands).toEqual(["validate", "test"]);
  });

  it("never uses the cache of other content, though V8 would take it for a source of the same length (an in-place edit)", () => {
    const dir = temp();
    const file = join(dir, "cli.cjs");
    const cacheFile = join(dir, "cli.cache");
    writeFileSync(file, bundle("a"));
    writeFileSync(cacheFile, runBundle<{ which(): string }>(file, () => cacheFile).cache(["validate"]));
    writeFileSync(file, bundle("b"));
    const edited = runBundle<{ which(): string }>(file, () => cacheFile);
    expect(edited.exports.which()).toBe("bbb");
    expect(edited.cached).toBe(false);
    expect(edited.commands).toEqual([]);
  });
});

describe("codeCacheFile", () => {
  it("in the user's cache folder, one file per bundle content and Node flags; none in a folder of someone else's", () => {
    const home = temp();
    const key = contentKey(Buffer.from(bundle("a")));
    const file = codeCacheFile(key, { XDG_CACHE_HOME: home });
    expect(file).toMatch(new RegExp(`^${home}/revsync/cli-[0-9a-f]{32}\\.cache$`));
    expect(codeCacheFile(key, { XDG_CACHE_HOME: home })).toBe(file);
    expect(codeCacheFile(contentKey(Buffer.from(bundle("b"))), { XDG_CACHE_HOME: home })).not.toBe(file);
    expect(codeCacheFile(key, { XDG_CACHE_HOME: home, NODE_OPTIONS: "--max-old-space-size=4096" })).not.toBe(file);
    // A relative XDG_CACHE_HOME is ignored, as the XDG rules say: ~/.cache.
    expect(codeCacheFile(key, { XDG_CACHE_HOME: "cache" })).toMatch(/\/\.cache\/revsync\/cli-[0-9a-f]{32}\.cache$/);
    mkdirSync(join(home, "revsync"));
    if (process.getuid?.() === 0) {
      // Root owns what it makes: a folder of another user is the case to see.
      chownSync(join(home, "revsync"), 12345, 12345);
      expect(statSync(join(home, "revsync")).uid).toBe(12345);
      expect(codeCacheFile(key, { XDG_CACHE_HOME: home })).toBeUndefined();
    }
  });
});
