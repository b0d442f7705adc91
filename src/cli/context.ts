import { ApiCore, type ClientOptions } from "../api/core.js";
import { SECRET_VARIABLES } from "../api/auth.js";
import { environmentCredentials, signInSecret, type EnvironmentCredentials } from "../api/credentials.js";
import { signInFolder, type SignInTarget } from "../api/sign-in-store.js";
import { urlProblem } from "../api/http.js";
import { serviceChoices } from "../api/service-choices.js";
import { sortDiagnostics, type Diagnostic } from "../config/diagnostics.js";
import { findConfig, loadPolicies, loadRepo, resolveEnv, selectEnv, varsFor, type DesiredState, type Repo, type ResolvedEnv } from "../config/repo.js";
import { PolicyProblems, UserError } from "../errors.js";
import { parseDuration } from "../duration.js";
import { numberOf } from "../number.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf, processIo, type CliIo } from "./io.js";
import { unsafeSecret, unsafeSecretRefusal, type Output } from "./output.js";

/** The run's streams, environment, working directory and signals (the process's, unless given). */
export function ioOf(flags: GlobalFlags): CliIo {
  return flags.io ?? processIo();
}

/** The environment this run reads: the run's environment, under the run's own overrides. */
export function envOf(flags: GlobalFlags): NodeJS.ProcessEnv {
  const env = ioOf(flags).env;
  return flags.envOverride ? { ...env, ...flags.envOverride } : env;
}

/** The run's working directory: where relative paths of its command line start. */
export function cwdOf(flags: GlobalFlags): string {
  return ioOf(flags).cwd;
}

export function concurrencyOf(flags: GlobalFlags): number {
  const n = numberOf(flags.concurrency ?? 8) ?? NaN;
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new UserError(`--concurrency must be a whole number from 1 to 64, got ${JSON.stringify(flags.concurrency)}`);
  return n;
}

/** Requests per second the service allows: --rate-limit, else the environment's rate_limit, else unknown. */
export function rateLimitOf(flags: GlobalFlags, env: Pick<ResolvedEnv, "rateLimit">): number | undefined {
  if (flags.rateLimit === undefined) return env.rateLimit;
  const n = numberOf(flags.rateLimit) ?? NaN;
  if (flags.rateLimit.trim() === "" || !Number.isFinite(n) || n <= 0 || n > 10_000)
    throw new UserError(`--rate-limit must be a number of requests per second above 0 (at most 10000), got ${JSON.stringify(flags.rateLimit)}`);
  return n;
}

export function timeoutOf(flags: GlobalFlags): number {
  const ms = parseDuration(flags.timeout ?? "10m");
  if (ms === undefined || ms <= 0) throw new UserError(`--timeout must be a duration such as 90s, 10m or 1h, got ${JSON.stringify(flags.timeout)}`);
  return ms;
}

export function openRepo(flags: GlobalFlags): Repo {
  const diagnostics: Diagnostic[] = [];
  const repo = loadRepo(findConfig(cwdOf(flags), flags.config), diagnostics, cwdOf(flags));
  if (!repo) {
    throw new PolicyProblems("revsync.yaml is invalid", sortDiagnostics(diagnostics));
  }
  return repo;
}

/** Reads the desired state; refuses to go on (exit 1, nothing sent) when any file has an error. */
export function desiredState(repo: Repo, env: Pick<ResolvedEnv, "vars" | "name">, out: Output, flags: GlobalFlags): DesiredState {
  const { desired, diagnostics } = loadPolicies(repo, varsFor(env, envOf(flags)), kindsOf(out.io), env.name);
  if (diagnostics.some((d) => d.severity === "error")) {
    throw new PolicyProblems("the policy repo has errors: nothing was sent to the service", diagnostics, "run revsync validate");
  }
  return desired;
}

export function openEnv(repo: Repo, flags: GlobalFlags, name?: string): ResolvedEnv {
  const env = envOf(flags);
  return resolveEnv(repo, selectEnv(repo, name ?? flags.env, env), env);
}

/** For commands that need only the service (approvals, errors, ssp): revsync.yaml when there is one,
 *  else REVSYNC_BASE_URL / REVSYNC_AUTH_URL / REVSYNC_REALM alone. Like every command, it reads the
 *  environment the run was given (envOf), never process.env behind its back. */
export function openServiceEnv(flags: GlobalFlags): ResolvedEnv {
  const penv = envOf(flags);
  let configFile: string | undefined;
  try {
    configFile = findConfig(cwdOf(flags), flags.config);
  } catch (e) {
    if (flags.config || !penv.REVSYNC_BASE_URL) throw e;
  }
  if (configFile) return openEnv(openRepo(flags), flags);
  const baseUrl = penv.REVSYNC_BASE_URL ?? "";
  for (const name of ["REVSYNC_BASE_URL", "REVSYNC_AUTH_URL"]) {
    const problem = penv[name] === undefined ? undefined : urlProblem(penv[name] ?? "");
    if (problem) throw new UserError(`${name}${problem}`);
  }
  return {
    name: penv.REVSYNC_ENV ?? "default",
    // Without revsync.yaml an environment has its own credentials only when REVSYNC_ENV names it.
    credentialPrefix: penv.REVSYNC_ENV ? undefined : null,
    baseUrl,
    authUrl: penv.REVSYNC_AUTH_URL ?? baseUrl,
    realm: penv.REVSYNC_REALM ?? "",
    vars: {},
    service: serviceChoices(undefined, undefined, penv),
    fourEyes: false,
  };
}

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
function keepOut(credentials: EnvironmentCredentials, out: Output): (() => void) | undefined {
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

/** The environment as a token of revsync login is bound to it. */
export function signInTarget(env: ResolvedEnv): SignInTarget {
  return { environment: env.name, baseUrl: env.baseUrl, authUrl: env.authUrl, realm: env.realm };
}

/** The environment's credentials (src/api/credentials.ts): its variables, else the tokens revsync login
 *  kept for it (src/api/kept-credentials.ts). */
export function credentialsOf(env: ResolvedEnv, flags: GlobalFlags): EnvironmentCredentials {
  const penv = envOf(flags);
  return environmentCredentials(env, penv, { folder: signInFolder(penv), now: Date.now() });
}

/** Who the approver identity is, without its secret: what plan says will approve. */
export function approverNamedFor(env: ResolvedEnv, flags: GlobalFlags): { configured: boolean; user: string | null; variable?: true } {
  return credentialsOf(env, flags).approverNamed();
}

/** `observer`: who watches every request (apply --evidence). `approver` (plan and apply): the client also
 *  holds the approver identity of REVSYNC_APPROVER_* or of revsync login --approver (four eyes), when one
 *  is given; it signs in only to send approves. */
export function openClient(
  env: ResolvedEnv,
  flags: GlobalFlags,
  out: Output,
  observer?: Pick<ClientOptions, "onRequest" | "onRequestStart">,
  opts: { approver?: boolean } = {},
): ApiCore {
  const penv = envOf(flags);
  const own = credentialsOf(env, flags);
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
    connections: concurrencyOf(flags) * 2,
    service: env.service,
    concurrency: concurrencyOf(flags),
    rateLimit: rateLimitOf(flags, env),
    timeoutMs: timeoutOf(flags),
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
