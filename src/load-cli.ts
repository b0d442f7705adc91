import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Script } from "node:vm";

type Cli = typeof import("./cli/main.js");

/** The key of a code cache: a hash of the bundle's bytes (about 1 ms for the CLI's 2 MB). V8 checks a
 *  cache against the source's length only, so a cache made for other code of the same length (an
 *  in-place hand fix, a patch-package edit, another build) would run that code: the first line of
 *  `<file>.cache` names the content it was made from, and a cache of other content is not used. */
export const contentKey = (source: Buffer): string => `sha256:${createHash("sha256").update(source).digest("hex")}`;

/** A CommonJS bundle compiled with the code cache beside it (`<file>.cache`) when that was made from
 *  these very bytes, and run as Node runs any CommonJS file. `cache()`: the code cache of all this
 *  process has compiled of it so far, keyed by its content. */
export function runBundle<T>(file: string): { exports: T; cache(): Buffer } {
  const bytes = readFileSync(file);
  const key = contentKey(bytes);
  let cachedData: Buffer | undefined;
  try {
    const cache = readFileSync(`${file}.cache`);
    const newline = cache.indexOf(10);
    if (newline > 0 && cache.subarray(0, newline).toString() === key) cachedData = cache.subarray(newline + 1);
  } catch {
    // No cache (a build that could not make one): compiled from the source.
  }
  // The wrapper Node puts around every CommonJS file, on the source's first line: lines stay as they are.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${bytes.toString("utf8")}\n})`, { filename: file, cachedData });
  const module = { exports: {} as T };
  (script.runInThisContext() as (e: T, r: NodeJS.Require, m: object, f: string, d: string) => void)(
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
  );
  return { exports: module.exports, cache: () => Buffer.concat([Buffer.from(`${key}\n`), script.createCachedData()]) };
}

/** The CLI, from the bundle scripts/build.mjs writes (dist/cli.cjs), with the V8 code cache the build
 *  made for it by running `revsync demo` (dist/cli.cjs.cache): V8 then starts from bytecode instead of
 *  parsing and compiling the code a command needs, about a fifth of a command's CPU (docs/decisions.md
 *  has the figures). Node 20 caches no code of modules (module.enableCompileCache came with Node 22),
 *  hence one CommonJS bundle run through node:vm. V8 refuses a cache made by another V8 or with other
 *  flags (NODE_OPTIONS=--max-old-space-size=4096, say), and compiles from the source then, as without a
 *  cache. */
export function loadCli(file: string): Cli {
  const cli = runBundle<Cli>(file);
  // The build's run: at exit, once the command has compiled what it used, the cache of all of it.
  const out = process.env.REVSYNC_BUILD_CODE_CACHE;
  if (out) process.once("exit", () => writeFileSync(out, cli.cache()));
  return cli.exports;
}
