import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { factTable } from "../src/guardrails/facts.js";
import { KINDS } from "../src/kinds/registry.js";
import { ROOT } from "../src/testing/helpers.js";

// docs/guardrails.md is held to the code: its table of facts is the one table the rules read, and each
// recipe is the example repo's, which revsync test runs (test/guardrails.e2e.test.ts).
const page = readFileSync(join(ROOT, "docs", "guardrails.md"), "utf8");

describe("docs/guardrails.md", () => {
  it("lists every fact, in the table's order, with its kind and words", () => {
    const section = page.slice(page.indexOf("## Facts"), page.indexOf("## Freeze windows"));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (\w+) \| (.+) \|$/gm)].map((m) => [m[1], m[2], m[3]]);
    expect(rows).toEqual(factTable(KINDS).map((f) => [f.name, f.kind, f.about]));
  });

  it("each recipe is written as examples/guardrails/revsync.yaml holds it", () => {
    const example = readFileSync(join(ROOT, "examples", "guardrails", "revsync.yaml"), "utf8");
    const recipes = page.slice(page.indexOf("## Recipes"), page.indexOf("## The same with conftest"));
    const blocks = [...recipes.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    expect(blocks.length).toBe(5);
    for (const b of blocks) expect(example).toContain(b);
  });
});
