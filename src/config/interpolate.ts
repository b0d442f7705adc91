import { nearest } from "../did-you-mean.js";
import { readNumber } from "../number.js";

/** ${VAR} in revsync.yaml and in policy files, with one set of rules:
 *  - `${NAME}` (letters, digits, _) takes the environment's `vars`, then the process environment;
 *  - `$${` writes a literal `${`;
 *  - a value that is exactly one `${NAME}` takes the variable's own type (a number in `vars` stays a
 *    number); one from the process environment is text, which the schema may turn into a number or a
 *    boolean where it wants one (see coerceEnvText);
 *  - an undefined or malformed variable is a problem, with "did you mean" for a name one edit away. */
export type VarValue = string | number | boolean;

export interface VarSource {
  vars: Record<string, VarValue>;
  env: NodeJS.ProcessEnv;
}

export interface Interpolated {
  value: VarValue;
  problems: string[];
  /** Set when the whole value came from the process environment: its text, for typed fields. */
  envText?: string;
}

const VAR = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\{([^}]*)\}?/g;
const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

function lookup(src: VarSource, name: string): { value: VarValue; fromEnv: boolean } | undefined {
  if (Object.prototype.hasOwnProperty.call(src.vars, name)) return { value: src.vars[name] as VarValue, fromEnv: false };
  // Own properties only: `${constructor}` is no variable, whatever Object.prototype holds.
  const e = Object.prototype.hasOwnProperty.call(src.env, name) ? src.env[name] : undefined;
  return typeof e !== "string" ? undefined : { value: e, fromEnv: true };
}

function undefinedProblem(name: string, src: VarSource): string {
  const names = [...Object.keys(src.vars), ...Object.keys(src.env)];
  const near = nearest(name, names, { max: 1, within: 1 }).filter((n) => n !== name);
  const mean = near.length ? ` (did you mean \${${near[0]}}?)` : "";
  return `undefined variable \${${name}}${mean}: define it under the environment's vars in revsync.yaml or in the process environment`;
}

export function interpolateString(text: string, src: VarSource): Interpolated {
  if (!text.includes("$")) return { value: text, problems: [] };
  const whole = WHOLE.exec(text);
  if (whole) {
    const got = lookup(src, whole[1] ?? "");
    if (got) return { value: got.value, problems: [], ...(got.fromEnv ? { envText: String(got.value) } : {}) };
  }
  const problems: string[] = [];
  const value = text.replace(VAR, (m: string, name: string | undefined) => {
    if (m === "$${") return "${";
    if (name === undefined) {
      problems.push(`malformed variable ${JSON.stringify(m)}: use \${NAME} with letters, digits and _ (or $\${ for a literal \${)`);
      return m;
    }
    const got = lookup(src, name);
    if (!got) {
      problems.push(undefinedProblem(name, src));
      return m;
    }
    return String(got.value);
  });
  return { value, problems };
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
