import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { loadRepo, varsFor } from "./repo.js";
import { loadTests } from "./test-files.js";

/** A repo holding one test file of `n` cases, with an optional first line (and a date for case 2). */
function repoWith(n: number, firstLine = "", date = "02/01/2026"): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-load-"));
  mkdirSync(join(dir, "tests"));
  writeFileSync(join(dir, "revsync.yaml"), "version: 1\nenvironments:\n  demo:\n    base_url: http://127.0.0.1:9\n    realm: demo\n");
  const cases = Array.from({ length: n }, (_, i) =>
    i === 2
      ? `  - name: case 2\n    line: { transaction_currency: USD, order_date: ${date}, unit_list_price: "1200.00" }\n    expect: { policy: null }`
      : i % 2
        ? `  - name: case ${i}\n    line: { product_family: F${i}, unit_list_price: ${i} }\n    expect: { policy: P${i}, ssp: ${(i * 9) / 10} }`
        : `  - name: "case ${i}"\n    line:\n      product_family: F${i}\n      date: 2026-03-01\n    expect:\n      policy: null`,
  );
  writeFileSync(join(dir, "tests", "cases.yaml"), `${firstLine}apiVersion: revsync/v1\nkind: SspPolicyTest\ncases:\n${cases.join("\n")}\n`);
  return dir;
}

const load = (dir: string) => {
  const repo = loadRepo(join(dir, "revsync.yaml"), [], dir);
  if (!repo) throw new Error("no repo");
  return loadTests(repo, varsFor({ vars: {} }, {}));
};

/** The js-yaml that loadTests loads for a large plain file (the fast way), the same module instance. */
const jsYaml = createRequire(import.meta.url)("js-yaml") as { load: (...args: unknown[]) => unknown };

/** What load gives, and whether it read the test file the fast way (js-yaml), whatever it then gave: a
 *  file that is not large or not plain goes the full way alone, and a test of the fast way would prove
 *  nothing. */
function loadSeen(dir: string): ReturnType<typeof load> & { fast: boolean } {
  const spy = vi.spyOn(jsYaml, "load");
  try {
    const loaded = load(dir);
    return { ...loaded, fast: spy.mock.calls.length > 0 };
  } finally {
    spy.mockRestore();
  }
}

/** A repo holding one test file of 2 cases and `n` contracts of 3 lines (the last line of contract 1 in
 *  `currency`), with an optional first line. */
function repoWithContracts(n: number, firstLine = "", currency = "USD"): string {
  const dir = mkdtempSync(join(tmpdir(), "revsync-load-"));
  mkdirSync(join(dir, "tests"));
  writeFileSync(join(dir, "revsync.yaml"), "version: 1\nenvironments:\n  demo:\n    base_url: http://127.0.0.1:9\n    realm: demo\n");
  const contracts = Array.from({ length: n }, (_, i) =>
    [
      `  - name: contract ${i}`,
      "    date: 03/01/2026",
      "    lines:",
      `      - id: hw\n        line: { product_family: Hardware, product_id: HW-${i}, currency_code: USD, unit_list_price: 100, order_quantity: 2, unit_sell_price: 45 }`,
      `      - id: sup\n        line: { product_family: Support, product_id: SUP-${i}, currency_code: USD, order_date: 2026-04-01, total_sell_price: "10.50" }`,
      `      - id: svc\n        line: { product_family: Services, currency_code: ${i === 1 ? currency : "USD"}, total_sell_price: 5 }`,
      ...(i % 2 ? ["    expect:", "      allocation: { hw: 90, sup: 10.5, svc: 5 }"] : []),
    ].join("\n"),
  );
  const cases = "cases:\n  - name: a case\n    line: { product_family: F }\n    expect: { policy: null }\n";
  writeFileSync(join(dir, "tests", "c.yaml"), `${firstLine}apiVersion: revsync/v1\nkind: SspPolicyTest\n${cases}contracts:\n${contracts.join("\n")}\n`);
  return dir;
}

describe("loading test files", () => {
  it("contracts: the fast way gives what the full way gives; a line without a date takes the contract's", () => {
    const fast = repoWithContracts(180);
    const full = repoWithContracts(180, "# the full way: !\n");
    try {
      const { fast: readFast, ...a } = loadSeen(fast);
      const { fast: fullReadFast, ...b } = loadSeen(full);
      expect([readFast, fullReadFast]).toEqual([true, false]);
      expect(a.diagnostics).toEqual([]);
      expect(b.diagnostics).toEqual([]);
      expect(a.cases).toHaveLength(1);
      expect(a.contracts).toHaveLength(180);
      expect(a.contracts).toEqual(b.contracts.map((c) => ({ ...c, line: c.line - 1 })));
      expect(a.contracts[1]).toEqual({
        name: "contract 1",
        file: "tests/c.yaml",
        line: 17,
        column: 5,
        lines: [
          {
            id: "hw",
            input: {
              product_family: "Hardware",
              product_id: "HW-1",
              currency_code: "USD",
              unit_list_price: 100,
              order_quantity: 2,
              unit_sell_price: 45,
              date: "03/01/2026",
            },
          },
          { id: "sup", input: { product_family: "Support", product_id: "SUP-1", currency_code: "USD", order_date: "2026-04-01", total_sell_price: "10.50" } },
          { id: "svc", input: { product_family: "Services", currency_code: "USD", total_sell_price: 5, date: "03/01/2026" } },
        ],
        expect: { allocation: { hw: 90, sup: 10.5, svc: 5 } },
      });
    } finally {
      rmSync(fast, { recursive: true, force: true });
      rmSync(full, { recursive: true, force: true });
    }
  });

  it("a contract's second currency, in a file the fast way would take, is an error at the line", () => {
    const dir = repoWithContracts(180, "", "EUR");
    try {
      const { contracts, diagnostics, fast } = loadSeen(dir);
      expect(fast).toBe(true);
      expect(contracts).toEqual([]);
      expect(diagnostics).toEqual([
        {
          file: "tests/c.yaml",
          line: 25,
          column: 15,
          severity: "error",
          message: 'contracts.1.lines.2 (svc): currency "EUR" differs from the contract\'s first line ("USD"): every line of a contract has one currency',
        },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a contract line's negative sell price is an error at its field: a return or credit is no contract line", () => {
    const dir = repoWithContracts(2);
    const file = join(dir, "tests", "c.yaml");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace("total_sell_price: 5 }", "total_sell_price: -100 }").replace("order_quantity: 2,", "order_quantity: -2,"),
    );
    try {
      const { contracts, diagnostics } = load(dir);
      expect(contracts).toEqual([]);
      expect(diagnostics.map((d) => [d.line, d.message])).toEqual([
        [
          12,
          "contracts.0.lines.0.line.order_quantity: -2 is negative: an order line's quantity and prices are 0 or more (a return or a credit is not a line revsync prices or allocates)",
        ],
        [
          16,
          "contracts.0.lines.2.line.total_sell_price: -100 is negative: an order line's quantity and prices are 0 or more (a return or a credit is not a line revsync prices or allocates)",
        ],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a large plain file read the fast way (js-yaml) gives exactly what the full way (yaml) gives", () => {
    const fast = repoWith(800);
    // A tag-like character in a comment sends the same content the full way.
    const full = repoWith(800, "# the full way: !\n");
    try {
      const { fast: readFast, ...a } = loadSeen(fast);
      const { fast: fullReadFast, ...b } = loadSeen(full);
      expect([readFast, fullReadFast]).toEqual([true, false]);
      expect(a.diagnostics).toEqual([]);
      expect(b.diagnostics).toEqual([]);
      expect(a.cases).toHaveLength(800);
      // The full file has one more line at the top.
      expect(a.cases).toEqual(b.cases.map((c) => ({ ...c, line: c.line - 1 })));
      expect(a.cases[1]).toEqual({
        name: "case 1",
        file: "tests/cases.yaml",
        line: 10,
        column: 5,
        input: { product_family: "F1", unit_list_price: 1 },
        expect: { policy: "P1", ssp: 0.9 },
      });
      expect(a.cases[0]?.input.date).toBe("2026-03-01");
      // Lines as the service writes them: kept as written.
      expect(a.cases[2]?.input).toEqual({ transaction_currency: "USD", order_date: "02/01/2026", unit_list_price: "1200.00" });
    } finally {
      rmSync(fast, { recursive: true, force: true });
      rmSync(full, { recursive: true, force: true });
    }
  });

  it("a date that is not one, in a file the fast way would take, is an error at its place", () => {
    const dir = repoWith(800, "", "2026-13-01");
    try {
      const { cases, diagnostics, fast } = loadSeen(dir);
      expect(fast).toBe(true);
      expect(cases).toEqual([]);
      expect(diagnostics).toEqual([
        {
          file: "tests/cases.yaml",
          line: 14,
          column: 52,
          severity: "error",
          message: 'cases.2.line.order_date: "2026-13-01" is not a date: write YYYY-MM-DD or MM/DD/YYYY (a day that exists)',
        },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("date_field names the line field that gives the date for batch values", () => {
    const dir = repoWith(3);
    try {
      const file = join(dir, "tests", "cases.yaml");
      writeFileSync(
        file,
        readFileSync(file, "utf8").replace("kind: SspPolicyTest\n", "kind: SspPolicyTest\ndate_field: booked\n").replace("date: 2026-03-01", "booked: soon"),
      );
      expect(load(dir).diagnostics.map((d) => [d.line, d.column, d.message])).toEqual([
        [8, 15, 'cases.0.line.booked: "soon" is not a date: write YYYY-MM-DD or MM/DD/YYYY (a day that exists)'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
