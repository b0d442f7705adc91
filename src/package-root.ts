import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The package's folder (package.json, schemas/, examples/). This code runs from src/ (tests), from
 *  dist/ (the per-file build) and from the bundled CLI: dist/bin.js, or one of dist/chunks/ when the
 *  code that imports it is loaded on demand. A path relative to the module alone would be wrong there. */
export const PACKAGE_ROOT = existsSync(join(here, "..", "package.json")) ? join(here, "..") : join(here, "..", "..");
