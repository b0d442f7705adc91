import { resolve } from "node:path";
import { UserError } from "../errors.js";
import { urlCredentials } from "../api/http.js";
import { isCiName, scaffoldRepo } from "../config/scaffold.js";
import { initText } from "../report/init.js";
import type { Output } from "./output.js";

export interface InitFlags {
  env?: string;
  baseUrl?: string;
  realm?: string;
  ci?: string;
  pin?: string;
  force?: boolean;
}

/** revsync init: scaffolds a policy repo, or adds to one what it lacks (src/config/scaffold.ts). An
 *  existing file is never touched without --force. */
export async function runInit(flags: InitFlags, out: Output, args: string[]): Promise<number> {
  const envName = checkFlags(flags);
  const options = { ...flags, envName, shapesGiven: !!(flags.env || flags.baseUrl || flags.realm) };
  initText(scaffoldRepo(resolve(out.io.cwd, args[0] ?? "."), out.io.cwd, options), out);
  return 0;
}

/** The flags, checked before anything is read: the environment's name (default sandbox). */
function checkFlags(flags: InitFlags): string {
  const envName = flags.env ?? "sandbox";
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(envName))
    throw new UserError(`--env must be a name of letters, digits, - and _, starting with a letter; got ${JSON.stringify(envName)}`);
  if (flags.ci && !isCiName(flags.ci)) throw new UserError(`--ci must be github or gitlab, got ${JSON.stringify(flags.ci)}`);
  const credentials = flags.baseUrl ? urlCredentials(flags.baseUrl) : undefined;
  if (credentials) throw new UserError(`--base-url: ${credentials}`);
  if (flags.baseUrl && !/^https?:\/\//.test(flags.baseUrl)) throw new UserError(`--base-url must be an http(s) URL, got ${JSON.stringify(flags.baseUrl)}`);
  return envName;
}
