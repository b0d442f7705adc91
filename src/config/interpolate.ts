import { isCredentialVariable } from "../api/credentials.js";
import { nearest } from "../did-you-mean.js";
import { readNumber } from "../number.js";

/** ${VAR} in revsync.yaml and in policy files, with one set of rules:
 *  - `${NAME}` (letters, digits, _) in a policy file (and a policy test file) takes the environment's
 *    `vars` of revsync.yaml, and nothing else: a process variable reaches a policy file only through a
 *    `vars:` entry that names it (`vars: { floor: ${HW_FLOOR} }`), so what a policy file can read is
 *    what revsync.yaml declares;
 *  - revsync.yaml's own values (URLs, realm, `vars:` entries) take the process environment;
 *  - revsync's own credential variables (isCredentialVariable: the unprefixed ones, every environment's
 *    REVSYNC_<ENV>_ ones and those of a prefix revsync.yaml names) are read by no file: naming one is a
 *    problem;
 *  - `$${` writes a literal `${`, and `literalText` is how text from outside (the service) is written so
 *    that reading it gives the same text back;
 *  - a value that is exactly one `${NAME}` takes the variable's own type (a number in `vars` stays a
 *    number); one whose text comes from the process environment is text, which the schema may turn into
 *    a number or a boolean where it wants one (see coerceEnvText);
 *  - an undefined or malformed variable is a problem, with "did you mean" for a name one edit away. */
export type VarValue = string | number | boolean;

export interface VarSource {
  vars: Record<string, VarValue>;
  /** The process environment. Read only where `process` is set (revsync.yaml's own values); for a
   *  policy file it only lets a problem say how to declare a variable the environment sets. */
  env: NodeJS.ProcessEnv;
  process?: boolean;
  /** The `vars` whose value is the whole text of a process variable (typed as one read from there). */
  envTexts?: ReadonlySet<string>;
  /** Where an undefined variable should be defined, when the default words do not fit. */
  hint?: string;
  /** The vars whose text in revsync.yaml reads the process environment: that text (`${HW_FLOOR}`), so a
   *  problem with a value can name where it came from. */
  origins?: ReadonlyMap<string, string>;
  /** The credential prefixes revsync.yaml names (credentials.prefix): their variables are credentials too. */
  credentialPrefixes?: readonly string[];
  /** The vars whose own value could not be filled (reported where revsync.yaml sets them): a value
   *  reading one is unknown, and says nothing more. */
  unresolved?: ReadonlySet<string>;
}

export interface Interpolated {
  value: VarValue;
  problems: string[];
  /** Set when the whole value came from the process environment: its text, for typed fields. */
  envText?: string;
  /** The variables the value was filled from (vars of the environment, or process variables). */
  read?: string[];
  /** The value reads a var whose own value could not be filled: already reported, nothing to add. */
  unresolved?: boolean;
}

const VAR = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\{([^}]*)\}?/g;
const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

const own = (o: object, name: string): boolean => Object.prototype.hasOwnProperty.call(o, name);

function lookup(src: VarSource, name: string): { value: VarValue; fromEnv: boolean } | undefined {
  // Own properties only: `${constructor}` is no variable, whatever Object.prototype holds.
  if (own(src.vars, name)) return { value: src.vars[name] as VarValue, fromEnv: !!src.envTexts?.has(name) };
  if (!src.process) return undefined;
  const e = own(src.env, name) ? src.env[name] : undefined;
  return typeof e !== "string" ? undefined : { value: e, fromEnv: true };
}

function undefinedProblem(name: string, src: VarSource): string {
  if (!src.process && typeof (own(src.env, name) ? src.env[name] : undefined) === "string") {
    return `\${${name}} is not one of the environment's vars: a policy file reads only the vars revsync.yaml declares, not the process environment; to read the process variable ${name}, declare it under the environment's vars in revsync.yaml (${name}: \${${name}})`;
  }
  const names = [...Object.keys(src.vars), ...(src.process ? Object.keys(src.env) : [])];
  const near = nearest(name, names, { max: 1, within: 1 }).filter((n) => n !== name);
  const mean = near.length ? ` (did you mean \${${near[0]}}?)` : "";
  return `undefined variable \${${name}}${mean}: ${src.hint ?? (src.process ? "set it in the process environment" : "define it under the environment's vars in revsync.yaml")}`;
}

/** Why a file may not name one of revsync's sign-in variables. */
export const signInProblem = (name: string): string =>
  `\${${name}} is one of revsync's own sign-in variables, which no file may read: credentials go only to the service's sign-in, never into a value revsync shows or sends`;

export function interpolateString(text: string, src: VarSource): Interpolated {
  if (!text.includes("$")) return { value: text, problems: [] };
  const whole = WHOLE.exec(text);
  const wholeName = whole?.[1] ?? "";
  const credential = (name: string): boolean => isCredentialVariable(name, src.credentialPrefixes);
  if (whole && !credential(wholeName) && !src.unresolved?.has(wholeName)) {
    const got = lookup(src, wholeName);
    if (got) return { value: got.value, problems: [], read: [wholeName], ...(got.fromEnv ? { envText: String(got.value) } : {}) };
  }
  const problems: string[] = [];
  const read: string[] = [];
  let unresolved = false;
  const value = text.replace(VAR, (m: string, name: string | undefined) => {
    if (m === "$${") return "${";
    if (name === undefined) {
      problems.push(`malformed variable ${JSON.stringify(m)}: use \${NAME} with letters, digits and _ (or $\${ for a literal \${)`);
      return m;
    }
    if (credential(name)) {
      problems.push(signInProblem(name));
      return m;
    }
    // Its own problem is said where revsync.yaml sets it: one problem, said once.
    if (src.unresolved?.has(name)) {
      unresolved = true;
      return m;
    }
    const got = lookup(src, name);
    if (!got) {
      problems.push(undefinedProblem(name, src));
      return m;
    }
    read.push(name);
    return String(got.value);
  });
  return { value, problems, ...(read.length ? { read } : {}), ...(unresolved ? { unresolved } : {}) };
}

/** Where a value filled from variables came from, in words for a problem with it: "from ${hw_floor},
 *  which the environment's vars in revsync.yaml fill from the process variable HW_FLOOR". */
export function variableWords(names: readonly string[], src: VarSource): string {
  const each = [...new Set(names)].map((name) => {
    const origin = src.origins?.get(name);
    const env = origin === undefined ? [] : variablesIn(origin);
    if (!own(src.vars, name)) return `from the process variable ${name}`;
    if (!env.length) return `from \${${name}} of the environment's vars in revsync.yaml`;
    const whole = WHOLE.test(origin ?? "") ? `the process variable ${env[0]}` : `${origin} (process variables ${env.join(", ")})`;
    return `from \${${name}}, which the environment's vars in revsync.yaml fill from ${whole}`;
  });
  return each.join("; ");
}

/** The names of the variables a text reads (each `${NAME}` the rules above would fill; `$${` is none). */
export function variablesIn(text: string): string[] {
  return [...text.matchAll(VAR)].flatMap((m) => (m[0] !== "$${" && m[1] !== undefined ? [m[1]] : []));
}

/** Text from outside (what the service holds), as a file writes it so that reading the file gives
 *  exactly this text back, never a variable: each `${` becomes `$${`. Reading turns `$${` into `${`
 *  and a `${` always follows the `$` added here, so nothing else of the text changes. */
export function literalText(text: string): string {
  // A function, not a replacement string: in one, `$$` would mean a single `$`.
  return text.replaceAll("${", () => "$${");
}

/** A value from outside as a file writes it: literalText for every string in it (keys are never read
 *  for variables, and stay). */
export function literalValue<T>(value: T): T {
  if (typeof value === "string") return literalText(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => literalValue(v)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, literalValue(v)])) as T;
  }
  return value;
}

/** A whole-value variable's text from the process environment, as the type the schema wants there:
 *  a number for integer/number fields, a boolean for boolean fields, when the text is such a literal. */
export function coerceEnvText(text: string, type: unknown): VarValue {
  const types = Array.isArray(type) ? type : [type];
  // The one number rule (src/number.ts): text that is not an exact number stays text, which the schema
  // then refuses at the field.
  const n = readNumber(text);
  if (n.ok && (types.includes("number") || (types.includes("integer") && Number.isInteger(n.value)))) return n.value;
  if (types.includes("boolean") && (text === "true" || text === "false")) return text === "true";
  return text;
}
