import { LineCounter, parseDocument } from "yaml";
import { describe, expect, it } from "vitest";
import type { Emit, PolicyDoc } from "./rules.js";
import { duplicateNames } from "./rules.js";
import { duplicateHierarchy, floorNotAboveCeiling, formulaNeedsExpression } from "../kinds/ssp/files.js";
import { tenantFieldsUpdatable as tenantRule } from "../kinds/tenant-configuration/files.js";
import { propertyRuns } from "../testing/property-runs.js";

const tenantFieldsUpdatable = (docs: PolicyDoc[], emit: Parameters<typeof tenantRule>[1]["emit"]): void => tenantRule(docs, { emit });

/** An in-memory policy document, as the loader would produce it. */
function doc(text: string, file = "p.yaml"): PolicyDoc {
  const lines = new LineCounter();
  const d = parseDocument(text, { lineCounter: lines });
  const value = d.toJS() as { kind: string };
  return { src: { file, index: 0, doc: d, lines, value }, absFile: `/repo/${file}`, kind: value.kind };
}

const ssp = (name: string, spec: string): string => `kind: SspPolicy\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

function run(rule: (docs: PolicyDoc[], emit: Emit) => void, docs: PolicyDoc[], severities: unknown[] = []) {
  const out: { file: string; pointer: string; message: string }[] = [];
  rule(docs, (d, pointer, message, opts) => {
    out.push({ file: d.src.file, pointer, message });
    severities.push(opts?.severity ?? "error");
  });
  return out;
}

describe("semantic rules", () => {
  it("duplicate policy names, per kind", () => {
    const out = run(duplicateNames, [
      doc(ssp("A", "  hierarchy_no: 1\n"), "a.yaml"),
      doc(ssp("A", "  hierarchy_no: 2\n"), "b.yaml"),
      doc("kind: TenantConfiguration\nmetadata:\n  name: A\n", "c.yaml"),
    ]);
    expect(out).toEqual([
      { file: "b.yaml", pointer: "/metadata/name", message: expect.stringMatching(/duplicate SspPolicy name "A": also defined at a\.yaml:3/) },
    ]);
  });

  it("duplicate hierarchy_no of two active policies: a warning (the service holds such pairs), at the second", () => {
    const severities: unknown[] = [];
    const out = run(duplicateHierarchy, [doc(ssp("A", "  hierarchy_no: 5\n")), doc(ssp("B", "  hierarchy_no: 5\n"), "b.yaml")], severities);
    expect(out).toEqual([
      {
        file: "b.yaml",
        pointer: "/spec/hierarchy_no",
        message: expect.stringMatching(/^hierarchy_no 5 is also held by the active policy "A" \(p\.yaml\): the interface does not say which/),
      },
    ]);
    expect(severities).toEqual(["warning"]);
    expect(run(duplicateHierarchy, [doc(ssp("A", "  hierarchy_no: 5\n")), doc(ssp("B", "  hierarchy_no: 6\n"))])).toHaveLength(0);
    // An inactive policy prices nothing: it shares no place.
    expect(run(duplicateHierarchy, [doc(ssp("A", "  hierarchy_no: 5\n")), doc(ssp("B", "  hierarchy_no: 5\n  active: false\n"))])).toHaveLength(0);
  });

  it("floor_percentage not above ceiling_percentage", () => {
    expect(run(floorNotAboveCeiling, [doc(ssp("A", "  floor_percentage: 90\n  ceiling_percentage: 80\n"))])[0]?.pointer).toBe("/spec/floor_percentage");
    expect(run(floorNotAboveCeiling, [doc(ssp("A", "  floor_percentage: 90\n  ceiling_percentage: 90\n"))])).toHaveLength(0);
  });

  it("a formula policy needs an expression", () => {
    expect(run(formulaNeedsExpression, [doc(ssp("A", "  method: formula\n  expression: '  '\n"))])).toHaveLength(1);
    expect(run(formulaNeedsExpression, [doc(ssp("A", "  method: formula\n  expression: x * 2\n"))])).toHaveLength(0);
    expect(run(formulaNeedsExpression, [doc(ssp("A", "  method: upload\n"))])).toHaveLength(0);
  });

  it("tenant fields the update body cannot carry, and the delimiter's symbols", () => {
    const tc = (spec: string) => doc(`kind: TenantConfiguration\nmetadata:\n  name: T\nspec:\n${spec}`);
    const out = run(tenantFieldsUpdatable, [tc("  ingest_hold: true\n  carves_allocation: true\n")]);
    expect(out).toHaveLength(1);
    expect(out[0]?.message).toMatch(/^ingest_hold cannot be changed: .*Updatable fields: ar_accounting, /);
    expect(run(tenantFieldsUpdatable, [tc("  account_segment_delimiter: '@'\n")])[0]?.message).toMatch(/must be one of/);
    expect(run(tenantFieldsUpdatable, [tc("  account_segment_delimiter: '|'\n")])[0]?.message).toMatch(/cannot be changed/);
  });
});

describe("the schemas refuse what the rules refuse, and revsync says each problem once", () => {
  it("a name's pattern in the schemas holds exactly the rule of unsafeName", async () => {
    const fc = (await import("fast-check")).default;
    const { binaryString } = await import("../testing/arbitraries.js");
    const { readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { PACKAGE_ROOT } = await import("../package-root.js");
    const { unsafeName } = await import("./rules.js");
    const schema = JSON.parse(readFileSync(join(PACKAGE_ROOT, "schemas", "policy", "ssp-policy.schema.json"), "utf8"));
    const tc = JSON.parse(readFileSync(join(PACKAGE_ROOT, "schemas", "policy", "tenant-configuration.schema.json"), "utf8"));
    const patterns = [
      schema.properties.metadata.properties.name.pattern,
      schema.properties.batches.items.properties.name.pattern,
      tc.definitions.Metadata.properties.name.pattern,
    ];
    expect(new Set(patterns).size).toBe(1);
    const pattern = new RegExp(patterns[0], "u");
    const names = fc.oneof(
      fc.constantFrom(".", "..", "...", " ", "\u00a0", "\u3000 ", "\ufeff", "a\u0001", "a\n", "\u007f", "\u0085", "Hardware SSP", ". .", "a/..", "\t"),
      binaryString({ minLength: 1, maxLength: 4 }),
      fc.array(fc.constantFrom(".", " ", "\u00a0", "\n", "a", "\u2028", "\u200b"), { minLength: 1, maxLength: 3 }).map((p) => p.join("")),
    );
    fc.assert(
      fc.property(names, (name) => {
        expect([name, pattern.test(name)]).toEqual([name, unsafeName(name) === undefined]);
      }),
      propertyRuns({ quick: 500, deep: 5000 }),
    );
  });
});
