import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

interface SourceHashModule {
  buildInputs(root: string): string[];
  sourceHash(root: string): Promise<string>;
}

/** In a clone of revsync (src/ and scripts/ beside dist/), a dist/ built from other sources than src/
 *  holds now, say after a git pull, would run the old code without a word: this says so. It never
 *  rebuilds (a rebuild under running commands broke them) and writes nothing. Cheap when nothing
 *  changed: one stat per source file against dist/.build-hash; the hash only when a file is newer. An
 *  installed revsync (no src/) and anything unexpected say nothing. */
export async function staleBuildWarning(root: string): Promise<string | undefined> {
  const stamp = join(root, "dist", ".build-hash");
  const script = join(root, "scripts", "source-hash.mjs");
  if (!existsSync(stamp) || !existsSync(script) || !existsSync(join(root, "src"))) return undefined;
  try {
    const { buildInputs, sourceHash } = (await import(pathToFileURL(script).href)) as SourceHashModule;
    const built = statSync(stamp).mtimeMs;
    if (!buildInputs(root).some((f) => statSync(join(root, f)).mtimeMs > built)) return undefined;
    // Touched but the same (a checkout): nothing to say. (npm test and npm ci touch the stamp then.)
    if ((await sourceHash(root)) === readFileSync(stamp, "utf8").trim()) return undefined;
    return "revsync's dist/ was built from other sources than src/ holds now: run npm run build (or npm ci) to run the code you have";
  } catch {
    return undefined;
  }
}
