import { createHash } from "node:crypto";
import fc from "fast-check";
import { binaryString } from "./testing/arbitraries.js";
import { propertyRuns } from "./testing/property-runs.js";
import { canonicalize as secondJcs } from "json-canonicalize";
import { describe, expect, it } from "vitest";
import { canonicalJson, sameJson } from "./canonical-json.js";
import { recordHash } from "./evidence/record.js";
import { planChecksum, type Plan } from "./plan/model.js";

// revsync's canonical JSON is the `canonicalize` library's; these tests hold it, the plan checksum and the
// evidence hash to a second, independent RFC 8785 implementation (json-canonicalize), `__proto__` keys
// included: what an auditor's own JCS library computes is what revsync computes.

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

describe("canonical JSON (RFC 8785)", () => {
  it("sorts keys by UTF-16 code units at every depth, keeps array order, leaves out undefined, no whitespace", () => {
    expect(canonicalJson({ b: [3, { z: 1, a: null }], a: "é\n", "\u20ac": 1, "\ud83d\ude00": 2, c: undefined, B: true })).toBe(
      '{"B":true,"a":"é\\n","b":[3,{"a":null,"z":1}],"€":1,"😀":2}',
    );
    expect(canonicalJson([1e21, 0.1, -0, 100])).toBe("[1e+21,0.1,0,100]");
  });

  it("a key named __proto__ is a key: its content is in the text, as JSON.parse made it", () => {
    const parsed = JSON.parse('{"b":1,"__proto__":{"approval":"prompt","service_user":"mallory"}}') as unknown;
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"approval":"prompt","service_user":"mallory"},"b":1}');
    expect(sameJson(parsed, { b: 1 })).toBe(false);
  });

  it("what RFC 8785 cannot write is an error that says where, never a text of its own", () => {
    expect(() => canonicalJson({ x: [1, Number.NaN] })).toThrow("canonical JSON (RFC 8785) has no form for the number NaN at /x/1");
    expect(() => canonicalJson({ "a/b": { y: "half \ud800 pair" } })).toThrow(/a text with a lone surrogate .* at \/a~1b\/y$/);
    expect(() => canonicalJson(undefined)).toThrow(/no form for undefined/);
  });

  it("is what a second JCS implementation writes, for awkward keys and numbers", () => {
    const awkward = JSON.parse(
      JSON.stringify({
        "\u20ac": [1e21, 1e-7, 0.1 + 0.2, -0, 2 ** 53, 123456789.123, 5e-324, 1.7976931348623157e308],
        "\r": "line\u2028break \u202e \u001b[31m",
        "\ud83d\ude00": { "\ufb33": null, "\u00e9": true, e: false },
        nested: [{ b: 1, a: [{ d: 4, c: 3 }] }, "x"],
        "10": "ten",
        "9": "nine",
        "": "empty",
      }).replace('"nested"', '"__proto__":{"z":[1,{"__proto__":2}]},"nested"'),
    ) as unknown;
    expect(canonicalJson(awkward)).toBe(secondJcs(awkward));
    expect(canonicalJson(awkward)).toContain('"__proto__":{"z":[1,{"__proto__":2}]}');
  });

  it("for any JSON value, `__proto__` keys among them, is what a second JCS implementation writes", () => {
    const key = fc.oneof(fc.constant("__proto__"), fc.constant("constructor"), binaryString({ maxLength: 6 }));
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small", maxDepth: 3 },
        binaryString({ maxLength: 12 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 4 }),
        // Object.fromEntries makes every key an own property, `__proto__` too, as JSON.parse does.
        fc.array(fc.tuple(key, tie("value")), { maxLength: 4 }).map((entries) => Object.fromEntries(entries) as unknown),
      ),
    }));
    fc.assert(
      // A boolean, not expect(): fast-check names the value that differs, at a fraction of the cost.
      fc.property(value, (v) => canonicalJson(v) === secondJcs(v)),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });
});

describe("the plan checksum and the evidence hash, recomputed by a second JCS implementation", () => {
  it("a saved plan's checksum is the sha256 of its canonical JSON, `__proto__` keys included", () => {
    const text = JSON.stringify({
      format_version: "1",
      environment: "production",
      created_at: "2026-11-24T06:00:00.000Z",
      base_url: "https://ras.example.com",
      auth_url: "https://auth.example.com",
      realm: "acme",
      user: "alice",
      targets: [],
      changes: [
        {
          address: "ssp/Legacy <!-- retired",
          action: "not_in_git",
          before: { when: [{ field: "product_id", operator: "in", values: ["A|B", "`x`"] }] },
          after: null,
          diff: [],
          version_id: "v1",
          last_modified_on: 1764000000,
          reason: "the service holds a policy git does not",
        },
      ],
      summary: { create: 0, update: 0, review: 0, approve: 0, blocked: 0, not_in_git: 1, unsupported: 0 },
      notes: ["\u202etxt.exe"],
    });
    // The service's answer named a field `__proto__`: JSON.parse keeps it as a key of the plan.
    const plan = JSON.parse(text.replace('"when":', '"__proto__":{"hidden":"content"},"when":')) as Plan;
    const { checksum: _none, ...rest } = plan as Plan & { checksum?: string };
    const expected = sha256(secondJcs({ revsync_plan_checksum: 2, plan: rest }));
    expect(planChecksum(plan)).toBe(expected);
    // The content under `__proto__` is covered: changing it changes the checksum.
    const edited = JSON.parse(JSON.stringify(plan).replace('"hidden":"content"', '"hidden":"other"')) as Plan;
    expect(planChecksum(edited)).not.toBe(expected);
  });

  it("an evidence record's hash is the sha256 of its canonical JSON without `hash`, `__proto__` keys included", () => {
    const record = JSON.parse(
      '{"format_version":"1","kind":"revsync-apply-evidence","sequence":2,"environment":"production","__proto__":{"service_user":"mallory"},' +
        '"changes":[{"address":"ssp/x","diff":[{"path":"when","before":{"__proto__":[1]},"after":null}]}],"prev":"sha256:00","hash":"sha256:ff"}',
    ) as Record<string, unknown>;
    const { hash: _own, ...content } = record;
    expect(recordHash(record)).toBe(sha256(secondJcs(content)));
    expect(secondJcs(content)).toContain('"__proto__":{"service_user":"mallory"}');
  });
});
