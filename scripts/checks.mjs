// npm test's checks before the tests: the typecheck, lint, layers, format:check and functions scripts of package.json, run
// at the same time, as each is one process on one core (one after another: 25 to 30 s of CPU in a fresh
// clone, their caches empty, 7 to 8 s with them). Each one's output is printed whole when it ends, in
// this order; the exit status is 1 when any failed.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
// As npm runs a script: from the package's folder, its node_modules/.bin first on the PATH.
const env = { ...process.env, PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}` };

const runs = ["typecheck", "lint", "layers", "format:check", "functions"].map(
  (name) =>
    new Promise((resolve) => {
      const child = spawn(scripts[name], { cwd: root, env, shell: true, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      child.on("close", (code) => resolve({ name, code, out }));
    }),
);
let failed = 0;
for (const run of runs) {
  const { name, code, out } = await run;
  process.stdout.write(`> ${name}: ${scripts[name]}\n${out}`);
  if (code !== 0) {
    failed++;
    process.stdout.write(`${name} failed (exit ${code})\n`);
  }
}
process.exit(failed ? 1 : 0);
