import { login, logout } from "../session/login.js";
import { envOf, ioOf, openServiceEnv } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

export interface LoginFlags extends GlobalFlags {
  approver?: boolean;
}

/** revsync login [--approver] (src/session/login.ts). */
export async function runLogin(flags: LoginFlags, out: Output): Promise<number> {
  const env = openServiceEnv(flags);
  const role = flags.approver ? "approver" : "signer";
  return login(env, { role, ...(flags.timeout !== undefined ? { timeout: flags.timeout } : {}), penv: envOf(flags), signals: ioOf(flags).signals, out });
}

/** revsync logout: removes the tokens login kept for the environment (both roles). */
export async function runLogout(flags: GlobalFlags, out: Output): Promise<number> {
  return logout(openServiceEnv(flags), envOf(flags), out);
}
