import { SECRET_VARIABLES } from "../api/auth.js";
import { secretVariablesIn, signInSecret } from "../api/credentials.js";
import { unsafeSecrets } from "../redactor.js";

/** The variables whose values are secrets: revsync's own, each environment's REVSYNC_<ENV>_ ones, the
 *  CI tokens. */
export function secretNames(env: NodeJS.ProcessEnv): string[] {
  return [...new Set([...SECRET_VARIABLES, ...secretVariablesIn(env)])];
}

/** What a run does about secrets too short or plain to blank out (unsafeSecret) before it starts: a
 *  command that would send anything refuses the first one that goes with every request (`refuse`); a
 *  password or client secret goes to the sign-in alone, and the client refuses one the service accepts
 *  (src/session/client.ts, keepOut), so it is left in the output (`drop`) as a wrong one is said as a
 *  refused sign-in. A command that sends nothing goes on, leaving them all in its output (`warning`),
 *  which blanking them out would garble. */
export function unsafeSecretPlan(env: NodeJS.ProcessEnv, sendsNothing: boolean): { refuse?: { name: string; why: string }; drop: string[]; warning?: string } {
  const unsafe = unsafeSecrets(env, secretNames(env));
  const [first] = unsafe;
  if (!first) return { drop: [] };
  if (!sendsNothing) {
    const refuse = unsafe.find((u) => !signInSecret(u.name));
    const drop = unsafe.filter((u) => signInSecret(u.name)).map((u) => u.name);
    return refuse ? { refuse, drop } : { drop };
  }
  const them = unsafe.length === 1 ? "it" : "them";
  return {
    drop: unsafe.map((u) => u.name),
    warning: `Warning: ${unsafe.map((u) => u.name).join(", ")} cannot be kept out of revsync's output (${first.why}); this command sends nothing, so it goes on, and leaves ${them} in its output; a command that signs in refuses ${them}`,
  };
}
