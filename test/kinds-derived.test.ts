import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Registry } from "../src/kinds/kind.js";
import { KINDS } from "../src/kinds/registry.js";
import { payloadDefinition, withKinds } from "../src/plan/schema.js";
import { builtKinds } from "../src/testing/builders.js";
import { ROOT } from "../src/testing/helpers.js";
import { greeting } from "./fixtures/toy-kind/kind.js";

// Every list of the kinds outside their folders derives from the registry (npm run gen:types writes the
// generated ones from it) or is checked against it here: a kind of the registry missing from any of them
// is named. The toy kind (test/fixtures/toy-kind), added to the registry here alone, is missing from every
// list that holds only the registry's shipped kinds: the check sees it.
const json = (path: string): any => JSON.parse(readFileSync(join(ROOT, path), "utf8"));
const text = (path: string): string => readFileSync(join(ROOT, path), "utf8");
const validators = createRequire(import.meta.url)("../schemas/generated/validators.cjs") as Record<string, unknown>;
/** The precompiled validator's name of a schema file (src/schema/ajv.ts). */
const standaloneName = (file: string): string =>
  file
    .replace(/^.*\//, "")
    .replace(/\.schema\.json$/, "")
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The first paragraph of a markdown section. */
const paragraphUnder = (page: string, heading: string): string => (page.split(`\n${heading}\n\n`)[1] ?? "").split("\n\n")[0] ?? "";

/** Where each kind of `kinds` is missing, one line per list. */
function missing(kinds: Registry): string[] {
  const out: string[] = [];
  const plan = json("schemas/plan.schema.json");
  const address = new RegExp(plan.definitions.Change.properties.address.pattern);
  const policyFile = json("schemas/policy-file.schema.json");
  const api = json("schemas/api.schema.json");
  const generated = text("src/schema/generated/policy.ts");
  const addresses = paragraphUnder(text("docs/concepts.md"), "## Addresses");
  const architecture = text("docs/architecture.md");
  for (const k of kinds) {
    const named = (list: string) => out.push(`${k.name}: ${list}`);
    if (!address.test(`${k.name}/x`)) named("plan.schema.json: the address pattern");
    for (const p of Object.keys(k.payloads)) if (!plan.definitions[payloadDefinition(k.fileKind, p)]) named(`plan.schema.json: its payload ${p}`);
    if (!policyFile.properties.kind.anyOf[0].enum.includes(k.fileKind) || !policyFile.definitions[k.fileKind]) named("policy-file.schema.json");
    if (typeof k.schema === "string") {
      if (!validators[standaloneName(k.schema)]) named("the precompiled validators");
      if (!generated.includes(`export interface ${json(`schemas/${k.schema}`).title} `)) named("the generated types");
    }
    const own = `src/kinds/${k.name}/api.schema.json`;
    if (!existsSync(join(ROOT, own))) named(`its answers' schema (${own})`);
    else for (const d of Object.keys(json(own).definitions)) if (!api.definitions[d]?.$comment?.includes(own)) named(`api.schema.json: ${d}`);
    if (!builtKinds().includes(k.name)) named("the test builders (src/testing/builders.ts)");
    for (const form of k.addressForms) if (!addresses.includes(`\`${form}\``)) named(`docs/concepts.md, Addresses: ${form}`);
    if (!architecture.includes(`(\`${k.name}/\``)) named("docs/architecture.md: the shipped kinds");
  }
  return out;
}

describe("every list of the kinds derives from the registry", () => {
  it("each kind of the registry is in every derived list, and the plan's schema is the one the registry makes", () => {
    expect(missing(KINDS)).toEqual([]);
    expect(withKinds(json("schemas/plan.schema.json"), KINDS)).toEqual(json("schemas/plan.schema.json"));
  });

  it("a kind the lists do not hold is named in each (the toy kind, given to the registry here alone)", () => {
    expect(missing([...KINDS, greeting])).toEqual([
      "greeting: plan.schema.json: the address pattern",
      "greeting: plan.schema.json: its payload greeting",
      "greeting: policy-file.schema.json",
      "greeting: its answers' schema (src/kinds/greeting/api.schema.json)",
      "greeting: the test builders (src/testing/builders.ts)",
      "greeting: docs/concepts.md, Addresses: greeting/<name>",
      "greeting: docs/architecture.md: the shipped kinds",
    ]);
  });

  it("the docs name the shipped kinds' addresses, and no address of a kind the registry does not hold", () => {
    const addresses = paragraphUnder(text("docs/concepts.md"), "## Addresses");
    const shown = [...addresses.matchAll(/`([a-z-]+\/<[^`]*)`/g)].map((m) => m[1]);
    expect(shown).toEqual(KINDS.flatMap((k) => k.addressForms));
  });
});
