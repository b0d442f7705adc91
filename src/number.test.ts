import fc from "fast-check";
import { propertyRuns } from "./testing/property-runs.js";
import { describe, expect, it } from "vitest";
import { exactness, InexactNumber, isExact, MAX_EXACT_WHOLE, numberOf, numberOrNull, parseJson, plainData, readNumber, readWhole } from "./number.js";

const LIMIT = BigInt(MAX_EXACT_WHOLE);

describe("the number rule", () => {
  it.each([
    ["9007199254740991", true],
    ["-9007199254740991", true],
    ["9007199254740992", false],
    ["12345678901234567890", false],
    ["1e300", false],
    ["1e+300", false],
    ["1e15", true],
    ["1.5e3", true],
    ["0x1F", true],
    ["0x20000000000000", false],
    [".inf", false],
    ["-.nan", false],
    ["0.1", true],
    ["1234.5678", true],
    ["0.30000000000000004", true],
    ["12.000000000000000001", false],
    ["0.123456789012345678", false],
    ["1e-400", false],
  ])("%s is exact: %s (whole numbers up to 2^53 - 1, fractions whose digits a double keeps, in any notation)", (literal, exact) => {
    expect(isExact(literal)).toBe(exact);
  });

  it("says why a number is not exact", () => {
    expect(exactness("12345678901234567890")).toEqual({
      exact: false,
      why: "12345678901234567890 is beyond 9007199254740991 (2^53 - 1), the largest whole number a double holds exactly: it would be read as 12345678901234567000",
    });
    expect(exactness("12.000000000000000001")).toEqual({
      exact: false,
      why: "12.000000000000000001 has more significant digits than a double keeps: it would be read as 12",
    });
  });

  it("reads text in plain decimal notation only", () => {
    expect(readNumber("1000")).toEqual({ ok: true, value: 1000 });
    expect(readNumber(" 12.50 ")).toEqual({ ok: true, value: 12.5 });
    expect(readNumber("105.")).toEqual({ ok: true, value: 105 });
    expect(readNumber(".5")).toEqual({ ok: true, value: 0.5 });
    for (const t of ["1,000", "1e3", "", " ", "+5", "0x10", "1_000", "Infinity", "NaN", "12a", "-", "."]) {
      const r = readNumber(t);
      expect(r.ok, t).toBe(false);
      if (!r.ok) expect(r.problem, t).toMatch(/is not a number: write digits/);
    }
    expect(readNumber("12345678901234567890")).toMatchObject({ ok: false, problem: expect.stringContaining("beyond 9007199254740991") });
    expect(readWhole("105.0")).toEqual({ ok: true, value: 105 });
    expect(readWhole("105.5")).toEqual({ ok: false, kind: "not whole", problem: '"105.5" is not a whole number' });
    expect(numberOf(12)).toBe(12);
    expect(numberOf("1,000")).toBeUndefined();
    expect(numberOf(Number.NaN)).toBeUndefined();
  });

  it("property: a whole number near 2^53 is exact exactly when it is at most 2^53 - 1, as text and as an exponent", () => {
    const near = fc.bigInt({ min: LIMIT - 100_000n, max: LIMIT + 100_000n });
    fc.assert(
      fc.property(near, fc.boolean(), (n, negative) => {
        const v = negative ? -n : n;
        const text = v.toString();
        const within = n <= LIMIT;
        expect(isExact(text)).toBe(within);
        expect(readNumber(text).ok).toBe(within);
        // The same number written with an exponent, as JSON and YAML may write it.
        const digits = n.toString();
        expect(isExact(`${negative ? "-" : ""}${digits[0]}.${digits.slice(1)}e${digits.length - 1}`)).toBe(within);
        if (within) expect(readNumber(text)).toEqual({ ok: true, value: Number(v) });
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });

  it("property: every whole number beyond 2^53 - 1 is refused, whatever its size", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: LIMIT + 1n, max: 10n ** 40n }), (n) => {
        expect(isExact(n.toString())).toBe(false);
        const r = readNumber(n.toString());
        expect(r.ok).toBe(false);
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });

  it("property: any double as JavaScript writes it is exact when it is a fraction or a whole number within 2^53 - 1", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const text = String(d);
        const whole = Number.isInteger(d);
        expect(isExact(text)).toBe(!whole || Math.abs(d) <= MAX_EXACT_WHOLE);
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });

  it("property: a decimal of up to 15 significant digits is exact; one of 18 or more, not whole, is not", () => {
    const digit = fc.constantFrom(..."0123456789");
    const nonZero = fc.constantFrom(..."123456789");
    const decimal = (min: number, max: number) =>
      fc.tuple(nonZero, fc.array(digit, { minLength: min - 2, maxLength: max - 2 }), nonZero, fc.nat()).map(([first, mid, last, at]) => {
        const all = `${first}${mid.join("")}${last}`;
        const point = 1 + (at % (all.length - 1));
        return `${all.slice(0, point)}.${all.slice(point)}`;
      });
    fc.assert(
      fc.property(decimal(2, 15), (t) => {
        expect(isExact(t)).toBe(true);
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
    fc.assert(
      fc.property(decimal(18, 30), (t) => {
        expect(isExact(t)).toBe(false);
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });
});

describe("JSON answers", () => {
  it("gives JSON.parse's value, and marks each inexact literal as not comparable after the check", () => {
    const text = '{"a": 12345678901234567890, "b": [1e300, 10, 12.000000000000000001], "c": "12345678901234567890", "__proto__": 1}';
    const r = parseJson(text);
    expect(r.value).toEqual(JSON.parse(text));
    expect(r.inexact).toBe(3);
    const marked = r.marked() as { a: unknown; b: unknown[]; c: unknown };
    expect(marked.a).toEqual(new InexactNumber("12345678901234567890"));
    expect(marked.b).toEqual([new InexactNumber("1e300"), 10, new InexactNumber("12.000000000000000001")]);
    expect(marked.c).toBe("12345678901234567890");
    expect(Object.prototype.hasOwnProperty.call(marked, "__proto__")).toBe(true);
    expect(JSON.stringify(marked.a)).toBe('"12345678901234567890"');
    // Strings that hold a digit, an e and a digit, or long runs of digits (a UUID, a hash) are no number;
    // a literal after any white space still is.
    const ids = '{"id": "3e5a0c1e-2e4b", "sha": "12345678901234567890e1", "n": 1.5, "m": [7]}';
    expect(parseJson(ids).inexact).toBe(0);
    expect(parseJson(ids).value).toEqual(JSON.parse(ids));
    const spaced = '{\n  "id": "3e5a",\n  "n":\r\n\t-1e400,\n  "m": [\n 12345678901234567]\n}';
    expect(parseJson(spaced).inexact).toBe(2);
    expect(parseJson("1e400").inexact).toBe(1);
  });

  it("property: an answer is JSON.parse's, and exactly its inexact literals are marked", () => {
    const literal = fc.oneof(
      fc.bigInt({ min: -(10n ** 22n), max: 10n ** 22n }).map((n) => n.toString()),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
      fc.string().map((s) => JSON.stringify(s)),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string(), literal), { maxLength: 8 }), (pairs) => {
        const text = `[${pairs.map(([k, v]) => `{${JSON.stringify(k)}: ${v}}`).join(", ")}]`;
        const r = parseJson(text);
        expect(r.value).toEqual(JSON.parse(text));
        const inexact = pairs.filter(([, v]) => !v.startsWith('"') && !isExact(v)).length;
        expect(r.inexact).toBe(inexact);
        const marked = r.marked() as Record<string, unknown>[];
        pairs.forEach(([k, v], i) => {
          const got = marked[i]?.[k];
          if (!v.startsWith('"') && !isExact(v)) expect(got).toEqual(new InexactNumber(v));
          else expect(got).toEqual(JSON.parse(v));
        });
      }),
      propertyRuns({ quick: 100, deep: 1000 }),
    );
  });
});

describe("plain data", () => {
  it("writes each number that is not comparable as its text, and leaves the rest as it is", () => {
    const same = { a: 1, b: ["x", { c: null }] };
    expect(plainData(same)).toBe(same);
    expect(plainData({ a: new InexactNumber("1e300"), b: [1, new InexactNumber("12345678901234567890")], c: same })).toEqual({
      a: "1e300",
      b: [1, "12345678901234567890"],
      c: same,
    });
    expect(numberOrNull(new InexactNumber("1e300"))).toBeNull();
    expect(numberOrNull(1_700_000_000)).toBe(1_700_000_000);
  });
});
