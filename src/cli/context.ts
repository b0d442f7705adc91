import { ApiCore, type ClientOptions } from "../api/core.js";
import { environmentCredentials, type EnvironmentCredentials } from "../api/credentials.js";
import { signInFolder } from "../api/sign-in-store.js";
import { urlProblem } from "../api/http.js";
import { serviceChoices } from "../api/service-choices.js";
import { sortDiagnostics, type Diagnostic } from "../config/diagnostics.js";
import { findConfig, loadPolicies, loadRepo, resolveEnv, selectEnv, varsFor, type DesiredState, type Repo, type ResolvedEnv } from "../config/repo.js";
import { PolicyProblems, UserError } from "../errors.js";
import { parseDuration } from "../duration.js";
import { numberOf } from "../number.js";
import type { GlobalFlags } from "./flags.js";
import { kindsOf, processIo, type CliIo } from "./io.js";
import { openRunClient } from "../session/client.js";
import type { Output } from "./output.js";

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

/** `observer`: who watches every request (apply --evidence); `approver`: the client holds the approver
 *  identity too (src/session/client.ts). */
export function openClient(
  env: ResolvedEnv,
  flags: GlobalFlags,
  out: Output,
  observer?: Pick<ClientOptions, "onRequest" | "onRequestStart">,
  opts: { approver?: boolean } = {},
): ApiCore {
  const settings = {
    penv: envOf(flags),
    credentials: credentialsOf(env, flags),
    concurrency: concurrencyOf(flags),
    rateLimit: rateLimitOf(flags, env),
    timeoutMs: timeoutOf(flags),
  };
  return openRunClient(env, settings, out, observer, opts);
}
