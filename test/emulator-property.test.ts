import fc from "fast-check";
import { propertyRuns, runsOf } from "../src/testing/property-runs.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, startEmu, token, updateBody, type Emu, sspCreateBody } from "../src/testing/helpers.js";

// Property: a malformed or invalid body on any write endpoint gets a 4xx (never a 5xx) and leaves
// the state exactly as it was.
let emu: Emu;
let tok: string;
let tc: any;

beforeAll(async () => {
  emu = await startEmu();
  tok = await token(emu.url);
  tc = (await api(emu.url, tok, "GET", "/apis/policy-sets/v1/policy/tenant-configurations")).body[0];
});
afterAll(async () => emu.close());

async function snapshot(): Promise<string> {
  const s: any = await emu.admin("GET", "state");
  delete s.tokens;
  return JSON.stringify(s);
}

const kindOf = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v);
const anyValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.string(),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
);

function paths(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (v && typeof v === "object") {
    const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
    return [prefix, ...entries.flatMap(([k, x]) => paths(x, [...prefix, k]))];
  }
  return [prefix];
}

/** A valid body with one place broken: a field deleted or given a value of another type. */
function broken(valid: unknown): fc.Arbitrary<unknown> {
  const all = paths(valid).filter((p) => p.length > 0);
  return fc
    .tuple(fc.constantFrom(...all), fc.boolean(), anyValue)
    .filter(([p, del, value]) => {
      let orig: any = valid;
      for (const k of p) orig = orig[k];
      return del
        ? !Array.isArray(valid)
        : kindOf(value) !== kindOf(orig) && !(kindOf(orig) === "integer" && kindOf(value) === "number" && Number.isInteger(value));
    })
    .map(([p, del, value]) => {
      const copy = structuredClone(valid) as any;
      let node = copy;
      for (const k of p.slice(0, -1)) node = node[k];
      const last = p[p.length - 1] as string | number;
      if (del && !Array.isArray(node)) delete node[last];
      else if (del && Array.isArray(node)) node.splice(Number(last), 1, { broken: true });
      else node[last] = value;
      return copy;
    });
}

function bodies(valid: unknown): fc.Arbitrary<{ raw?: string; json?: unknown }> {
  return fc.oneof(
    { weight: 5, arbitrary: broken(valid).map((json) => ({ json })) },
    {
      weight: 2,
      arbitrary: fc
        .jsonValue()
        .filter((v) => !v || typeof v !== "object" || Object.keys(v as object).length < 3)
        .map((json) => ({ json })),
    },
    {
      weight: 2,
      arbitrary: fc
        .string({ maxLength: 40 })
        .filter((s) => {
          try {
            JSON.parse(s);
            return false;
          } catch {
            return true;
          }
        })
        .map((raw) => ({ raw })),
    },
  );
}

// Random bodies per endpoint, as many as the depth says (src/testing/property-runs.ts): 60 in npm test, each
// endpoint's 21 or 22 places broken about 33 times among them; 500 in the deep run. npm run chaos is the heavier sweep.
const DEPTH = { quick: 60, deep: 500 };
const RUNS = runsOf(DEPTH);

async function check(method: string, path: string, valid: unknown, extraOk: (status: number, body: any) => boolean = () => false): Promise<void> {
  const before = await snapshot();
  let count = 0;
  await fc.assert(
    fc.asyncProperty(bodies(valid), async (b) => {
      const res = await api(emu.url, tok, method, path, b.json, b.raw ?? (b.json === undefined ? "" : undefined));
      count++;
      if (res.status >= 500) return false;
      return (res.status >= 400 && res.status < 500) || extraOk(res.status, res.body);
    }),
    propertyRuns(DEPTH),
  );
  expect(count).toBeGreaterThanOrEqual(RUNS);
  expect(await snapshot()).toBe(before);
}

describe("malformed bodies on write endpoints", () => {
  it("PATCH tenant configuration", async () => {
    const valid = updateBody(tc);
    await check("PATCH", `/apis/policy-sets/v1/policy/tenant-configurations/${tc.compliance_id}`, valid);
  });

  it("POST SSP policy", async () => {
    const valid = sspCreateBody("Fuzz", { expression: "x", hierarchy_no: 99 });
    await check("POST", "/apis/policy-sets/v1/policy/ssp", valid);
  });

  it("POST approval action", async () => {
    await check("POST", "/apis/oingest-approval/v1/action", { action: "Approved", comments: "ok", approval_ids: ["APR-0003"] });
  });

  it("POST error transactions (a read: answers 4xx, changes nothing)", async () => {
    await check("POST", "/apis/errortransactions/v1/", { transaction_type: "order" });
  });

  it("PATCH SSP batch action with random path segments", async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 12 }),
        fc.string({ maxLength: 12 }),
        fc.string({ maxLength: 12 }),
        fc.option(fc.jsonValue()),
        async (a, id, b, body) => {
          const res = await api(
            emu.url,
            tok,
            "PATCH",
            `/apis/policy-sets/v1/policy/ssp/${encodeURIComponent(a || "x")}/${encodeURIComponent(id || "x")}/${encodeURIComponent(b || "x")}`,
            body ?? undefined,
          );
          return res.status >= 400 && res.status < 500;
        },
      ),
      propertyRuns(DEPTH),
    );
    expect(await snapshot()).toBe(before);
  });
});
