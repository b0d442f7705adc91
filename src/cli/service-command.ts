import { openClient, openServiceEnv } from "./context.js";
import type { GlobalFlags } from "./flags.js";
import type { Output } from "./output.js";

/** What the service commands (approvals, errors, ssp) share: a client for the run, closed at its end. */
export async function withClient<T>(
  flags: GlobalFlags,
  out: Output,
  fn: (core: ReturnType<typeof openClient>, env: ReturnType<typeof openServiceEnv>) => Promise<T>,
): Promise<T> {
  const env = openServiceEnv(flags);
  const core = openClient(env, flags, out);
  try {
    return await fn(core, env);
  } finally {
    await core.close();
  }
}
