#!/usr/bin/env node

// src/bin.ts
import { join as join3 } from "node:path";

// src/load-cli.ts
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { Script } from "node:vm";
var contentKey = (source) => `sha256:${createHash("sha256").update(source).digest("hex")}`;
function runBundle(file, cacheFile) {
  const bytes = readFileSync(file);
  const key = contentKey(bytes);
  const where = cacheFile(key);
  let cachedData;
  let commands = [];
  try {
    const cache = where ? readFileSync(where) : void 0;
    const newline = cache ? cache.indexOf(10) : -1;
    const [made, madeBy] = newline > 0 ? cache?.subarray(0, newline).toString().split(" ") ?? [] : [];
    if (cache && made === key) {
      cachedData = cache.subarray(newline + 1);
      commands = madeBy ? madeBy.split(",") : [];
    }
  } catch {
  }
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${bytes.toString("utf8")}
})`, { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext()(
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file)
  );
  const cached = cachedData !== void 0 && !script.cachedDataRejected;
  return {
    exports: module.exports,
    cacheFile: where,
    cached,
    commands: cached ? commands : [],
    cache: (made) => Buffer.concat([Buffer.from(`${key} ${made.join(",")}
`), script.createCachedData()])
  };
}
var BEFORE_V8_FLAGS_CHANGE = /* @__PURE__ */ Symbol.for("revsync.beforeV8FlagsChange");
var CACHE_NAME = /^cli-[0-9a-f]{32}\.cache$/;
var MONTH_MS = 30 * 24 * 3600 * 1e3;
function codeCacheFile(key, env = process.env) {
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  const dir = join(base, "revsync");
  try {
    if (statSync(dir).uid !== process.getuid?.()) return void 0;
  } catch {
  }
  const id = createHash("sha256").update([key, process.version, process.arch, ...process.execArgv, env.NODE_OPTIONS ?? ""].join("\n")).digest("hex").slice(0, 32);
  return join(dir, `cli-${id}.cache`);
}
function saveCodeCache(file, cache) {
  try {
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true, mode: 448 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, cache, { mode: 384 });
    renameSync(tmp, file);
    for (const name of readdirSync(dir)) {
      const other = join(dir, name);
      if (CACHE_NAME.test(name) && other !== file && Date.now() - statSync(other).mtimeMs > MONTH_MS) unlinkSync(other);
    }
  } catch {
  }
}
function loadCli(file, argv = process.argv) {
  const word = argv.slice(2).find((a) => !a.startsWith("-")) ?? "";
  const command = /^[a-z][a-z-]{0,30}$/.test(word) ? word : "-";
  const cli = runBundle(file, (key) => codeCacheFile(key));
  const { cacheFile } = cli;
  if (cacheFile && !cli.commands.includes(command)) {
    const made = [...cli.commands, command];
    let beforeFlags;
    globalThis[BEFORE_V8_FLAGS_CHANGE] = () => {
      beforeFlags ??= cli.cache(made);
    };
    process.once("exit", () => saveCodeCache(cacheFile, beforeFlags ?? cli.cache(made)));
  }
  return cli.exports;
}

// src/package-root.ts
import { dirname as dirname2, join as join2 } from "node:path";
import { fileURLToPath } from "node:url";
var PACKAGE_ROOT = join2(dirname2(fileURLToPath(import.meta.url)), "..");

// src/bin.ts
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e) => {
    if (e.code !== "EPIPE") throw e;
  });
}
var { runCli } = loadCli(join3(PACKAGE_ROOT, "dist", "cli.cjs"));
var code = await runCli(process.argv);
if (code === 130) process.exit(code);
process.exitCode = code;
