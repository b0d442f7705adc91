// What dist/ is built from, and its hash: shared by scripts/build.mjs (which records the hash in
// dist/.build-hash) and the CLI (src/dev-build.ts), which says so when a clone's dist/ is stale.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The modules of src/ (but tests; src/testing too, which the benches load from dist/testing/), the TypeScript config (esbuild reads it too), and
 *  what the bundled CLI holds besides: the dependencies (package-lock.json), the precompiled validators,
 *  and how it is built. */
export function buildInputs(root) {
  const out = ["package-lock.json", "schemas/generated/validators.cjs", "scripts/build.mjs", "tsconfig.json"];
  const walk = (dir) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) {
        walk(rel);
      } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) out.push(rel);
    }
  };
  walk("src");
  return out.sort();
}

/** Async: node:crypto is loaded only when a hash is needed (the CLI's check of a clone's dist/ mostly needs none). */
export async function sourceHash(root) {
  const { createHash } = await import("node:crypto");
  const h = createHash("sha256");
  for (const f of buildInputs(root))
    h.update(`${f}\n`)
      .update(readFileSync(join(root, f)))
      .update("\n");
  return h.digest("hex");
}
