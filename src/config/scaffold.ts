/** revsync init's use case: a policy repo scaffolded, or what it lacks added to one (revsync.yaml,
 *  policies/, a .gitignore for plan files, the JSON Schemas, editor settings, a package.json pinning
 *  revsync, the CI recipes), each file fitted to the repo's revsync.yaml. It prints nothing: it says what
 *  became of each file and what to do next (src/report/init.ts words it). */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { createRequire } from "node:module";
import { isDeepStrictEqual } from "node:util";
import { parse } from "yaml";
import { UserError } from "../errors.js";
import { credentialPrefix } from "../api/credentials.js";
import { CONFIG_SCHEMA, POLICY_FILE_SCHEMA, REPO_SCHEMAS_DIR, writeRepoSchemas } from "../repo/schemas.js";
import { schemasDir } from "../schema/ajv.js";
import { fileError, READ_CAPS, readUserFile, realPathInside, writeUserFile } from "../user-files.js";
import { shellQuote } from "../shell-quote.js";

/** What init is asked for: the new revsync.yaml's environment, URL and realm, the CI recipes, the pin,
 *  and whether files that exist are replaced. */
export interface ScaffoldOptions {
  /** The environment of a new revsync.yaml, checked (the command's --env, default sandbox). */
  envName: string;
  /** Whether --env, --base-url or --realm were given (they shape a new revsync.yaml only). */
  shapesGiven: boolean;
  baseUrl?: string;
  realm?: string;
  ci?: string;
  pin?: string;
  force?: boolean;
}

/** The CI systems init has recipes for. */
export const isCiName = (name: string): boolean => Object.hasOwn(CI_FILES, name);

/** revsync's own folder (dist/ and src/ sit one level below it). */
const OWN_ROOT = join(schemasDir, "..");

/** The CI recipes of examples/ci, shipped with revsync. */
const CI_DIR = join(OWN_ROOT, "examples", "ci");

const CI_FILES: Record<string, [string, string][]> = {
  github: [
    ["github/revsync-plan.yml", ".github/workflows/revsync-plan.yml"],
    ["github/revsync-apply.yml", ".github/workflows/revsync-apply.yml"],
    ["github/revsync-drift.yml", ".github/workflows/revsync-drift.yml"],
  ],
  gitlab: [["gitlab/.gitlab-ci.yml", ".gitlab-ci.yml"]],
};

/** What a repo's revsync.yaml says that the files init writes depend on. */
export interface RepoShape {
  environments: string[];
  policies: string;
  tests: string;
  /** The ${NAME}s its environments read from the process environment: CI must set them. */
  variables: string[];
  /** Each environment's prefix of its own credential variables (REVSYNC_SANDBOX, or credentials.prefix). */
  credentials?: string[];
}

/** Reads the shape of a revsync.yaml's text; undefined when it is not a revsync.yaml revsync can read. */
export function repoShape(text: string): RepoShape | undefined {
  let doc: { environments?: Record<string, Record<string, unknown> | null>; policies?: unknown; tests?: unknown } | null;
  try {
    doc = parse(text) as typeof doc;
  } catch {
    return undefined;
  }
  const envs = doc?.environments;
  if (!envs || typeof envs !== "object" || !Object.keys(envs).length) return undefined;
  const variables = new Set<string>();
  const scan = (v: unknown): void => {
    if (typeof v === "string") for (const m of v.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) variables.add(m[1] as string);
    else if (v && typeof v === "object") for (const x of Object.values(v)) scan(x);
  };
  // vars take ${NAME} from the process environment too, but only where they are not the environment's own.
  for (const env of Object.values(envs)) for (const [k, v] of Object.entries(env ?? {})) if (k !== "vars") scan(v);
  for (const env of Object.values(envs)) scan(env?.vars);
  const own = new Set(Object.values(envs).flatMap((e) => Object.keys((e?.vars as object | undefined) ?? {})));
  const prefixOf = (name: string): string => {
    const named = (envs[name]?.credentials as { prefix?: unknown } | undefined)?.prefix;
    return credentialPrefix(name, typeof named === "string" ? named : undefined);
  };
  return {
    environments: Object.keys(envs),
    credentials: Object.keys(envs).map(prefixOf),
    policies: typeof doc?.policies === "string" ? doc.policies : "policies",
    tests: typeof doc?.tests === "string" ? doc.tests : "tests",
    variables: [...variables].filter((v) => !own.has(v)).sort(),
  };
}

/** A CI recipe (written for two environments, sandbox and production, of examples/multi-env) for this
 *  repo: its environments, the variables its revsync.yaml reads, its policies and tests folders. */
export function adaptRecipe(text: string, shape: RepoShape): string {
  const envVars = (indent: string): string => shape.variables.map((v) => `${indent}${v}: \${{ vars.${v} }}\n`).join("");
  const roles = ["CLIENT_ID", "CLIENT_SECRET", "USERNAME", "PASSWORD"];
  const prefixes = shape.credentials ?? shape.environments.map((e) => credentialPrefix(e));
  const ownSecrets = (indent: string): string => prefixes.flatMap((p) => roles.map((r) => `${indent}${p}_${r}: \${{ secrets.${p}_${r} }}\n`)).join("");
  return text
    .replace(/\[sandbox, production\]/g, `[${shape.environments.join(", ")}]`)
    .replace(/^( +)SANDBOX_BASE_URL: .*\n(?:\1(?:SANDBOX|PRODUCTION)_(?:BASE|AUTH)_URL: .*\n)*/gm, (_m, indent: string) => envVars(indent))
    .replace(/^( +)REVSYNC_SANDBOX_CLIENT_ID: .*\n(?:\1REVSYNC_(?:SANDBOX|PRODUCTION)_\w+: .*\n)*/gm, (_m, indent: string) => ownSecrets(indent))
    .replace(
      /URLs from SANDBOX_BASE_URL, SANDBOX_AUTH_URL,\n# PRODUCTION_BASE_URL, PRODUCTION_AUTH_URL\./,
      shape.variables.length ? `URLs and realms from ${shape.variables.join(", ")}.\n#` : "URLs from revsync.yaml.\n#",
    )
    .replace(/"policies\/\*\*", "tests\/\*\*"/g, `"${shape.policies}/**", "${shape.tests}/**"`);
}

const ownPackage = (): { version: string; repository?: string | { url?: string } } =>
  createRequire(import.meta.url)(join(OWN_ROOT, "package.json")) as { version: string; repository?: string | { url?: string } };

/** The npm dependency spec package.json pins revsync with, as docs/install.md documents it: the git
 *  repository revsync came from, at the tag of this version. From revsync's package.json `repository`,
 *  else the origin of the clone revsync runs from; else none is known. A clone whose history has no
 *  such tag (a development clone) is pinned at the commit it runs, which npm can install as well. An
 *  origin that is a path on this machine gives no spec, only `local`: CI cannot install from it. */
export function defaultPin(version: string): { spec?: string; local?: string } {
  // What revsync's own clone and package.json say cannot change while it runs: asked once a process
  // (each git start costs a process; a test run inits hundreds of repos).
  const known = pins.get(version) ?? ownPin(version);
  pins.set(version, known);
  return { ...known };
}

const pins = new Map<string, { spec?: string; local?: string }>();

function ownPin(version: string): { spec?: string; local?: string } {
  const git = (...args: string[]): string | undefined => {
    try {
      return execFileSync("git", ["-C", OWN_ROOT, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return undefined;
    }
  };
  const clone = existsSync(join(OWN_ROOT, ".git"));
  let ref = `v${version}`;
  if (clone && git("rev-parse", "-q", "--verify", `refs/tags/${ref}`) === undefined) ref = git("rev-parse", "HEAD") ?? ref;
  const pkg = ownPackage();
  const declared = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  const url = declared ?? (clone ? git("remote", "get-url", "origin") : undefined);
  return url ? pinFrom(url, ref) : {};
}

/** A spec or address that names a place on this machine (a path, file:, link:, git+file:): npm installs
 *  it only where that place is, never on a CI runner. */
export const isLocalSpec = (spec: string): boolean => /^(git\+)?(file|link):/.test(spec) || /^(\/|\.{1,2}([/\\]|$)|~|[A-Za-z]:[/\\])/.test(spec);

/** The npm spec of a git address at a ref: an scp-like address becomes the ssh form. A path or file://
 *  address (a clone of a clone on this machine) is returned as `local`: a pin to it installs only here,
 *  never in CI, so init writes a placeholder instead and says why. */
export function pinFrom(url: string, ref: string): { spec?: string; local?: string } {
  if (isLocalSpec(url)) return { local: url };
  const scp = /^([^@/]+@[^:/]+):(.+)$/.exec(url);
  const normal = scp ? `git+ssh://${scp[1]}/${scp[2]}` : url.startsWith("git+") ? url : `git+${url}`;
  return { spec: `${normal.replace(/#.*$/, "")}#${ref}` };
}

function packageJson(dir: string, pin: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `${JSON.stringify(
    {
      name: `${name || "policy-repo"}`,
      private: true,
      description: "Policy repo for revsync: tenant configuration and SSP policies as code",
      scripts: { validate: "revsync validate", test: "revsync test", plan: "revsync plan" },
      devDependencies: { revsync: pin },
    },
    null,
    2,
  )}\n`;
}

/** A pin package.json can hold when revsync does not know where it came from: the user fills it in. */
const PLACEHOLDER = "git+https://<git host>/<org>/revsync.git#<release tag or full commit id>";

/** What init writes into a folder, and what it found there. */
interface Scaffold {
  dir: string;
  /** The folder as the user named it. */
  where: string;
  /** revsync.yaml as it was, when init keeps it. */
  existing: string | undefined;
  shape: RepoShape;
  /** The pin package.json gets (--pin, else where revsync came from, else the placeholder). */
  pin: string;
  /** Where revsync came from, when it was looked up (no --pin). */
  found: { spec?: string; local?: string };
}

/** What became of each file: written (in words), left as init would write it, or kept as it was. */
export interface Outcome {
  written: string[];
  unchanged: string[];
  kept: string[];
}

/** What init did: each file's outcome, the warnings (one about revsync.yaml, kept as it was, said
 *  before the files; the others about the pin, after them) and the next steps. */
export interface Scaffolded {
  /** The folder as the user is shown it. */
  where: string;
  /** revsync.yaml was there, and kept. */
  existed: boolean;
  outcome: Outcome;
  configWarning?: string;
  warnings: string[];
  /** The next steps, each a line (none: nothing to do). */
  next: string[];
  /** With --ci, what the recipes need of the CI's variables. */
  ciNote?: string;
}

/** Scaffolds a policy repo in `dir`, or adds to one what it lacks. An existing file is never touched
 *  without `force`. `cwd`: where paths are shown from. */
export function scaffoldRepo(dir: string, cwd: string, options: ScaffoldOptions): Scaffolded {
  const where = relative(cwd, dir) || ".";
  const { existing, configText, shape, warning } = readConfig(dir, where, cwd, options);
  const found = options.pin ? {} : defaultPin(ownPackage().version);
  const scaffold: Scaffold = { dir, where, existing, shape, pin: options.pin ?? found.spec ?? PLACEHOLDER, found };
  const outcome = writeFiles(scaffold, filesFor(scaffold, configText, options), options, cwd);
  const next = nextSteps(scaffold, outcome, options);
  return { where, existed: !!existing, outcome, ...(warning ? { configWarning: warning } : {}), ...next };
}

/** The repo's revsync.yaml (kept unless --force) or a new one, and what the other files depend on in it. */
function readConfig(
  dir: string,
  where: string,
  cwd: string,
  flags: ScaffoldOptions,
): { existing?: string; configText: string; shape: RepoShape; warning?: string } {
  const envName = flags.envName;
  const configPath = join(dir, "revsync.yaml");
  const existing = existsSync(configPath) && !flags.force ? readRepoFile(configPath) : undefined;
  const configText = existing ?? freshConfig(envName, envName.toUpperCase().replace(/[^A-Z0-9]/g, "_"), flags);
  const shape = repoShape(configText);
  if (!shape) {
    throw new UserError(
      `${relative(cwd, configPath) || "revsync.yaml"} has no environments revsync can read, so init cannot fit the files it adds to it`,
      "run revsync validate to see why, or init --force to write a new revsync.yaml",
    );
  }
  const warning =
    existing && flags.shapesGiven
      ? `${where === "." ? "" : `${where}/`}revsync.yaml exists and is left as it is: --env, --base-url and --realm shape a new one only (--force writes it again)`
      : undefined;
  return { existing, configText, shape, ...(warning ? { warning } : {}) };
}

/** Each file init writes, by its path in the repo, with the text it would have. */
function filesFor({ dir, shape, pin }: Scaffold, configText: string, flags: ScaffoldOptions): Map<string, string> {
  const files = new Map<string, string>();
  files.set("revsync.yaml", configText);
  const policiesDir = join(dir, shape.policies);
  if (!existsSync(policiesDir) || !readdirSync(policiesDir).length) files.set(`${shape.policies}/.gitkeep`, "");
  files.set(".gitignore", `${GITIGNORE_HEADER}\n${GITIGNORE_LINES.join("\n")}\n`);
  files.set(".vscode/settings.json", editorSettings(shape));
  // The CI recipes install what package.json pins. Without them it is not written: a package.json that
  // pins a revsync not yet installed would make `npx revsync` in the repo look for it on the registry.
  if (flags.ci || flags.pin) files.set("package.json", packageJson(dir, pin));
  for (const [from, to] of flags.ci ? (CI_FILES[flags.ci] ?? []) : []) files.set(to, adaptRecipe(readFileSync(join(CI_DIR, from), "utf8"), shape));
  return files;
}

/** The editor settings that check the repo's files against revsync's schemas (yaml-language-server). */
function editorSettings(shape: RepoShape): string {
  const yaml = [`${shape.policies}/**/*.yaml`, `${shape.policies}/**/*.yml`, `${shape.tests}/**/*.yaml`, `${shape.tests}/**/*.yml`];
  const schemas = { [`./${REPO_SCHEMAS_DIR}/${POLICY_FILE_SCHEMA}`]: yaml, [`./${REPO_SCHEMAS_DIR}/${CONFIG_SCHEMA}`]: ["revsync.yaml"] };
  return `${JSON.stringify({ "yaml.schemas": schemas }, null, 2)}\n`;
}

/** Writes the files and the schemas: a file that exists is kept unless --force, except that a repo's
 *  own .gitignore and package.json get what init needs added to them. Every file lies inside DIR: a
 *  link that leads out is refused before anything is written. */
function writeFiles({ dir, where, pin }: Scaffold, files: Map<string, string>, flags: ScaffoldOptions, cwd: string): Outcome {
  const words = { show: (p: string): string => relative(cwd, p) || ".", folderName: `the folder init writes (${where})` };
  for (const name of [...files.keys(), `${REPO_SCHEMAS_DIR}/${POLICY_FILE_SCHEMA}`]) realPathInside(dir, join(dir, name), words);
  const outcome: Outcome = { written: [], kept: [], unchanged: [] };
  for (const [name, text] of files) {
    const path = join(dir, name);
    const current = existsSync(path) ? readRepoFile(path) : undefined;
    const merged = current !== undefined && current !== text && !flags.force ? mergeInto(name, current, flags.pin, pin) : undefined;
    if (current === text || (merged && merged.text === current)) outcome.unchanged.push(name);
    else if (merged) {
      writeUserFile(path, merged.text, dir, words);
      outcome.written.push(merged.said);
    } else if (current !== undefined && !flags.force) outcome.kept.push(name);
    else {
      writeUserFile(path, text, dir, words);
      outcome.written.push(current === undefined ? `wrote ${name}` : `replaced ${name}`);
    }
  }
  const schemas = writeRepoSchemas(dir, !!flags.force);
  outcome.written.push(...schemas.written.map((s) => `wrote ${s}`));
  outcome.kept.push(...schemas.kept);
  if (!schemas.written.length && !schemas.kept.length) outcome.unchanged.push(`${REPO_SCHEMAS_DIR}/`);
  return outcome;
}

/** A file of the repo init adds to (revsync.yaml, .gitignore, package.json…): a regular file within the
 *  cap of hand-written text, or a plain error naming it. */
function readRepoFile(path: string): string {
  try {
    return readUserFile(path, READ_CAPS.text);
  } catch (e) {
    throw fileError("read", path, e);
  }
}

/** The revsync that the repo's package.json pins now (undefined: none, or no package.json). */
function pinnedIn(dir: string): unknown {
  try {
    const pkg = JSON.parse(readRepoFile(join(dir, "package.json"))) as { dependencies?: object; devDependencies?: object };
    return ({ ...pkg.dependencies, ...pkg.devDependencies } as Record<string, unknown>).revsync;
  } catch {
    return undefined;
  }
}

/** How to install revsync into the repo before the next steps run it, unless it is installed there:
 *  `npx revsync` where it is not installed looks the name up on the npm registry and runs whatever is
 *  published under it, with the tenant's credentials in its environment. So the steps install the pin
 *  first (package.json's, else the pin init found or was given) and run it with `npx --no --`, which
 *  never fetches a package. */
function installStep(dir: string, pinned: unknown, pin: string): string[] {
  if (existsSync(join(dir, "node_modules", "revsync", "package.json"))) return [];
  if (typeof pinned === "string" && pinned !== PLACEHOLDER)
    return ["  npm install                             # installs the revsync package.json pins; commit package-lock.json"];
  if (pinned === PLACEHOLDER) return ["  npm install                             # once devDependencies.revsync names a real pin (see above)"];
  return [
    `  npm install --save-dev ${shellQuote(pin)}${pin === PLACEHOLDER ? "   # fill in the git URL and tag of your revsync, or run init with --pin SPEC" : "   # pins revsync in package.json and installs it here (init --pin SPEC names another)"}`,
  ];
}

/** What the repo's package.json pins now decides whether the recipes' install step can work: a warning
 *  when it cannot; then the next steps, and with --ci what the recipes need. */
function nextSteps(
  { dir, where, existing, shape, pin, found }: Scaffold,
  { written }: Outcome,
  flags: ScaffoldOptions,
): Pick<Scaffolded, "warnings" | "next" | "ciNote"> {
  const warnings: string[] = [];
  const pinned = pinnedIn(dir);
  const pins = !!(flags.ci || flags.pin);
  if (pins && pinned === PLACEHOLDER) {
    const why = found.local
      ? `revsync runs from a clone whose origin is a path on this machine (${found.local}), and a pin to it would install only here, never in CI`
      : "revsync does not know where it was installed from";
    warnings.push(
      `package.json pins revsync at a placeholder: ${why}. Set devDependencies.revsync to the git URL your CI can reach and a release tag or full commit id (or run init with --pin SPEC)`,
    );
  } else if (flags.ci && typeof pinned === "string" && isLocalSpec(pinned)) {
    const instead = found.spec ?? (pin !== pinned ? pin : PLACEHOLDER);
    warnings.push(
      `package.json pins revsync at ${JSON.stringify(pinned)}, a path on this machine: a CI runner cannot fetch it, so the recipes' npm install fails there. Pin a version from an npm registry your CI reaches, or a git+https URL at a release tag or full commit id (init --pin ${shellQuote(instead)})`,
    );
  } else if (pins && pinned === undefined) {
    warnings.push(`package.json does not pin revsync, and the CI recipes install what it pins: npm install --save-dev ${shellQuote(pin)}`);
  }
  // The steps, with how to install revsync first, for a new repo, or where this run wrote the pin.
  const wrotePin = written.some((w) => w.endsWith("package.json") || w.includes(" in package.json"));
  const next = !existing || wrotePin ? installStep(dir, pinned, pin) : [];
  if (!existing) {
    const setVars = [...shape.variables.map((v) => `${v}=…`), "REVSYNC_CLIENT_ID=…", "REVSYNC_CLIENT_SECRET=…", "REVSYNC_USERNAME=…", "REVSYNC_PASSWORD=…"];
    next.push(`  export ${setVars.join(" ")}`);
    next.push(`  npx --no -- revsync export              # the tenant's policies, as files in ${shape.policies}/ (--no: npx never fetches a package)`);
    next.push("  npx --no -- revsync validate");
    next.push("  npx --no -- revsync plan --detailed-exitcode   # exit 0: git matches the service");
  }
  if (next.length && where !== ".") next.unshift(`  cd ${shellQuote(where)}`);
  const ciNote = flags.ci
    ? `The CI recipes install what package.json pins, then run npx --no -- revsync, which never downloads a package: set ${shape.variables.length ? `${shape.variables.join(", ")} and ` : ""}the credentials as CI variables: each environment's own (${(shape.credentials ?? shape.environments.map((e) => credentialPrefix(e))).map((p) => `${p}_CLIENT_ID, …`).join("; ")}, which the recipes pass to every job; revsync signs each environment in with its own), or the unprefixed REVSYNC_CLIENT_ID, … for environments that share one sign-in. With four_eyes: true, give the apply job alone the approver identity too (REVSYNC_APPROVER_USERNAME, REVSYNC_APPROVER_PASSWORD): approves go as that second user, and apply reads the pull request's approvals with the CI's token; and give the plan job the approver's user name alone, as the variable REVSYNC_APPROVER_USERNAME (on GitHub a variable of the <env>-read environment or the repository, on GitLab an unprotected CI/CD variable), so that the plan names who will approve.`
    : undefined;
  return { warnings, next, ...(ciNote ? { ciNote } : {}) };
}

const GITIGNORE_HEADER =
  "# Saved plans (revsync plan --out) and what the CI recipes write (plans, their markdown, drift, policy test reports): made in CI, not committed.";
/** What a policy repo's .gitignore needs: the names the docs and the recipes save plans and reports
 *  under (a reviewed plan the apply jobs fetch is reviewed/plan-ENV.json), so that an evidence record
 *  made in CI finds the working tree clean. */
const GITIGNORE_LINES = ["plan.json", "plan-*.json", "*.plan.json", "plan-*.md", "drift-*.md", "policy-tests.xml", "node_modules/"];

/** What init adds to a file of the repo's own: the .gitignore lines it lacks; in package.json the
 *  revsync pin (added when there is none, changed when --pin names another). undefined: not a file init
 *  adds to, or one it cannot read (kept, and said). */
function mergeInto(name: string, current: string, pinFlag: string | undefined, pin: string): { text: string; said: string } | undefined {
  if (name === ".gitignore") {
    const has = new Set(current.split(/\r?\n/).map((l) => l.trim()));
    const missing = GITIGNORE_LINES.filter((l) => !has.has(l));
    if (!missing.length) return { text: current, said: "" };
    const sep = current === "" || current.endsWith("\n") ? "" : "\n";
    return { text: `${current}${sep}${GITIGNORE_HEADER}\n${missing.join("\n")}\n`, said: `added ${missing.join(", ")} to .gitignore` };
  }
  if (name === "package.json") {
    let pkg: { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
    try {
      pkg = JSON.parse(current) as typeof pkg;
      if (!pkg || typeof pkg !== "object" || Array.isArray(pkg)) return undefined;
    } catch {
      return undefined;
    }
    const section = pkg.dependencies?.revsync !== undefined ? "dependencies" : "devDependencies";
    const now = pkg[section]?.revsync;
    const want = pinFlag ?? now ?? pin;
    if (now === want) return { text: current, said: "" };
    const wanted = { ...pkg, [section]: { ...pkg[section], revsync: want } };
    const said = `${now === undefined ? "added" : "changed"} ${section}.revsync in package.json: ${JSON.stringify(want)}${now === undefined ? "" : ` (was ${JSON.stringify(now)})`}`;
    const edited = editPin(current, section, want, wanted);
    if (edited !== undefined) return { text: edited, said };
    // No edit in place gave the file wanted (a layout these edits do not read): written again as JSON.
    const indent = /^[ \t]+(?=")/m.exec(current)?.[0] ?? "  ";
    return { text: `${JSON.stringify(wanted, null, indent)}\n`, said: `${said}; the file rewritten as JSON` };
  }
  return undefined;
}

/** package.json with only the revsync pin of `section` changed or added, the rest of the text as it
 *  was (its indentation, its one-line objects): the value replaced, or the entry put first in the
 *  section, or the section added last. Each candidate edit is kept only if the file then parses to
 *  exactly `wanted`; undefined when none does. */
export function editPin(current: string, section: string, want: string, wanted: unknown): string | undefined {
  const ok = (text: string): boolean => {
    try {
      return isDeepStrictEqual(JSON.parse(text), wanted);
    } catch {
      return false;
    }
  };
  const value = JSON.stringify(want);
  const unit = /^[ \t]+(?=")/m.exec(current)?.[0] ?? "  ";
  const candidates: string[] = [];
  // The value of an existing pin.
  for (const m of current.matchAll(/("revsync"\s*:\s*)"(?:[^"\\]|\\.)*"/g))
    candidates.push(current.slice(0, m.index) + m[1] + value + current.slice(m.index + m[0].length));
  // A new entry, first in the section, spaced as the entry after it.
  for (const m of current.matchAll(new RegExp(`"${section}"\\s*:\\s*\\{(\\s*)`, "g"))) {
    const at = m.index + m[0].length;
    const ws = m[1] ?? "";
    if (current[at] !== "}" || !ws.includes("\n")) {
      // Before the first entry, spaced as it is; in an empty one-line section, between the braces.
      const insert = current[at] === "}" ? `"revsync": ${value}${ws}` : `"revsync": ${value},${ws}`;
      candidates.push(current.slice(0, at) + insert + current.slice(at));
    } else {
      const keyIndent = /[ \t]*$/.exec(current.slice(0, m.index))?.[0] ?? "";
      candidates.push(`${current.slice(0, at - ws.length)}\n${keyIndent}${unit}"revsync": ${value}\n${keyIndent}${current.slice(at)}`);
    }
  }
  // A new section, last in the file.
  const end = current.lastIndexOf("}");
  if (end > 0) {
    const before = current.slice(0, end).trimEnd();
    const comma = before.endsWith("{") ? "" : ",";
    const multiline = before.includes("\n");
    const added = multiline
      ? `${comma}\n${unit}"${section}": {\n${unit}${unit}"revsync": ${value}\n${unit}}\n`
      : `${comma} "${section}": { "revsync": ${value} }`;
    candidates.push(`${before}${added}${multiline ? "" : current.slice(before.length, end)}${current.slice(end)}`);
  }
  return candidates.find(ok);
}

function freshConfig(env: string, prefix: string, flags: ScaffoldOptions): string {
  return [
    `# yaml-language-server: $schema=${REPO_SCHEMAS_DIR}/${CONFIG_SCHEMA}`,
    "# Written by revsync init. URLs may come from the environment (CI variables); credentials only from",
    "# REVSYNC_CLIENT_ID, REVSYNC_CLIENT_SECRET, REVSYNC_USERNAME and REVSYNC_PASSWORD (or REVSYNC_TOKEN),",
    `# or the environment's own, which win: ${credentialPrefix(env)}_CLIENT_ID, ${credentialPrefix(env)}_CLIENT_SECRET, …`,
    "version: 1",
    "policies: policies",
    "environments:",
    `  ${env}:`,
    `    base_url: ${flags.baseUrl ?? `\${${prefix}_BASE_URL}`}`,
    `    # auth_url: \${${prefix}_AUTH_URL}   # when the token endpoint is on another host (default: base_url)`,
    `    realm: ${flags.realm ? JSON.stringify(flags.realm) : `\${${prefix}_REALM}`}`,
    "    vars: {}                      # ${NAME} values for policy files",
    "",
  ].join("\n");
}
