import { ApiCore, type ClientOptions } from "../api/core.js";
import { SECRET_VARIABLES } from "../api/auth.js";
import { signInSecret, type EnvironmentCredentials } from "../api/credentials.js";
import type { ResolvedEnv } from "../config/repo.js";
import { UserError } from "../errors.js";
import { unsafeSecret, unsafeSecretRefusal } from "../redactor.js";
import type { Painter } from "../report/painter.js";
import type { RunOutput } from "../run-output.js";

/** What a run's client is opened with, the command line's settings read: the run's environment
 *  variables, the environment's credentials, and the limits of its requests. */
export interface ClientSettings {
  penv: NodeJS.ProcessEnv;
  credentials: EnvironmentCredentials;
  concurrency: number;
  rateLimit: number | undefined;
  timeoutMs: number;
}

/** What a client says while it runs: notes, warnings and the verbose log (painted for stderr). */
export type ClientOutput = RunOutput & { readonly err: Painter };

/** A numeric setting of the environment, in milliseconds: a whole number, checked before anything is
 *  sent (a typo would otherwise make every request fail in words that name no setting). */
export function msSetting(penv: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = penv[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\s*\d+\s*$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw)))
    throw new UserError(`${name} must be a whole number of milliseconds, at least ${min}; got ${JSON.stringify(raw)}`, `unset ${name} or give it e.g. 30000`);
  return Number(raw);
}

/** A secret that the environment's name, realm or URLs, or a user name of the run, holds would be
 *  blanked out of them wherever revsync prints or records them (the plan, the output, the evidence
 *  record, whose environment then names no chain): refused before anything is sent, naming the variable
 *  and the field, never the secret. `credentials`: the environment's (environmentCredentials). */
export function refuseSecretsInNames(
  env: Pick<ResolvedEnv, "name" | "realm" | "baseUrl" | "authUrl">,
  credentials: EnvironmentCredentials,
  penv: NodeJS.ProcessEnv,
): void {
  const names: [string, string | undefined][] = [
    ["the environment's name", env.name],
    ["the realm", env.realm],
    ["base_url", env.baseUrl],
    ["auth_url", env.authUrl],
    ...credentials.names.map((n): [string, string | undefined] => [n.name, n.value]),
  ];
  const ci = CI_TOKENS.flatMap((name) => (penv[name] ? [{ name, value: penv[name] }] : []));
  for (const { name: variable, value: secret } of [...credentials.secrets, ...ci]) {
    const where = names.find(([, value]) => !!value && value.includes(secret));
    if (where)
      throw new UserError(
        `${variable} cannot be kept out of revsync's output: ${where[0]} holds it, and blanking it out would blank ${where[0]} out of the plan, the output and the evidence; nothing was sent`,
        `give ${variable} the real secret, one that no name of the run holds`,
      );
  }
}

/** The CI's tokens revsync reads a pull request's approvals with. */
const CI_TOKENS = SECRET_VARIABLES.filter((n) => !n.startsWith("REVSYNC_"));

/** The environment's secrets kept out of the output: each blanked out wherever it would appear. One too
 *  short or too plain to blank out (unsafeSecret) stops the run before anything is sent when it would
 *  go with every request (a token); a password or client secret, which goes only to the sign-in, is
 *  refused once the service accepts it (the returned check, for ApiCore's onSignedIn): a wrong one is
 *  "sign-in refused", the real problem, not a lecture about its length. */
function keepOut(credentials: EnvironmentCredentials, out: ClientOutput): (() => void) | undefined {
  let late: { name: string; why: string } | undefined;
  for (const { name, value } of credentials.secrets) {
    const why = unsafeSecret(value);
    if (!why) {
      out.redactor.add(value, name);
      continue;
    }
    if (!signInSecret(name)) throw unsafeSecretRefusal({ name, why });
    out.redactor.drop(value);
    late ??= { name, why };
  }
  if (!late) return undefined;
  const { name, why } = late;
  return () => {
    throw new UserError(
      `${name} cannot be kept out of revsync's output: ${why}; the service accepted the sign-in, and nothing else was sent`,
      `give ${name} the real secret (at least 8 characters, not a word or a number alone)`,
    );
  };
}

/** A run's client of one environment: its secrets kept out of everything printed (one that cannot be is
 *  refused before anything is sent), the credentials the variables leave unused said once, unknown values
 *  of the service's answers warned of once. `observer`: who watches every request (apply --evidence).
 *  `approver` (plan and apply): the client also holds the approver identity of REVSYNC_APPROVER_* or of
 *  revsync login --approver (four eyes), when one is given; it signs in only to send approves. */
export function openRunClient(
  env: ResolvedEnv,
  settings: ClientSettings,
  out: ClientOutput,
  observer?: Pick<ClientOptions, "onRequest" | "onRequestStart">,
  opts: { approver?: boolean } = {},
): ApiCore {
  const { penv, credentials: own } = settings;
  refuseSecretsInNames(env, own, penv);
  const signedIn = keepOut(own, out);
  const credentials = own.signIn();
  const approver = opts.approver ? own.approver() : undefined;
  for (const role of ["signer", "approver"] as const) {
    const words = role === "signer" || opts.approver ? own.passedOver(role) : undefined;
    if (words && out.once(words)) out.warn(words);
  }
  return new ApiCore({
    ...(approver ? { approver } : {}),
    ...(signedIn ? { onSignedIn: signedIn } : {}),
    baseUrl: env.baseUrl,
    authUrl: env.authUrl,
    realm: env.realm,
    credentials,
    // As many connections as requests may be in flight: --concurrency of the governor's, and the sign-in's
    // beside them (the token endpoint is outside the governor). undici opens another connection for a
    // request that comes while each open one is still finishing its last answer: with twice --concurrency
    // a plan of the demo opened 11 for its 18 requests, never more than 8 in flight; 9 now. Each costs
    // both ends a socket and its parser (and a handshake over TLS).
    connections: settings.concurrency + 1,
    service: env.service,
    concurrency: settings.concurrency,
    rateLimit: settings.rateLimit,
    timeoutMs: settings.timeoutMs,
    env: penv,
    onSecret: (s) => out.redactor.add(s),
    onUnknownValue: (u, request) => {
      const where = `${u.policy ? `${u.policy}: ` : ""}${request} ${u.pointer}`;
      if (out.once(`unknown:${u.field}:${u.value}`)) {
        out.warn(`the service answered ${u.field} ${JSON.stringify(u.value)}, which is not one of the documented values; revsync reads it as it is`);
      }
      out.verbose(`  ${u.field} ${JSON.stringify(u.value)} at ${where}`);
    },
    log: (line) => out.verbose(`${out.err.paint("dim", "http")} ${line}`),
    ...observer,
    retry: penv.REVSYNC_MAX_RETRY_WAIT_MS ? { maxWaitMs: msSetting(penv, "REVSYNC_MAX_RETRY_WAIT_MS", 0, 0) } : undefined,
    timeouts: {
      connectMs: msSetting(penv, "REVSYNC_CONNECT_TIMEOUT_MS", 10_000),
      headersMs: msSetting(penv, "REVSYNC_TIMEOUT_MS", 30_000),
      bodyMs: msSetting(penv, "REVSYNC_TIMEOUT_MS", 60_000),
    },
  });
}
