/** promote_from of revsync.yaml's environments as written: each names another environment of the file,
 *  and following them never comes back to where it started (sandbox, then uat, then production is a
 *  chain; production from uat from production is a cycle). Checked offline, each problem at its place in
 *  revsync.yaml, as validate finds every other. What promotion does with it is src/promotion/. */
import { nearest } from "../did-you-mean.js";
import type { EnvironmentConfig, RevsyncConfig } from "../schema/generated/policy.js";
import type { Diagnostic } from "./diagnostics.js";
import { at } from "./schema-diagnostics.js";
import type { SourceDoc } from "./yaml-source.js";

/** The environment `name` receives its changes from (promote_from), or undefined. */
export function promoteFromOf(config: Pick<RevsyncConfig, "environments">, name: string): string | undefined {
  return (config.environments[name] as EnvironmentConfig | null | undefined)?.promote_from;
}

/** An unknown source, an environment that is its own source, and a cycle: errors at promote_from. */
export function promotionProblems(config: RevsyncConfig, doc: SourceDoc, file: string): Diagnostic[] {
  const names = Object.keys(config.environments ?? {});
  const problems: Diagnostic[] = [];
  const say = (name: string, message: string): void => {
    problems.push({
      file,
      ...at(doc, `/environments/${name}/promote_from`),
      severity: "error",
      rule: "promotion",
      message: `environments.${name}.promote_from: ${message}`,
    });
  };
  const cycles = new Set<string>();
  for (const name of names) {
    const from = promoteFromOf(config, name);
    if (from === undefined) continue;
    if (from === name) {
      say(name, "an environment cannot receive its changes from itself: name the environment they are tried in first (sandbox, say)");
      continue;
    }
    if (!names.includes(from)) {
      const near = nearest(from, names, { max: 1 })[0];
      say(name, `${JSON.stringify(from)} is not an environment of revsync.yaml${near ? ` (did you mean ${near}?)` : ""}; it has: ${names.join(", ")}`);
      continue;
    }
    // Walk the sources: coming back to `name` is a cycle, said once, at the first environment on it.
    const seen = [name];
    for (let step: string | undefined = from; step !== undefined; step = promoteFromOf(config, step)) {
      if (step === name) {
        if (!cycles.has(name))
          say(name, `promotion goes round in a cycle (${[...seen, name].join(" -> ")}): one environment of a chain must receive its changes from none`);
        seen.forEach((n) => cycles.add(n));
        break;
      }
      if (seen.includes(step) || !names.includes(step)) break;
      seen.push(step);
    }
  }
  return problems;
}
