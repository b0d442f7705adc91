import { describe, expect, it } from "vitest";
import type { RevsyncConfig } from "../schema/generated/policy.js";
import { promotionProblems } from "./promotion.js";
import { readYamlText } from "./yaml-source.js";

/** revsync.yaml's environments, each naming its source (or none). */
function problems(sources: Record<string, string | undefined>): string[] {
  const text = `environments:\n${Object.entries(sources)
    .map(([n, from]) => `  ${n}:\n    base_url: x\n${from ? `    promote_from: ${from}\n` : ""}`)
    .join("")}`;
  const [src] = readYamlText(text, "revsync.yaml", []);
  if (!src) throw new Error("no document");
  return promotionProblems(src.value as RevsyncConfig, src, "revsync.yaml").map((d) => `${d.line}:${d.column} ${d.message}`);
}

describe("promote_from in revsync.yaml", () => {
  it("takes a chain; names an unknown source (with the nearest name), an environment of its own and a cycle once, at promote_from", () => {
    expect(problems({ sandbox: undefined, uat: "sandbox", production: "uat" })).toEqual([]);
    expect(problems({ sandbox: undefined, production: "sandbx" })).toEqual([
      '6:19 environments.production.promote_from: "sandbx" is not an environment of revsync.yaml (did you mean sandbox?); it has: sandbox, production',
    ]);
    expect(problems({ production: "production" })[0]).toMatch(
      /^4:19 environments\.production\.promote_from: an environment cannot receive its changes from itself/,
    );
    expect(problems({ a: "c", b: "a", c: "b", d: "c" })).toEqual([
      "4:19 environments.a.promote_from: promotion goes round in a cycle (a -> c -> b -> a): one environment of a chain must receive its changes from none",
    ]);
  });
});
