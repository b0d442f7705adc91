import { forgetSignIns, signInFolder, sweepEnded, type Role, type SignInTarget } from "../api/sign-in-store.js";
import { NAMING_ROLES } from "../api/kept-credentials.js";
import { environmentCredentials } from "../api/credentials.js";
import { signInThroughBrowser } from "../api/login.js";
import type { ResolvedEnv } from "../config/repo.js";
import { parseDuration } from "../duration.js";
import { UserError } from "../errors.js";
import { openBrowser } from "../open-browser.js";
import type { RunOutput } from "../run-output.js";
import { shellQuote } from "../shell-quote.js";
import type { SignalSource } from "./apply-signals.js";

/** The environment as a token of revsync login is bound to it. */
export function signInTarget(env: ResolvedEnv): SignInTarget {
  return { environment: env.name, baseUrl: env.baseUrl, authUrl: env.authUrl, realm: env.realm };
}

/** revsync login: a person signs in through the browser (the spec's implicit flow), and the token is
 *  kept for its lifetime, for this environment and role. */
export async function login(
  env: ResolvedEnv,
  run: { role: Role; timeout?: string; penv: NodeJS.ProcessEnv; signals: SignalSource; out: RunOutput },
): Promise<number> {
  const { role, penv, out, signals } = run;
  const credentials = environmentCredentials(env, penv);
  const clientId = credentials.value("CLIENT_ID");
  if (!clientId)
    throw new UserError(
      `revsync login needs the client id: set ${credentials.prefix ? `${credentials.prefix}_CLIENT_ID (or REVSYNC_CLIENT_ID)` : "REVSYNC_CLIENT_ID"} (the client id of the tenant's onboarding; no secret is needed)`,
      env.realm === "demo" ? "for the emulator's demo tenant: REVSYNC_CLIENT_ID=revsync" : undefined,
    );
  const waitMs = parseDuration(run.timeout ?? "5m");
  if (waitMs === undefined || waitMs <= 0) throw new UserError(`--timeout must be a duration such as 90s or 5m, got ${JSON.stringify(run.timeout)}`);
  const folder = signInFolder(penv);
  sweepEnded(folder, Date.now());
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  signals.on("SIGINT", onSignal);
  signals.on("SIGTERM", onSignal);
  let signedIn;
  try {
    signedIn = await signInThroughBrowser(
      { ...signInTarget(env), clientId, role },
      {
        folder,
        open: (url) => openBrowser(url, penv),
        say: (line) => out.errorLine(line),
        onSecret: (token) => out.redactor.add(token, "the token of revsync login"),
        now: () => Date.now(),
        waitMs,
        signal: stop.signal,
      },
    );
  } finally {
    signals.off("SIGINT", onSignal);
    signals.off("SIGTERM", onSignal);
  }
  const who = signedIn.user ? ` as ${signedIn.user}` : "";
  out.info(
    `Signed in to environment ${JSON.stringify(env.name)}${who}${role === "approver" ? ", the four-eyes approver" : ""}, until ${new Date(signedIn.expiresAt).toISOString()}; the token is kept, readable by you alone, until then (revsync logout${envFlag(env.name)} removes it).`,
  );
  const winners = credentials.given(NAMING_ROLES[role]);
  if (winners.length)
    out.warn(
      `${winners.join(" and ")} ${winners.length > 1 ? "are" : "is"} set: commands sign in with ${winners.length > 1 ? "them" : "it"} before this sign-in; unset ${winners.length > 1 ? "them" : "it"} to use it`,
    );
  return 0;
}

/** revsync logout: removes the tokens login kept for the environment (both roles). */
export function logout(env: ResolvedEnv, penv: NodeJS.ProcessEnv, out: RunOutput): number {
  const folder = signInFolder(penv);
  const removed = forgetSignIns(folder, signInTarget(env));
  sweepEnded(folder, Date.now());
  out.info(
    removed.length
      ? `Signed out of environment ${JSON.stringify(env.name)}: removed the kept token of ${removed.map((r) => (r === "signer" ? "your sign-in" : "the approver")).join(" and ")}.`
      : `No sign-in is kept for environment ${JSON.stringify(env.name)}: nothing to remove.`,
  );
  return 0;
}

const envFlag = (name: string): string => ` --env ${shellQuote(name)}`;
