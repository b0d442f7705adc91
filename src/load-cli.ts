import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Script } from "node:vm";

type Cli = typeof import("./cli/main.js");

/** Where the build names the bundle (in its last lines) and the code cache (in its first line). */
export const BUILD_ID_MARK = "revsync-build-id=";

/** A CommonJS bundle compiled with the code cache beside it (`<file>.cache`) when that names the same
 *  build, and run as Node runs any CommonJS file. `cache()`: the code cache of all this process has
 *  compiled of it so far, for the same build. */
export function runBundle<T>(file: string): { exports: T; cache(): Buffer | undefined } {
  const source = readFileSync(file, "utf8");
  const mark = source.lastIndexOf(BUILD_ID_MARK);
  const end = source.indexOf("\n", mark);
  const id = mark < 0 ? undefined : source.slice(mark + BUILD_ID_MARK.length, end < 0 ? undefined : end).trim();
  let cachedData: Buffer | undefined;
  try {
    const cache = readFileSync(`${file}.cache`);
    const newline = cache.indexOf(10);
    // V8 checks a cache against the source's length only: one made for another build of the same length
    // would run that build's code.
    if (id && newline > 0 && cache.subarray(0, newline).toString() === id) cachedData = cache.subarray(newline + 1);
  } catch {
    // No cache (a build that could not make one): compiled from the source.
  }
  // The wrapper Node puts around every CommonJS file, on the source's first line: lines stay as they are.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: file, cachedData });
  const module = { exports: {} as T };
  (script.runInThisContext() as (e: T, r: NodeJS.Require, m: object, f: string, d: string) => void)(
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
  );
  return { exports: module.exports, cache: () => (id ? Buffer.concat([Buffer.from(`${id}\n`), script.createCachedData()]) : undefined) };
}

/** The CLI, from the bundle scripts/build.mjs writes (dist/cli.cjs), with the V8 code cache the build
 *  made for it by running `revsync demo` (dist/cli.cjs.cache): V8 then starts from bytecode instead of
 *  parsing and compiling the code a command needs, about a quarter of a command's CPU. Node 20 caches no
 *  code of modules (module.enableCompileCache came with Node 22), hence one CommonJS bundle run through
 *  node:vm. V8 refuses a cache made by another V8 or with other flags, and compiles from the source
 *  then, as without a cache. */
export function loadCli(file: string): Cli {
  const cli = runBundle<Cli>(file);
  // The build's run: at exit, once the command has compiled what it used, the cache of all of it.
  const out = process.env.REVSYNC_BUILD_CODE_CACHE;
  if (out)
    process.once("exit", () => {
      const cache = cli.cache();
      if (cache) writeFileSync(out, cache);
    });
  return cli.exports;
}
