// What dist/ is built from, and its hash: scripts/build.mjs records it in dist/.build-hash, and its
// --check (npm test) compares it with the sources as they are.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The modules of src/, tests left out, as posix paths relative to root, sorted. */
export function srcModules(root) {
  const out = [];
  const walk = (dir) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) out.push(rel);
    }
  };
  walk("src");
  return out.sort();
}

/** The modules of src/ but the tests' and benches' helpers (src/testing/, which no module of revsync
 *  imports), the TypeScript config (esbuild reads it too), and what the bundled CLI holds besides: the
 *  dependencies (package-lock.json, its shipped part), the precompiled validators, and how it is built. */
export function buildInputs(root) {
  const own = srcModules(root).filter((f) => !f.startsWith("src/testing/"));
  return ["package-lock.json", "schemas/generated/validators.cjs", "scripts/build.mjs", "tsconfig.json", ...own].sort();
}

/** Of package-lock.json, what the bundle can hold: the packages that are not only for development, the
 *  root's dependencies. A devDependency added or updated (frequent, on every branch) leaves dist/ as
 *  it is; npm run test:install, building again in a clean clone, would see a bundle that holds one. */
function shippedLock(text) {
  const lock = JSON.parse(text);
  const packages = Object.entries(lock.packages ?? {})
    .filter(([, p]) => !p.dev)
    .map(([path, p]) => [path, path === "" ? { dependencies: p.dependencies ?? {} } : p]);
  return JSON.stringify(packages);
}

export async function sourceHash(root) {
  const h = createHash("sha256");
  for (const f of buildInputs(root)) {
    const bytes = readFileSync(join(root, f));
    h.update(`${f}\n`)
      .update(f === "package-lock.json" ? shippedLock(bytes.toString("utf8")) : bytes)
      .update("\n");
  }
  return h.digest("hex");
}
