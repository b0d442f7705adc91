import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package's folder (package.json, schemas/, examples/). This module sits one level below it in
 *  every form revsync runs in: src/ (tests), dist/ (tsc's per-file build) and dist/bin.js and
 *  dist/cli.cjs, the bundles, which hold this code too; a path relative to a deeper module would be
 *  wrong there. */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
