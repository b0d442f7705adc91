import { ciContext } from "../evidence/context.js";
import type { CiContext } from "../evidence/record.js";
import { readJsonFile } from "../user-files.js";
import { envOf } from "./context.js";
import type { GlobalFlags } from "./flags.js";

/** The CI run this command is part of (GitHub Actions, GitLab CI), from the run's environment. */
export function ciOf(flags: GlobalFlags): CiContext | null {
  return ciContext(envOf(flags), readJsonFile);
}
