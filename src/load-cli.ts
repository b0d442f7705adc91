import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { Script } from "node:vm";

type Cli = typeof import("./cli/main.js");

/** The key of a code cache: a hash of the bundle's bytes (about 1 ms for the CLI's 2 MB). V8 checks a
 *  cache against the source's length only, so a cache made for other code of the same length (an
 *  in-place hand fix, a patch-package edit, another build) would run that code: the first line of a
 *  cache file names the content it was made from, and a cache of other content is not used. */
export const contentKey = (source: Buffer): string => `sha256:${createHash("sha256").update(source).digest("hex")}`;

/** A CommonJS bundle compiled with the code cache in the file `cacheFile` names for its content key,
 *  when that was made from these very bytes, and run as Node runs any CommonJS file. `cached`: V8 took
 *  the cache; `commands`: the commands whose runs made it. `cache(commands)`: the code cache of all this
 *  process has compiled of it so far (what it took from the cache included), with its first line. */
export function runBundle<T>(
  file: string,
  cacheFile: (key: string) => string | undefined,
): { exports: T; cacheFile: string | undefined; cached: boolean; commands: string[]; cache(commands: string[]): Buffer } {
  const bytes = readFileSync(file);
  const key = contentKey(bytes);
  const where = cacheFile(key);
  let cachedData: Buffer | undefined;
  let commands: string[] = [];
  try {
    const cache = where ? readFileSync(where) : undefined;
    const newline = cache ? cache.indexOf(10) : -1;
    const [made, madeBy] = newline > 0 ? (cache?.subarray(0, newline).toString().split(" ") ?? []) : [];
    if (cache && made === key) {
      cachedData = cache.subarray(newline + 1);
      commands = madeBy ? madeBy.split(",") : [];
    }
  } catch {
    // No cache yet: compiled from the source.
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
  const cached = cachedData !== undefined && !script.cachedDataRejected;
  return {
    exports: module.exports,
    cacheFile: where,
    cached,
    commands: cached ? commands : [],
    cache: (made: string[]) => Buffer.concat([Buffer.from(`${key} ${made.join(",")}\n`), script.createCachedData()]),
  };
}

/** Called, when set, just before revsync changes a V8 flag (src/api/http.ts): a code cache made after
 *  that is refused by every process that starts without the flag, so the cache is taken then. */
export const BEFORE_V8_FLAGS_CHANGE = Symbol.for("revsync.beforeV8FlagsChange");

const CACHE_NAME = /^cli-[0-9a-f]{32}\.cache$/;
const MONTH_MS = 30 * 24 * 3600 * 1000;

/** Where this user keeps the code cache of a bundle (its content key) run by this Node with these flags:
 *  `$XDG_CACHE_HOME/revsync/` (`~/.cache/revsync/`), a folder of the user's own (0700). Undefined when
 *  it belongs to someone else: a cache is code, and only the user's own is run. */
export function codeCacheFile(key: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  const dir = join(base, "revsync");
  try {
    if (statSync(dir).uid !== process.getuid?.()) return undefined;
  } catch {
    // Not made yet: the first run makes it.
  }
  const id = createHash("sha256")
    .update([key, process.version, process.arch, ...process.execArgv, env.NODE_OPTIONS ?? ""].join("\n"))
    .digest("hex")
    .slice(0, 32);
  return join(dir, `cli-${id}.cache`);
}

/** Writes a cache whole or not at all (beside, then renamed), and drops caches unused for a month (other
 *  versions of revsync or Node). Nothing is said when it cannot: a command runs the same without one. */
function saveCodeCache(file: string, cache: Buffer): void {
  try {
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, cache, { mode: 0o600 });
    renameSync(tmp, file);
    for (const name of readdirSync(dir)) {
      const other = join(dir, name);
      if (CACHE_NAME.test(name) && other !== file && Date.now() - statSync(other).mtimeMs > MONTH_MS) unlinkSync(other);
    }
  } catch {
    // A read-only home, a full disk: no cache.
  }
}

/** The CLI, from the bundle scripts/build.mjs writes (dist/cli.cjs), with V8's code cache of it: V8
 *  then starts from bytecode instead of parsing and compiling the code a command needs, about a fifth of
 *  a command's CPU (BENCHMARKS.md has the figures). Node 20 caches no code of modules
 *  (module.enableCompileCache came with Node 22), hence one CommonJS bundle run through node:vm. The
 *  cache is made on the user's machine (codeCacheFile says where), as a run exits: the first run, and
 *  the first of each command after it, write what they compiled, which includes what they took from the
 *  cache, so that it grows to cover the commands this machine runs and is then only read. V8 refuses a
 *  cache made by another V8 or with other flags, which therefore each have their own. */
export function loadCli(file: string, argv: string[] = process.argv): Cli {
  const word = argv.slice(2).find((a) => !a.startsWith("-")) ?? "";
  // The command's name only (what the cache is keyed by needs no more): any other word counts as none.
  const command = /^[a-z][a-z-]{0,30}$/.test(word) ? word : "-";
  const cli = runBundle<Cli>(file, (key) => codeCacheFile(key));
  const { cacheFile } = cli;
  if (cacheFile && !cli.commands.includes(command)) {
    const made = [...cli.commands, command];
    let beforeFlags: Buffer | undefined;
    (globalThis as Record<symbol, unknown>)[BEFORE_V8_FLAGS_CHANGE] = () => {
      beforeFlags ??= cli.cache(made);
    };
    process.once("exit", () => saveCodeCache(cacheFile, beforeFlags ?? cli.cache(made)));
  }
  return cli.exports;
}
