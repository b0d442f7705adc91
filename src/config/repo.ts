import { existsSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { PolicyProblems, UserError } from "../errors.js";
import { interpolateString, signInProblem, variablesIn, type Interpolated, type VarSource, type VarValue } from "./interpolate.js";
import { credentialPrefix, credentialVariables, isCredentialVariable, SHARED_PREFIX } from "../api/credentials.js";
import { urlCredentials, urlProblem } from "../api/http.js";
import type { EnvironmentConfig, RevsyncConfig } from "../schema/generated/policy.js";
import { sortDiagnostics, type Diagnostic } from "./diagnostics.js";
import { runRules, type FileKind, type ParsedValuesByPath, type PolicyDoc } from "./rules.js";
import { andList } from "../words.js";
import { listYamlFiles } from "./walk.js";
import { at, schemaDiagnostics } from "./schema-diagnostics.js";
import { readYamlFile, type SourceDoc } from "./yaml-source.js";
import { keepInScope } from "./scope.js";
import { promotionProblems } from "./promotion.js";
import { serviceChoices, type ServiceChoices } from "../api/service-choices.js";
import { isLoopbackHttp } from "../loopback.js";

export const CONFIG_FILE = "revsync.yaml";

export interface Repo {
  /** Where paths are shown from (the working directory of the command). */
  cwd: string;
  root: string;
  configFile: string;
  policiesDir: string;
  config: RevsyncConfig;
  configDoc: SourceDoc;
}

export interface ResolvedEnv {
  name: string;
  /** The prefix of the environment's own credential variables (credentials.prefix of revsync.yaml;
   *  undefined: REVSYNC_ and its name; null: none of its own). src/api/credentials.ts reads them. */
  credentialPrefix?: string | null;
  baseUrl: string;
  authUrl: string;
  realm: string;
  vars: Record<string, VarValue>;
  /** The vars whose value is the whole text of a process variable (see config/interpolate.ts). */
  envTexts?: ReadonlySet<string>;
  /** The text of each var that reads the process environment, for problems to name (VarSource.origins). */
  origins?: ReadonlyMap<string, string>;
  /** The tenant's choices where the interface is silent (service: of the environment). */
  service: ServiceChoices;
  /** Requests per second the service allows, when revsync.yaml says (rate_limit). */
  rateLimit?: number;
  /** The folder of apply's evidence records (evidence: of the environment, else of revsync.yaml), absolute. */
  evidence?: string;
  /** four_eyes: of the environment, else of revsync.yaml (default false): no batch is approved by the
   *  user who reviewed it or created its policy, and in CI the pull request needs an independent approval. */
  fourEyes: boolean;
  /** four_eyes: { local_apply: true }: under four eyes, apply may also run outside CI (recorded in the
   *  evidence, flagged by verify); absent or false: outside CI it refuses. */
  fourEyesLocalApply?: boolean;
  /** Where apply keeps the environment's lock (lock: of the environment, else of revsync.yaml, else by
   *  its URLs: a file of this machine for a service on loopback, the git remote origin otherwise).
   *  Absent for the operations commands' environment without revsync.yaml, which never lock. */
  lock?: LockSetting;
  /** promote_from: the environment this one receives its changes from (src/promotion/). */
  promoteFrom?: string;
}

/** Where an environment's lock is kept: a ref of a git remote (a name or a URL), or a file of this machine. */
export type LockSetting = { kind: "git"; remote: string } | { kind: "local" };

export interface SourceRef {
  file: string;
  line: number;
  column: number;
}

/** git's state: each resource kind's entries (what its policy files ask for), by the kind's name
 *  (src/kinds/). */
export type DesiredState = ReadonlyMap<string, readonly unknown[]>;

/** revsync.yaml: --config, else the working directory and its parents. */
export function findConfig(cwd: string, explicit?: string): string {
  if (explicit) {
    const p = resolve(cwd, explicit);
    if (!existsSync(p)) throw new UserError(`--config ${explicit}: no such file`);
    return p;
  }
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const p = join(dir, CONFIG_FILE);
    if (existsSync(p)) return p;
    if (dirname(dir) === dir) break;
  }
  throw new UserError(`no ${CONFIG_FILE} in ${cwd} or any parent folder`, "run revsync from a policy repo, or pass --config PATH");
}

export function loadRepo(configFile: string, diagnostics: Diagnostic[], cwd = process.cwd()): Repo | undefined {
  const root = dirname(configFile);
  const shown = relative(cwd, configFile) || configFile;
  const docs = readYamlFile(configFile, shown, diagnostics);
  const doc = docs[0];
  if (!doc) {
    if (!diagnostics.length) diagnostics.push({ file: shown, line: 1, column: 1, message: `${CONFIG_FILE} is empty`, severity: "error" });
    return undefined;
  }
  const problems = schemaDiagnostics(doc, "revsync-config.schema.json");
  diagnostics.push(...problems);
  if (problems.length) return undefined;
  const config = doc.value as RevsyncConfig;
  const ambiguous = [
    ...batchStatusProblems(config, doc, shown),
    ...connectionProblems(config, doc, shown),
    ...credentialProblems(config, doc, shown),
    ...promotionProblems(config, doc, shown),
  ];
  diagnostics.push(...ambiguous);
  if (ambiguous.length) return undefined;
  return { cwd, root, configFile, policiesDir: resolve(root, config.policies ?? "policies"), config, configDoc: doc };
}

/** An environment's service.batch_status must give each of revsync's three statuses its own text: a
 *  text shared by two would read a batch of the service as either. */
function batchStatusProblems(config: RevsyncConfig, doc: SourceDoc, file: string): Diagnostic[] {
  const problems: Diagnostic[] = [];
  for (const [name, env] of Object.entries(config.environments ?? {})) {
    const texts = (env as EnvironmentConfig | null)?.service?.batch_status ?? {};
    const seen = new Map<string, string>();
    for (const [status, text] of Object.entries(texts)) {
      if (typeof text !== "string") continue;
      const other = seen.get(text);
      if (other === undefined) {
        seen.set(text, status);
        continue;
      }
      problems.push({
        file,
        ...at(doc, `/environments/${name}/service/batch_status/${status}`),
        severity: "error",
        message: `environments.${name}.service.batch_status.${status}: ${JSON.stringify(text)} is also the text of ${other}: each batch status needs its own text, or a batch the service shows with it could be either`,
      });
    }
  }
  return problems;
}

/** The fields of an environment that say where and as whom revsync connects, filled from the process
 *  environment (the vars are checked as they are filled, by environmentVars). */
const CONNECTION_FIELDS = ["base_url", "auth_url", "realm"] as const;

/** What revsync.yaml says as written (before any variable is filled, so validate sees it offline): a
 *  URL with a user or password in it, and a sign-in variable named, are errors at their place. */
function connectionProblems(config: RevsyncConfig, doc: SourceDoc, file: string): Diagnostic[] {
  const problems: Diagnostic[] = [];
  for (const [name, env] of Object.entries(config.environments ?? {})) {
    for (const field of CONNECTION_FIELDS) {
      const text = (env as EnvironmentConfig | null)?.[field];
      if (typeof text !== "string") continue;
      const where = { file, ...at(doc, `/environments/${name}/${field}`), severity: "error" as const };
      const named = variablesIn(text).filter((v) => isCredentialVariable(v, credentialPrefixes(config)));
      for (const v of named) problems.push({ ...where, rule: "variables", message: `environments.${name}.${field}: ${signInProblem(v)}` });
      const credentials = field === "realm" || variablesIn(text).length ? undefined : urlCredentials(text);
      if (credentials) problems.push({ ...where, message: `environments.${name}.${field}: ${credentials}` });
    }
  }
  // The lock's git remote: a token as its user (https://TOKEN@host/...) or a password is a credential too.
  const locks: [string, unknown][] = [
    ["/lock/remote", (config.lock as { remote?: unknown } | undefined)?.remote],
    ...Object.entries(config.environments ?? {}).map(([name, env]): [string, unknown] => [
      `/environments/${name}/lock/remote`,
      ((env as EnvironmentConfig | null)?.lock as { remote?: unknown } | undefined)?.remote,
    ]),
  ];
  for (const [pointer, remote] of locks) {
    const credentials = typeof remote === "string" ? remoteCredentials(remote) : undefined;
    if (credentials) problems.push({ file, ...at(doc, pointer), severity: "error", message: `${pointer.slice(1).replace(/\//g, ".")}: ${credentials}` });
  }
  return problems;
}

/** The prefixes of credential variables revsync.yaml names (credentials.prefix): their variables are
 *  credentials, which no file reads. */
export function credentialPrefixes(config: RevsyncConfig): string[] {
  return Object.values(config.environments ?? {}).flatMap((e) =>
    (e as EnvironmentConfig | null)?.credentials?.prefix ? [e?.credentials?.prefix as string] : [],
  );
}

/** Each environment's own credential variables must be its own: two environments whose prefixes make one
 *  variable (prod-eu and prod_eu; production and production_approver, whose REVSYNC_PRODUCTION_APPROVER_TOKEN
 *  would be either), or an environment whose variables are the shared ones (one named approver), would
 *  send one environment's credentials to another's sign-in. An error at the environment. */
function credentialProblems(config: RevsyncConfig, doc: SourceDoc, file: string): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const owners = new Map<string, string>(credentialVariables(SHARED_PREFIX).map((v) => [v, "the shared credentials"]));
  for (const [name, env] of Object.entries(config.environments ?? {})) {
    const explicit = (env as EnvironmentConfig | null)?.credentials?.prefix;
    const prefix = credentialPrefix(name, explicit);
    const clash = credentialVariables(prefix).find((v) => owners.has(v));
    if (clash) {
      problems.push({
        file,
        ...at(doc, explicit ? `/environments/${name}/credentials/prefix` : `/environments/${name}`, !explicit),
        severity: "error",
        rule: "credentials",
        message: `environments.${name}: its own credentials would be read from ${prefix}_…, and ${clash} is also a variable of ${owners.get(clash)}: give it another prefix (credentials: { prefix: NAME }), so that no variable holds two environments' credentials`,
      });
      continue;
    }
    for (const v of credentialVariables(prefix)) owners.set(v, `environment ${JSON.stringify(name)}`);
  }
  return problems;
}

/** What a git remote's URL holds that is a credential, in words (never the credential): a password in
 *  any URL, and any user of an http(s) URL (a token written as the user name signs in as well as a
 *  password does). An ssh login name (`git@host:org/repo`, `ssh://git@host/...`) is no secret. Text with a
 *  ${VAR} is checked once filled, where it is used. */
export function remoteCredentials(text: string): string | undefined {
  if (variablesIn(text).length) return undefined;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined; // a remote's name, or an scp-like address whose user is an ssh login
  }
  const web = /^(https?|ftps?):$/i.test(url.protocol);
  // git adds its own path and query to an http(s) remote's URL (…/info/refs?service=…), so a remote has
  // none of its own: one that does carries a token as a parameter (?access_token=…).
  if (web && (url.search || url.hash))
    return `it holds a query or fragment (${url.protocol}//${url.host}${url.pathname}?[credentials]), which carries a token as a parameter and which a git remote never needs: credentials never live in files; name a remote (git remote add locks URL) whose credentials git's credential helper or SSH agent gives`;
  if (url.password === "" && (url.username === "" || !web)) return undefined;
  return `it holds a ${url.password !== "" ? "password" : "user name, which for an http(s) remote is a credential (a token written as the user signs in)"} (${url.protocol}//[credentials]@${url.host}): credentials never live in files; name a remote (git remote add locks URL) whose credentials git's credential helper or SSH agent gives`;
}

export function environmentNames(repo: Repo): string[] {
  return Object.keys(repo.config.environments);
}

/** --env, else REVSYNC_ENV, else the only environment. --env and REVSYNC_ENV naming two environments
 *  is refused: which one a run writes to is never a matter of precedence. */
export function selectEnv(repo: Repo, wanted: string | undefined, env: NodeJS.ProcessEnv): string {
  const names = environmentNames(repo);
  const fromEnv = env.REVSYNC_ENV || undefined;
  if (wanted !== undefined && fromEnv !== undefined && wanted !== fromEnv)
    throw new UserError(
      `--env ${JSON.stringify(wanted)} and REVSYNC_ENV=${JSON.stringify(fromEnv)} name two environments: nothing was sent`,
      "name one environment: unset REVSYNC_ENV, or give the same name to both",
    );
  const name = wanted ?? fromEnv ?? (names.length === 1 ? names[0] : undefined);
  if (!name) throw new UserError(`${CONFIG_FILE} has several environments (${names.join(", ")}): choose one with --env NAME or REVSYNC_ENV`);
  if (!names.includes(name)) throw new UserError(`no environment ${JSON.stringify(name)} in ${CONFIG_FILE}; it has: ${names.join(", ")}`);
  return name;
}

/** A string of revsync.yaml's environment with ${VAR} filled from the process environment (the rules
 *  of config/interpolate.ts); problems are diagnostics at the field's place. */
function fill(repo: Repo, name: string, field: string, value: string, env: NodeJS.ProcessEnv, problems: Diagnostic[]): Interpolated {
  // revsync.yaml's own fields read the process environment only: vars are for policy files.
  const r = interpolateString(value, {
    vars: {},
    env,
    process: true,
    hint: "set it in the process environment (a CI variable, say)",
    credentialPrefixes: credentialPrefixes(repo.config),
  });
  const p = at(repo.configDoc, `/environments/${name}/${field}`);
  const file = relative(repo.cwd, repo.configFile) || CONFIG_FILE;
  for (const message of r.problems) {
    problems.push({ file, ...p, severity: "error", rule: "variables", message: `environments.${name}.${field.replace("/", ".")}: ${message}` });
  }
  return r;
}

/** The environment's vars for policy files, and the problems filling them (what validate reports).
 *  `envTexts`: the vars whose value is the whole text of one process variable; `origins`: the text of
 *  each var that reads the process environment; `unresolved`: the vars that could not be filled (a value
 *  of a policy file reading one says nothing more: the problem is said here). */
export function environmentVars(
  repo: Repo,
  name: string,
  env: NodeJS.ProcessEnv,
): { vars: Record<string, VarValue>; envTexts: Set<string>; origins: Map<string, string>; unresolved: Set<string>; problems: Diagnostic[] } {
  const vars: Record<string, VarValue> = {};
  const envTexts = new Set<string>();
  const origins = new Map<string, string>();
  const unresolved = new Set<string>();
  const problems: Diagnostic[] = [];
  for (const [k, v] of Object.entries(repo.config.environments[name]?.vars ?? {})) {
    if (typeof v !== "string") {
      vars[k] = v ?? "";
      continue;
    }
    const r = fill(repo, name, `vars/${k}`, v, env, problems);
    vars[k] = r.value;
    if (r.envText !== undefined) envTexts.add(k);
    if (r.read?.length) origins.set(k, v);
    if (r.problems.length) unresolved.add(k);
  }
  return { vars, envTexts, origins, unresolved, problems };
}

/** Variables that override the URLs and realm of the environment a command works on. */
export const OVERRIDE_VARS = ["REVSYNC_BASE_URL", "REVSYNC_AUTH_URL", "REVSYNC_REALM"] as const;

/** The override variables set in an environment. */
export const overridesSet = (env: NodeJS.ProcessEnv): string[] => OVERRIDE_VARS.filter((k) => env[k] !== undefined);

/** The environment's URLs and realm with ${VAR} filled from the process environment, then the
 *  REVSYNC_BASE_URL / REVSYNC_AUTH_URL / REVSYNC_REALM overrides. The overrides name one tenant: a
 *  command over several environments refuses them (see overridesSet) rather than aim them all at it. */
export function resolveEnv(repo: Repo, name: string, env: NodeJS.ProcessEnv): ResolvedEnv {
  const raw = repo.config.environments[name] as EnvironmentConfig;
  const { baseUrl, authUrl, realm, problems } = endpoints(repo, name, env);
  // A URL that is none, or that a variable gave a user or password: refused before it is used or shown
  // anywhere, naming the variable or the place in revsync.yaml it came from.
  if (!problems.length)
    for (const [field, value] of [
      ["base_url", baseUrl],
      ["auth_url", authUrl],
    ] as const) {
      const problem = urlProblem(value);
      if (!problem) continue;
      const override = field === "base_url" ? "REVSYNC_BASE_URL" : "REVSYNC_AUTH_URL";
      if (env[override] !== undefined) throw new UserError(`${override}${problem}`);
      const from = field === "auth_url" && raw.auth_url === undefined ? "base_url" : field;
      const reads = variablesIn(String(raw[from] ?? ""));
      throw new PolicyProblems(`environment ${JSON.stringify(name)} of revsync.yaml: ${from} cannot be used`, [
        {
          file: relative(repo.cwd, repo.configFile) || CONFIG_FILE,
          ...at(repo.configDoc, `/environments/${name}/${from}`),
          severity: "error",
          message: `environments.${name}.${from}${reads.length ? ` (from ${reads.map((v) => `\${${v}}`).join(", ")})` : ""}${problem}`,
        },
      ]);
    }
  const { vars, envTexts, origins, problems: varProblems } = environmentVars(repo, name, env);
  const evidence = raw.evidence ?? repo.config.evidence;
  const lockRaw = raw.lock ?? repo.config.lock;
  const lockField = raw.lock !== undefined ? "lock/remote" : undefined;
  const text = (field: string, value: string): string => String(fill(repo, name, field, value, env, problems).value);
  const remote = typeof lockRaw === "object" ? (lockField ? text(lockField, lockRaw.remote) : text("lock", lockRaw.remote)) : undefined;
  problems.push(...varProblems);
  if (problems.length) throw new PolicyProblems(`environment ${JSON.stringify(name)} of revsync.yaml uses variables that are not set`, problems);
  const lock = lockSetting(name, lockRaw, remote, baseUrl, authUrl);
  return {
    name,
    ...(raw.credentials?.prefix !== undefined ? { credentialPrefix: raw.credentials.prefix } : {}),
    baseUrl,
    authUrl,
    realm,
    vars,
    envTexts,
    origins,
    service: serviceChoices(raw.service, repo.config.approvals, env),
    rateLimit: raw.rate_limit,
    ...fourEyesOf(raw.four_eyes ?? repo.config.four_eyes),
    ...(evidence === undefined ? {} : { evidence: resolve(repo.root, evidence) }),
    lock,
    ...(raw.promote_from !== undefined ? { promoteFrom: raw.promote_from } : {}),
  };
}

/** four_eyes as revsync.yaml says it: true, or { local_apply } (four eyes, and whether apply may run
 *  outside CI). */
function fourEyesOf(raw: EnvironmentConfig["four_eyes"]): Pick<ResolvedEnv, "fourEyes" | "fourEyesLocalApply"> {
  if (raw === undefined || raw === false) return { fourEyes: false };
  if (raw === true) return { fourEyes: true };
  return { fourEyes: true, ...(raw.local_apply ? { fourEyesLocalApply: true } : {}) };
}

/** The environment's URLs and realm with ${VAR} filled from the process environment, after the
 *  overrides; the problems filling them, at their places in revsync.yaml. */
function endpoints(repo: Repo, name: string, env: NodeJS.ProcessEnv): { baseUrl: string; authUrl: string; realm: string; problems: Diagnostic[] } {
  const raw = repo.config.environments[name] as EnvironmentConfig;
  const problems: Diagnostic[] = [];
  const text = (field: string, value: string | undefined): string | undefined =>
    value === undefined ? undefined : String(fill(repo, name, field, value, env, problems).value);
  const baseUrl = env.REVSYNC_BASE_URL ?? text("base_url", raw.base_url) ?? "";
  const authUrl = env.REVSYNC_AUTH_URL ?? text("auth_url", raw.auth_url) ?? baseUrl;
  const realm = env.REVSYNC_REALM ?? text("realm", raw.realm) ?? "";
  return { baseUrl, authUrl, realm, problems };
}

/** What validate says of an environment's URLs and realm: a variable they use that is not set here is
 *  a warning, not an error. Validate reads no URL and runs where CI's variables are absent (a laptop, a
 *  pre-commit hook), as `revsync test` does; plan, apply and drift refuse to run without it. */
export function endpointWarnings(repo: Repo, name: string, env: NodeJS.ProcessEnv): Diagnostic[] {
  return endpoints(repo, name, env).problems.map((d) => ({
    ...d,
    severity: "warning",
    rule: "url-variables",
    message: `${d.message}; plan, apply and drift of environment ${name} need it where they run (validate and test read no URL)`,
  }));
}

/** The lock an environment resolves to (docs/decisions.md, "One writer per tenant"). A service on
 *  loopback is reached from this machine alone, so a file of this machine is its lock; any other is
 *  reached from CI runners and laptops, so its lock is a ref of a git remote they all reach, and a
 *  file of one machine is refused for it. */
function lockSetting(name: string, raw: EnvironmentConfig["lock"], remote: string | undefined, baseUrl: string, authUrl: string): LockSetting {
  const loopback = isLoopbackHttp(baseUrl) && isLoopbackHttp(authUrl);
  if (raw === "local" && !loopback)
    throw new UserError(
      `environment ${JSON.stringify(name)}: lock: local keeps the lock in a file of this machine, which a CI runner or another laptop applying to ${baseUrl} never sees`,
      "remove lock: local (the default for a service not on loopback is a ref of the git remote origin), or name a remote every machine that applies reaches: lock: { remote: NAME }",
    );
  if (remote !== undefined) {
    const credentials = remoteCredentials(remote);
    if (credentials) throw new UserError(`environment ${JSON.stringify(name)}: lock.remote ${credentials}`);
    return { kind: "git", remote };
  }
  if (raw === "git") return { kind: "git", remote: "origin" };
  if (raw === "local" || (raw === undefined && loopback)) return { kind: "local" };
  return { kind: "git", remote: "origin" };
}

/** The folder a repo's files are read inside (docs/decisions.md, "Files revsync reads"): the policy repo,
 *  links followed, so that a file that is a link out of it (to /dev/zero, to another repo) is refused and
 *  named; a folder revsync.yaml names outside the repo (`policies: ../shared`) is its own. */
export function readInside(repo: Repo, dir: string): { folder: string; words: { show: (p: string) => string; folderName: string } } {
  const rel = relative(repo.root, dir);
  const inRepo = !rel.startsWith("..") && !isAbsolute(rel);
  return {
    folder: inRepo ? repo.root : dir,
    words: { show: (p) => relative(repo.cwd, p) || p, folderName: inRepo ? "the policy repo" : `the folder ${relative(repo.cwd, dir) || "."}` },
  };
}

/** The documents of the policies folder's YAML files, each of a kind the registry knows (`kinds`); one
 *  of no kind, or of another, is a problem at its `kind:`. */
function policyDocs(repo: Repo, vars: VarSource, kinds: readonly FileKind[], diagnostics: Diagnostic[], environment: string | undefined): PolicyDoc[] {
  const docs: PolicyDoc[] = [];
  const known = kinds.map((k) => k.fileKind);
  const inside = readInside(repo, repo.policiesDir);
  const scopedLists = (fileKind: string): readonly string[] => kinds.find((k) => k.fileKind === fileKind)?.scopedLists ?? [];
  for (const abs of listYamlFiles(repo.policiesDir)) {
    const shown = relative(repo.cwd, abs) || abs;
    const keep = keepInScope({ environment, known: environmentNames(repo), scopedLists, file: shown, diagnostics });
    for (const src of readYamlFile(abs, shown, diagnostics, vars, inside, keep)) {
      const kind = (src.value as { kind?: unknown } | null)?.kind;
      if (typeof kind === "string" && known.includes(kind)) {
        docs.push({ src, absFile: abs, kind });
        continue;
      }
      diagnostics.push({
        file: shown,
        ...at(src, "/kind"),
        severity: "error",
        message:
          kind === undefined
            ? `missing kind: expected ${known.join(" or ")}`
            : kind === "SspPolicyTest"
              ? `kind: SspPolicyTest is a policy test file: move it to the tests folder (${repo.config.tests ?? "tests"}/, as tests: of revsync.yaml names it); the policies folder holds ${andList(known)} files`
              : `kind: expected ${known.map((k) => JSON.stringify(k)).join(" or ")}, got ${JSON.stringify(kind)}`,
      });
    }
  }
  return docs;
}

/** Parses and checks every policy file, each by its kind (`kinds`, the registry of src/kinds/), as
 *  `environment` reads them: a document or a batch of other environments (config/scope.ts) is not
 *  there; undefined reads all. Returns git's state, keyed by kind, and every problem found. */
export function loadPolicies(
  repo: Repo,
  vars: VarSource,
  kinds: readonly FileKind[],
  environment: string | undefined,
): { desired: DesiredState; diagnostics: Diagnostic[]; docs: PolicyDoc[] } {
  const diagnostics: Diagnostic[] = [];
  const desired = new Map<string, unknown[]>(kinds.map((k) => [k.name, []]));
  if (!existsSync(repo.policiesDir) || !statSync(repo.policiesDir).isDirectory()) {
    diagnostics.push({
      file: relative(repo.cwd, repo.configFile) || CONFIG_FILE,
      line: 1,
      column: 1,
      severity: "error",
      message: `policies folder ${relative(repo.root, repo.policiesDir) || "."} does not exist`,
    });
    return { desired, diagnostics, docs: [] };
  }
  const docs = policyDocs(repo, vars, kinds, diagnostics, environment);
  const parsed: ParsedValuesByPath = new Map();
  diagnostics.push(...runRules(repo.root, docs, kinds, parsed));
  const failed = new Set(diagnostics.filter((d) => d.severity === "error").map((d) => d.file));
  const byFile = new Map(kinds.map((k) => [k.fileKind, k]));
  for (const d of docs) {
    const kind = byFile.get(d.kind);
    if (!kind || failed.has(d.src.file)) continue;
    desired.get(kind.name)?.push(kind.entry(d, { cwd: repo.cwd, parsed }));
  }
  return { desired, diagnostics: sortDiagnostics(diagnostics), docs };
}

/** ${VAR} values for policy files: the environment's vars, and only they (config/interpolate.ts); `env`
 *  only lets a problem say how to declare a variable the process environment sets. */
export function varsFor(from: Pick<VarSource, "vars" | "envTexts" | "origins" | "unresolved">, env: NodeJS.ProcessEnv = process.env): VarSource {
  const { vars, envTexts, origins, unresolved } = from;
  return { vars, env, ...(envTexts ? { envTexts } : {}), ...(origins ? { origins } : {}), ...(unresolved ? { unresolved } : {}) };
}
