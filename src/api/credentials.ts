/** The one place an environment's credentials come from (docs/decisions.md, "Credentials per
 *  environment"): its own variables, REVSYNC_<ENV>_CLIENT_ID and the rest (or those of the prefix its
 *  `credentials: { prefix: … }` names), and the unprefixed REVSYNC_CLIENT_ID and the rest where it sets
 *  none of its own. Every command that signs in asks `environmentCredentials` for them, one environment
 *  at a time: a run over several environments gives each its own, and never one environment's own
 *  variables to another's sign-in. Only the process environment is read, never a file. */
import { UserError } from "../errors.js";
import { SIGN_IN_VARIABLES, tokenUser, type Credentials } from "./auth.js";
import { LOOPBACK } from "./http.js";
import { andList } from "../words.js";
import { keptCredentials, NAMING_ROLES, passedOverWords } from "./kept-credentials.js";
import { findSignIn, type Found, type Role, type SignInTarget } from "./sign-in-store.js";

/** What each credential variable is, by its name without a prefix (REVSYNC_ + role, or PREFIX_ + role). */
export const CREDENTIAL_ROLES = [
  "CLIENT_ID",
  "CLIENT_SECRET",
  "USERNAME",
  "PASSWORD",
  "TOKEN",
  "USER",
  "APPROVER_USERNAME",
  "APPROVER_PASSWORD",
  "APPROVER_TOKEN",
  "APPROVER_USER",
] as const;
export type CredentialRole = (typeof CREDENTIAL_ROLES)[number];

/** The roles whose values are secrets: blanked out of everything revsync prints or records. */
const SECRET_ROLES: readonly CredentialRole[] = ["CLIENT_SECRET", "PASSWORD", "TOKEN", "APPROVER_PASSWORD", "APPROVER_TOKEN"];
/** The secrets that only ever go to the token endpoint (not with every request, as a token does). */
const SIGN_IN_SECRET_ROLES: readonly CredentialRole[] = ["CLIENT_SECRET", "PASSWORD", "APPROVER_PASSWORD"];

/** The variables every environment falls back on: REVSYNC_CLIENT_ID and the rest. */
export const SHARED_PREFIX = "REVSYNC";

/** What names an environment's credentials: its name, and the prefix revsync.yaml gives it, if any.
 *  `credentialPrefix: null`: the environment has no variables of its own (an operations command run without
 *  revsync.yaml and without REVSYNC_ENV). */
export interface CredentialTarget {
  name: string;
  credentialPrefix?: string | null;
  /** The service and realm: the emulator's demo sign-in is suggested for its demo tenant only, and a
   *  token of `revsync login` is used only for the service it was kept for. */
  baseUrl?: string;
  authUrl?: string;
  realm?: string;
}

/** The prefix of an environment's own variables: `credentials.prefix` of revsync.yaml, else REVSYNC_ and
 *  the name upper-cased, each character outside A-Z and 0-9 written as _ (production: REVSYNC_PRODUCTION;
 *  eu-west: REVSYNC_EU_WEST). */
export function credentialPrefix(name: string, configured?: string): string {
  return configured ?? `${SHARED_PREFIX}_${name.toUpperCase().replace(/[^A-Z0-9]/gu, "_")}`;
}

/** Every variable a prefix makes (PREFIX_CLIENT_ID, …). */
export const credentialVariables = (prefix: string): string[] => CREDENTIAL_ROLES.map((r) => `${prefix}_${r}`);

/** Whether a variable is one of revsync's credentials: the unprefixed ones and the CI tokens
 *  (SIGN_IN_VARIABLES), any REVSYNC_<ENV>_ variable of a credential's role, and any variable of the
 *  prefixes revsync.yaml names. No file ever reads one as a ${VAR} (docs/decisions.md, "What a policy
 *  file may read"). */
export function isCredentialVariable(name: string, prefixes: readonly string[] = []): boolean {
  if (SIGN_IN_VARIABLES.has(name)) return true;
  const ofRole = (prefix: string): boolean => CREDENTIAL_ROLES.some((r) => name === `${prefix}_${r}`);
  if (name.startsWith(`${SHARED_PREFIX}_`) && CREDENTIAL_ROLES.some((r) => name.endsWith(`_${r}`))) return true;
  return prefixes.some(ofRole);
}

/** The names of the environment's variables that hold a secret, set or not: the REVSYNC_<ENV>_ ones
 *  the environment holds (every such name), and those of `prefixes`. Every output redacts their values. */
export function secretVariablesIn(env: NodeJS.ProcessEnv, prefixes: readonly string[] = []): string[] {
  const named = Object.keys(env).filter((n) => n.startsWith(`${SHARED_PREFIX}_`) && SECRET_ROLES.some((r) => n.endsWith(`_${r}`)));
  const own = prefixes.flatMap((p) => SECRET_ROLES.map((r) => `${p}_${r}`));
  return [...new Set([...named, ...own])].sort();
}

/** Whether a secret variable only ever goes to the token endpoint (a password, a client secret): one the
 *  service refuses is a refused sign-in, said as such, before anything is said of its length. */
export const signInSecret = (name: string): boolean => SIGN_IN_SECRET_ROLES.some((r) => name.endsWith(`_${r}`));

/** One environment's credentials, as the process environment gives them. */
export interface EnvironmentCredentials {
  /** The environment they are for. */
  environment: string;
  /** The prefix of its own variables (REVSYNC_PRODUCTION), or null when it has none. */
  prefix: string | null;
  /** revsync's own sign-in; a UserError naming the variables to set when it is incomplete. */
  signIn(): Credentials;
  /** The approver identity (four eyes), or undefined when none is set; half of a password grant is a
   *  UserError, before anything is sent. */
  approver(): Credentials | undefined;
  /** Who the approver is, as far as the variables name it, without its secret; `variable`: the user is
   *  REVSYNC_APPROVER_USER's text about a token that names nobody (four eyes and the guardrails count
   *  only who the service's token says). */
  approverNamed(): { configured: boolean; user: string | null; variable?: true };
  /** Each variable read that holds a secret, with its value (set ones only). */
  secrets: { name: string; value: string }[];
  /** Each variable read that names a client or a user (not secret), with its value (set ones only). */
  names: { name: string; value: string }[];
  /** The variable a role is read from for this environment: its own when set, else the shared one. */
  variable(role: CredentialRole): string;
  /** A role's value as this environment reads it (its own, else the shared one), if set. */
  value(role: CredentialRole): string | undefined;
  /** The variables of these roles that are set, as this environment reads them. */
  given(roles: readonly CredentialRole[]): string[];
  /** Said once: variables of a role won over a live token `revsync login` kept for the environment. */
  passedOver(role: Role): string | undefined;
}

/** Where `revsync login` keeps its tokens, and the time to judge whether one still lives. */
export interface KeptSignIns {
  folder: string;
  now: number;
}

/** Whether a URL names this machine: with realm demo, the local emulator's demo tenant. */
function isLocal(url: string | undefined): boolean {
  try {
    return !!url && LOOPBACK.test(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** An environment's credentials: the one function they come from (the module's comment says which
 *  variables, in which order). With `kept`, a role whose variables name nobody (no token, user name or
 *  password of the environment's own or the shared ones) signs in with the token `revsync login` kept
 *  for this very environment (its name, URLs and realm), and one that has ended says to sign in again
 *  (kept-credentials.ts). A run over several environments calls it once for each. */
export function environmentCredentials(target: CredentialTarget, penv: NodeJS.ProcessEnv, kept?: KeptSignIns): EnvironmentCredentials {
  const vars = fromVariables(target, penv);
  const at = kept && target.baseUrl !== undefined && target.realm !== undefined ? kept : undefined;
  if (!at) return vars;
  const where: SignInTarget = {
    environment: target.name,
    baseUrl: target.baseUrl ?? "",
    authUrl: target.authUrl ?? target.baseUrl ?? "",
    realm: target.realm ?? "",
  };
  const found = (role: Role): Found | undefined => findSignIn(at.folder, where, role, at.now);
  const named = (role: Role): string[] => vars.given(NAMING_ROLES[role]);
  const either = (role: Role, fromVars: () => Credentials | undefined): Credentials | undefined => {
    if (named(role).length) return fromVars();
    const f = found(role);
    return f ? keptCredentials(f, where, role) : fromVars();
  };
  return {
    ...vars,
    signIn: () => either("signer", () => vars.signIn()) as Credentials,
    approver: () => either("approver", () => vars.approver()),
    approverNamed: () => {
      const own = vars.approverNamed();
      if (own.configured || named("approver").length) return own;
      const f = found("approver");
      return f?.kind === "live" ? { configured: true, user: f.user ?? null } : own;
    },
    passedOver: (role) => passedOverWords(found(role), named(role), where, role),
  };
}

/** An environment's credentials from its variables alone. Within revsync's sign-in and within the
 *  approver's, the environment's own variables decide the kind of sign-in: its own token, else its own
 *  password grant (each part its own or, where it sets none, the shared one), and only when it sets
 *  neither, the shared token or password grant. An empty variable is an unset one (GitHub passes a secret
 *  it does not have as ""). */
function fromVariables(target: CredentialTarget, penv: NodeJS.ProcessEnv): EnvironmentCredentials {
  const prefix = target.credentialPrefix === null ? null : credentialPrefix(target.name, target.credentialPrefix);
  const value = (name: string): string | undefined => (Object.prototype.hasOwnProperty.call(penv, name) && penv[name] ? penv[name] : undefined);
  const own = (role: CredentialRole): string | undefined => (prefix ? value(`${prefix}_${role}`) : undefined);
  const shared = (role: CredentialRole): string | undefined => value(`${SHARED_PREFIX}_${role}`);
  const variable = (role: CredentialRole): string => (own(role) !== undefined && prefix ? `${prefix}_${role}` : `${SHARED_PREFIX}_${role}`);
  const get = (role: CredentialRole): string | undefined => own(role) ?? shared(role);
  const ownPassword = (["CLIENT_ID", "CLIENT_SECRET", "USERNAME", "PASSWORD"] as const).some((r) => own(r) !== undefined);
  const ownApprover = (["APPROVER_USERNAME", "APPROVER_PASSWORD"] as const).some((r) => own(r) !== undefined);
  // A missing part is named as the environment's own where it set some of its own, else as the shared one.
  const either =
    (ownGroup: boolean) =>
    (role: CredentialRole): string =>
      prefix && ownGroup ? `${prefix}_${role} (or ${SHARED_PREFIX}_${role})` : `${SHARED_PREFIX}_${role}`;
  const token = own("TOKEN") ?? (ownPassword ? undefined : shared("TOKEN"));
  const approverToken = own("APPROVER_TOKEN") ?? (ownApprover ? undefined : shared("APPROVER_TOKEN"));
  const read = (roles: readonly CredentialRole[]): { name: string; value: string }[] =>
    roles.flatMap((r) => {
      const v = get(r);
      return v === undefined ? [] : [{ name: variable(r), value: v }];
    });
  return {
    environment: target.name,
    prefix,
    variable,
    value: get,
    given: (roles) => roles.filter((r) => get(r) !== undefined).map(variable),
    passedOver: () => undefined,
    secrets: read(SECRET_ROLES),
    names: read(CREDENTIAL_ROLES.filter((r) => !SECRET_ROLES.includes(r))),
    signIn: () => signInOf(target, { token, get, variable, either: either(ownPassword), prefix }),
    approver: () => approverOf({ approverToken, get, variable, either: either(ownApprover || ownPassword), prefix }),
    approverNamed: () => {
      if (approverToken) {
        const claimed = tokenUser(approverToken);
        const text = get("APPROVER_USER") || null;
        return claimed ? { configured: true, user: claimed } : { configured: true, user: text, ...(text ? { variable: true as const } : {}) };
      }
      const user = get("APPROVER_USERNAME");
      return user ? { configured: true, user } : { configured: false, user: null };
    },
  };
}

interface Lookup {
  get: (role: CredentialRole) => string | undefined;
  variable: (role: CredentialRole) => string;
  either: (role: CredentialRole) => string;
  prefix: string | null;
}

/** revsync's own sign-in: a token, or the four parts of a password grant. */
function signInOf(target: CredentialTarget, { token, get, either, prefix, variable }: Lookup & { token: string | undefined }): Credentials {
  if (token) {
    const user = get("USER");
    return { kind: "token", token, ...(user ? { user } : {}) };
  }
  const roles = ["CLIENT_ID", "CLIENT_SECRET", "USERNAME", "PASSWORD"] as const;
  const missing = roles.filter((r) => !get(r));
  if (missing.length) {
    const whose = prefix ? ` for environment ${JSON.stringify(target.name)}` : "";
    const own = prefix
      ? `; environment ${JSON.stringify(target.name)} reads its own ${prefix}_CLIENT_ID, ${prefix}_CLIENT_SECRET, ${prefix}_USERNAME, ${prefix}_PASSWORD or ${prefix}_TOKEN first, the ${SHARED_PREFIX}_ ones where it sets none of its own`
      : "";
    throw new UserError(
      `no credentials${whose}: set ${missing.map(either).join(", ")} (password grant), or ${either("TOKEN")} (a bearer token), or sign in through a browser with revsync login`,
      isLocal(target.baseUrl) && target.realm === "demo"
        ? `for the local emulator's demo tenant: REVSYNC_CLIENT_ID=revsync REVSYNC_CLIENT_SECRET=demo-secret REVSYNC_USERNAME=alice REVSYNC_PASSWORD=alice-password${own}`
        : `the tenant's onboarding gives them (client id, client secret, user name, password); in CI, keep them in the CI's secret store${own}`,
    );
  }
  return {
    kind: "password",
    clientId: get("CLIENT_ID") ?? "",
    clientSecret: get("CLIENT_SECRET") ?? "",
    username: get("USERNAME") ?? "",
    password: get("PASSWORD") ?? "",
    from: `${andList(roles.map(variable))} (environment ${JSON.stringify(target.name)})`,
  };
}

/** The approver identity: a token, or a password grant with revsync's client id and secret. */
function approverOf({ approverToken, get, either, variable }: Lookup & { approverToken: string | undefined }): Credentials | undefined {
  if (approverToken) {
    const user = get("APPROVER_USER");
    return { kind: "token", token: approverToken, ...(user ? { user } : {}) };
  }
  const username = get("APPROVER_USERNAME");
  const password = get("APPROVER_PASSWORD");
  if (!username && !password) return undefined;
  const roles = ["APPROVER_USERNAME", "APPROVER_PASSWORD", "CLIENT_ID", "CLIENT_SECRET"] as const;
  const missing = roles.filter((r) => !get(r));
  if (missing.length)
    throw new UserError(
      `the approver identity is incomplete: set ${missing.map(either).join(", ")} (the approver signs in with revsync's client id and secret and its own user name and password), or ${either("APPROVER_TOKEN")}`,
      "four eyes: approves are sent as the approver, everything else as revsync's own sign-in",
    );
  const from = andList(["APPROVER_USERNAME", "APPROVER_PASSWORD", "CLIENT_ID", "CLIENT_SECRET"].map((r) => variable(r as CredentialRole)));
  return {
    kind: "password",
    clientId: get("CLIENT_ID") ?? "",
    clientSecret: get("CLIENT_SECRET") ?? "",
    username: username ?? "",
    password: password ?? "",
    from,
  };
}
