import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateRepo as validateWith, type ValidateInput } from "../src/config/validate.js";
import { KINDS } from "../src/kinds/registry.js";
import { readValuesCsv } from "../src/config/values.js";
import { cli, ROOT, removeDir } from "../src/testing/helpers.js";

/** validate as `revsync validate` runs it: every kind of the registry. */
const validateRepo = (input: Omit<ValidateInput, "kinds">) => validateWith({ ...input, kinds: KINDS });

const FIX = join(ROOT, "test", "fixtures", "invalid");
/** The kinds of policy file, as the registry holds them. */
const FILE_KINDS = KINDS.map((k) => k.fileKind);

// [fixture, file, line, column, message] : one mistake each, the first diagnostic asserted.
const CASES: [string, string, number, number, RegExp][] = [
  ["config-bad-rate-limit", "revsync.yaml", 7, 17, /environments\.demo\.rate_limit: expected a number, got the string "fast"/],
  [
    "config-bad-var-type",
    "revsync.yaml",
    8,
    23,
    /environments\.demo\.vars\.contra_account: expected a string or a number or a boolean \(true or false\), got a mapping$/,
  ],
  ["config-bad-version", "revsync.yaml", 1, 10, /version: expected 1, got the number 2/],
  ["config-unknown-env-field", "revsync.yaml", 5, 5, /environments\.demo: missing required field "base_url"/],
  ["csv-bad-date", "policies/values.csv", 2, 32, /effective_start_date must be a date YYYY-MM-DD, got "2026-02-30"/],
  ["csv-bad-header", "policies/values.csv", 1, 1, /unknown column "product" \(column 1\); the columns are product_id, currency_code/],
  ["csv-broken-quote", "policies/values.csv", 3, 1, /not valid CSV: a quoted field opens here and never closes/],
  ["csv-column-count", "policies/values.csv", 3, 1, /expected 8 columns, found 7/],
  ["csv-currency-code", "policies/values.csv", 3, 9, /currency_code must be a three-letter code such as USD, got "euro"/],
  ["csv-empty-product", "policies/values.csv", 3, 1, /product_id is empty/],
  ["csv-missing-column", "policies/values.csv", 1, 1, /missing column "above_mid_point"/],
  ["csv-midpoint-order", "policies/values.csv", 3, 21, /expected below_mid_point <= mid_point <= above_mid_point, got 95, 90, 110/],
  ["csv-not-a-number", "policies/values.csv", 3, 24, /mid_point must be a whole number, got "1O0"/],
  ["csv-overlapping-ranges", "policies/values.csv", 4, 1, /HW-1000 USD: 2026-06-01\.\.2026-12-31 overlaps line 2/],
  ["csv-quote-inside-field", "policies/values.csv", 3, 1, /not valid CSV: a quote inside an unquoted field/],
  ["csv-repeated-column", "policies/values.csv", 1, 1, /column "mid_point" is repeated \(columns 5 and 9\)/],
  ["csv-semicolons", "policies/values.csv", 1, 1, /the file looks semicolon-separated; revsync reads comma-separated values/],
  ["csv-negative-below", "policies/values.csv", 3, 20, /^below_mid_point must be 0 or more \(an amount or a percent of the list price\), got -5$/],
  [
    "csv-no-header",
    "policies/values.csv",
    1,
    1,
    /^the first line looks like data, not a header: a values file starts with the header line product_id,currency_code,/,
  ],
  ["csv-start-after-end", "policies/values.csv", 3, 32, /effective_start_date 2026-07-01 is after effective_end_date 2026-06-30/],
  ["csv-value-type", "policies/values.csv", 3, 13, /value_type must be Amount or Percent, got "Ratio"/],
  ["duplicate-policy-name", "policies/b.yaml", 4, 9, /duplicate SspPolicy name "Hardware SSP": also defined at policies\/a\.yaml:4/],
  ["missing-kind", "policies/tc.yaml", 1, 1, new RegExp(`missing kind: expected ${FILE_KINDS.join(" or ")}`)],
  ["ssp-batch-status", "policies/ssp.yaml", 18, 13, /batches\.0\.status: expected one of "file uploaded", "reviewed", "approved", got the string "pending"/],
  ["ssp-ceiling-not-whole", "policies/ssp.yaml", 11, 23, /spec\.ceiling_percentage: expected a whole number, got the number 115\.5/],
  ["ssp-condition-missing-value", "policies/ssp.yaml", 13, 7, /spec\.when\.0: missing required field "value"/],
  ["ssp-data-identifiers-not-list", "policies/ssp.yaml", 9, 21, /spec\.data_identifiers: expected a list, got the string "product_id"/],
  ["ssp-duplicate-batch", "policies/ssp.yaml", 20, 11, /duplicate batch name "FY26-H1"/],
  ["ssp-floor-above-ceiling", "policies/ssp.yaml", 10, 21, /floor_percentage 120 is above ceiling_percentage 115/],
  ["ssp-formula-with-batches", "policies/ssp.yaml", 18, 3, /a formula policy has no batches/],
  [
    "ssp-formula-expression",
    "policies/ssp.yaml",
    12,
    41,
    /expression "unit_list_price \* \(0\.5 \+ foo\(1\)": foo\( at column 26: function calls are not allowed/,
  ],
  ["ssp-formula-without-expression", "policies/ssp.yaml", 6, 11, /a formula policy needs an expression/],
  ["ssp-hierarchy-not-number", "policies/ssp.yaml", 8, 17, /spec\.hierarchy_no: expected a whole number, got the string "ten"/],
  [
    "ssp-hierarchy-not-exact",
    "policies/ssp.yaml",
    8,
    17,
    /^spec\.hierarchy_no: 1e300 is beyond 9007199254740991 \(2\^53 - 1\), the largest whole number a double holds exactly: it would be read as 1e\+300: write a number revsync can hold exactly$/,
  ],
  [
    "ssp-floor-not-exact",
    "policies/ssp.yaml",
    10,
    21,
    /^spec\.floor_percentage: 12345678901234567890 is beyond 9007199254740991 \(2\^53 - 1\), .*it would be read as 12345678901234567000: write a number revsync can hold exactly$/,
  ],
  ["ssp-batch-date", "policies/ssp.yaml", 21, 25, /^batches\.0\.effective_end_date: "2026-06-31" is not a date: write YYYY-MM-DD \(a day that exists\)$/],
  [
    "csv-not-exact",
    "policies/values.csv",
    2,
    27,
    /above_mid_point must be a whole number, got "9007199254740993": 9007199254740993 is beyond 9007199254740991/,
  ],
  [
    "test-line-quantity",
    "tests/orders.yaml",
    8,
    121,
    /^contracts\.0\.lines\.0\.line\.order_quantity: "1,000" is not a number: write digits with an optional decimal point, 0 or more \(no exponent, no thousands separator\)$/,
  ],
  ["ssp-method-enum", "policies/ssp.yaml", 6, 11, /spec\.method: expected one of "upload", "formula", "calculator", got the string "magic"/],
  ["ssp-operator-enum", "policies/ssp.yaml", 14, 17, /spec\.when\.0\.operator: expected one of "equality".*got the string "equals"/],
  ["ssp-unknown-field", "policies/ssp.yaml", 8, 3, /spec\.colour: unknown field "colour"/],
  ["ssp-values-missing-file", "policies/ssp.yaml", 19, 13, /values file "nope\.csv" does not exist/],
  ["ssp-values-outside-repo", "policies/ssp.yaml", 19, 13, /values file "\.\.\/\.\.\/outside\.csv" lies outside the policy repo/],
  ["test-line-bad-date", "tests/orders.yaml", 8, 99, /cases\.1\.line\.order_date: "02\/30\/2026" is not a date: write YYYY-MM-DD or MM\/DD\/YYYY/],
  ["tc-bad-delimiter", "policies/tc.yaml", 7, 30, /account_segment_delimiter must be one of - , \| ~ # : \. \$, got "@"/],
  ["tc-boolean-as-string", "policies/tc.yaml", 6, 22, /spec\.carves_allocation: expected a boolean \(true or false\), got the string "yes"/],
  [
    "tc-distribution-enum",
    "policies/tc.yaml",
    7,
    24,
    /spec\.distribution_method: expected one of "Days in Calendar Period", "Prorate", got the string "Weekly"/,
  ],
  [
    "tc-guid-not-updatable",
    "policies/tc.yaml",
    7,
    3,
    /guid cannot be changed: the update API \(spec 4\.2\) does not carry it\. Updatable fields: ar_accounting, can_delete/,
  ],
  ["tc-missing-name", "policies/tc.yaml", 4, 3, /metadata: missing required field "name"/],
  ["tc-misspelled-field", "policies/tc.yaml", 6, 3, /unknown field "carves_alocation" \(did you mean "carves_allocation"\?\)/],
  ["tc-not-updatable-field", "policies/tc.yaml", 7, 3, /snowman_enabled cannot be changed: .*Updatable fields: .*ui_mode/],
  ["tc-undefined-variable", "policies/tc.yaml", 8, 34, /undefined variable \$\{contra_acount\}/],
  ["unknown-kind", "policies/tc.yaml", 2, 7, new RegExp(`kind: expected ${FILE_KINDS.map((k) => `"${k}"`).join(" or ")}, got "TenantConfig"`)],
  ["wrong-api-version", "policies/tc.yaml", 1, 13, /apiVersion: expected "revsync\/v1", got the string "revsync\/v2"/],
  ["yaml-alias-bomb", "policies/ssp.yaml", 1, 1, /too many YAML aliases \(a possible alias bomb\)/],
  ["yaml-duplicate-key", "policies/ssp.yaml", 8, 3, /Map keys must be unique/],
  ["yaml-not-utf8", "policies/tc.yaml", 4, 33, /file is not UTF-8 text: save it as UTF-8/],
  ["yaml-proto-key", "policies/ssp.yaml", 3, 1, /the key "__proto__" is not allowed/],
  // An indentation slip: said at its line, not as the parser's error on the line before it.
  ["yaml-syntax", "policies/ssp.yaml", 7, 1, /line 7 is indented 3 spaces, deeper than line 6 \(2\), which opens no block/],
  [
    "config-batch-status-shared",
    "revsync.yaml",
    13,
    19,
    /^environments\.demo\.service\.batch_status\.approved: "Pending" is also the text of reviewed: each batch status needs its own text/,
  ],
  [
    "yaml-flow-variable",
    "policies/tc.yaml",
    5,
    65,
    /^\$\{contra_account\} inside \{ \} or \[ \] must be quoted, or YAML reads its \{ as a mapping: write "\$\{contra_account\}"$/,
  ],
  ["yaml-unknown-tag", "policies/ssp.yaml", 7, 11, /the YAML tag !shell is not allowed in policy files/],
  ["yaml-binary-tag", "policies/ssp.yaml", 4, 9, /the YAML tag !!binary is not allowed in policy files: write the value as plain text/],
  ["ssp-values-folder", "policies/ssp.yaml", 10, 13, /values "values\.csv" is a folder: name the CSV file of the batch's values/],
  [
    "test-file-in-policies",
    "policies/cases.yaml",
    2,
    7,
    /kind: SspPolicyTest is a policy test file: move it to the tests folder \(tests\/, as tests: of revsync\.yaml names it\)/,
  ],
];

// Checked in process (validateRepo is what `revsync validate` runs); the CLI runs below cover the exit
// codes and the stream split.
describe("revsync validate: the invalid corpus", () => {
  it("has at least 40 fixtures, each listed here", () => {
    const dirs = readdirSync(FIX).sort();
    expect(dirs.length).toBeGreaterThanOrEqual(40);
    expect(CASES.map((c) => c[0]).sort()).toEqual(dirs);
  });

  it.each(CASES)("%s: %s:%i:%i", (name, file, line, column, message) => {
    const { diagnostics } = validateRepo({ cwd: join(FIX, name), env: { REVSYNC_BASE_URL: "http://127.0.0.1:9" } });
    const first = diagnostics[0];
    expect(first?.severity).toBe("error");
    expect({ file: first?.file, line: first?.line, column: first?.column }).toEqual({ file, line, column });
    expect(first?.message).toMatch(message);
  });

  it("a values file without its header line is one error, not one per cell", () => {
    expect(validateRepo({ cwd: join(FIX, "csv-no-header"), env: { REVSYNC_BASE_URL: "http://127.0.0.1:9" } }).diagnostics).toHaveLength(1);
  });

  it("an unquoted ${VAR} in a flow mapping is one error that says to quote it, not YAML's several", () => {
    const { diagnostics } = validateRepo({ cwd: join(FIX, "yaml-flow-variable"), env: {} });
    expect(diagnostics).toHaveLength(1);
  });

  it("what the schemas now refuse too (numbers beyond 2^53 - 1, names a URL cannot hold, days that do not exist, a formula without its expression) is each said once, in the rule's words", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-once-"));
    try {
      writeFileSync(join(dir, "revsync.yaml"), "version: 1\nenvironments:\n  demo:\n    base_url: http://127.0.0.1:9\n");
      mkdirSync(join(dir, "policies"));
      writeFileSync(
        join(dir, "policies", "bad.yaml"),
        [
          "apiVersion: revsync/v1",
          "kind: SspPolicy",
          'metadata: { name: "bad\\x01name" }',
          "spec:",
          "  method: formula",
          "  hierarchy_no: 12345678901234567890",
          "  floor_percentage: 1e300",
          "  ceiling_percentage: 100",
          '  expression: "  "',
          "batches:",
          '  - { name: "..", status: reviewed, effective_start_date: "2026-13-45" }',
          "---",
          "apiVersion: revsync/v1",
          "kind: TenantConfiguration",
          'metadata: { name: "   " }',
          "spec: {}",
          "",
        ].join("\n"),
      );
      const { diagnostics } = validateRepo({ cwd: dir, env: {} });
      expect(diagnostics.map((d) => `${d.line}:${d.column}: ${d.message}`)).toEqual([
        '3:19: the name cannot be used: "bad\\u0001name" holds a control character',
        "6:17: spec.hierarchy_no: 12345678901234567890 is beyond 9007199254740991 (2^53 - 1), the largest whole number a double holds exactly: it would be read as 12345678901234567000: write a number revsync can hold exactly",
        "7:21: spec.floor_percentage: 1e300 is beyond 9007199254740991 (2^53 - 1), the largest whole number a double holds exactly: it would be read as 1e+300: write a number revsync can hold exactly",
        "9:15: a formula policy needs an expression (the formula that derives the SSP value)",
        "11:3: a formula policy has no batches: batches belong to upload and calculator policies",
        '11:13: the batch name cannot be used: ".." is a dot segment: in a URL path it would name another resource',
        '11:59: batches.0.effective_start_date: "2026-13-45" is not a date: write YYYY-MM-DD (a day that exists)',
        "15:19: the name cannot be used: a name of blanks only",
      ]);
    } finally {
      removeDir(dir);
    }
  });

  it("through the CLI: exit 1, the JSON report on stdout, nothing on stderr", async () => {
    const r = await cli(["validate", "--format", "json"], { cwd: join(FIX, "csv-bad-header") });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ format_version: "1", valid: false });
    expect(report.diagnostics.map((d: any) => d.message)).toEqual([expect.stringMatching(/^unknown column "product"/), 'missing column "product_id"']);
    expect(r.stderr).toBe("");
  });
});

describe("values CSV: columns by name, quoted fields", () => {
  it("reordered columns, quoted fields with commas, quotes and newlines, CRLF: valid, values as written", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-csv-"));
    try {
      cpSync(join(FIX, "csv-bad-header"), dir, { recursive: true });
      const csv = [
        "mid_point,product_id,effective_end_date,currency_code,value_type,below_mid_point,above_mid_point,effective_start_date",
        '100,"HW-1000, rack",2026-06-30,USD,Percent,90,110,2026-01-01',
        '100,"HW ""Pro""\nedition",2026-06-30,USD,Percent,90,110,2026-01-01',
        "100,HW-2000,2026-06-30,EUR,Amount,90,110,2026-01-01",
        // Whole numbers as a spreadsheet may save them.
        "105.0,HW-3000,2026-06-30,EUR,Amount,90.00,110,2026-01-01",
      ].join("\r\n");
      writeFileSync(join(dir, "policies", "values.csv"), `${csv}\r\n`);
      expect(validateRepo({ cwd: dir, env: {} }).diagnostics).toEqual([]);
      const parsed = readValuesCsv(join(dir, "policies", "values.csv"), "values.csv");
      expect(parsed.values.map((v) => [v.line, v.product_id, v.currency_code, v.mid_point])).toEqual([
        [2, "HW-1000, rack", "USD", 100],
        [3, 'HW "Pro"\nedition', "USD", 100],
        [5, "HW-2000", "EUR", 100],
        [6, "HW-3000", "EUR", 105],
      ]);
      expect(parsed.values[3]?.below_mid_point).toBe(90);
      // A value that is not whole stays refused.
      writeFileSync(join(dir, "policies", "values.csv"), `${csv.replace("105.0,", "105.5,")}\r\n`);
      expect(validateRepo({ cwd: dir, env: {} }).diagnostics.map((d) => d.message)).toEqual(['mid_point must be a whole number, got "105.5"']);
    } finally {
      removeDir(dir);
    }
  });

  it("an error after a quoted field that spans lines names the file's own line", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-csv-"));
    try {
      cpSync(join(FIX, "csv-bad-header"), dir, { recursive: true });
      const csv = "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\n";
      const rows = '"HW\n1000",USD,Percent,90,100,110,2026-01-01,2026-06-30\n\nHW-2,USD,Ratio,90,100,110,2026-01-01,2026-06-30\n';
      writeFileSync(join(dir, "policies", "values.csv"), csv + rows);
      const [d] = validateRepo({ cwd: dir, env: {} }).diagnostics;
      expect(d).toMatchObject({ file: "policies/values.csv", line: 5, message: 'value_type must be Amount or Percent, got "Ratio"' });
    } finally {
      removeDir(dir);
    }
  });
});

describe("revsync validate", () => {
  it("text output: file:line:col: error: message, and no stack trace", async () => {
    const r = await cli(["validate"], { cwd: join(FIX, "tc-boolean-as-string") });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('policies/tc.yaml:6:22: error: spec.carves_allocation: expected a boolean (true or false), got the string "yes"');
    expect(r.stdout + r.stderr).not.toMatch(/\n\s+at /);
  });

  it("reports every problem of every file in one run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-many-"));
    try {
      cpSync(join(FIX, "tc-boolean-as-string"), dir, { recursive: true });
      cpSync(join(FIX, "ssp-method-enum", "policies"), join(dir, "policies"), { recursive: true });
      const r = await cli(["validate", "--format", "json"], { cwd: dir });
      const files = new Set(JSON.parse(r.stdout).diagnostics.map((d: any) => d.file));
      expect(files).toEqual(new Set(["policies/tc.yaml", "policies/ssp.yaml"]));
    } finally {
      removeDir(dir);
    }
  });

  it("GitHub annotations when GITHUB_ACTIONS=true", async () => {
    const r = await cli(["validate"], { cwd: join(FIX, "ssp-floor-above-ceiling"), env: { GITHUB_ACTIONS: "true" } });
    expect(r.stdout).toContain("::error file=policies/ssp.yaml,line=10,col=21::floor_percentage 120 is above ceiling_percentage 115");
  });

  it("a values file that is a link leading outside the repo is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-link-"));
    try {
      cpSync(join(FIX, "ssp-values-missing-file"), dir, { recursive: true });
      symlinkSync("/etc/hostname", join(dir, "policies", "nope.csv"));
      const r = await cli(["validate"], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('policies/ssp.yaml:19:13: error: values file "nope.csv" is a link that leads outside the policy repo');
    } finally {
      removeDir(dir);
    }
  });

  it("a symbolic link that loops, as a policy file or as a values file, is said in plain words at its place", () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-loop-"));
    try {
      cpSync(join(FIX, "ssp-values-missing-file"), dir, { recursive: true });
      symlinkSync("nope.csv", join(dir, "policies", "nope.csv"));
      symlinkSync("loop.yaml", join(dir, "policies", "loop.yaml"));
      const { diagnostics } = validateRepo({ cwd: dir, env: {} });
      const loop = "it is a symbolic link that leads round in a loop (to itself, or through others back to itself)";
      expect(diagnostics).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ file: "policies/loop.yaml", line: 1, column: 1, message: `cannot read the file: ${loop}` }),
          expect.objectContaining({ file: "policies/ssp.yaml", line: 19, column: 13, message: `values file "nope.csv" cannot be read: ${loop}` }),
        ]),
      );
      expect(diagnostics.map((d) => d.message).join("\n")).not.toMatch(/ELOOP|EISDIR/);
    } finally {
      removeDir(dir);
    }
  });

  it("a file over 5 MiB is refused without being parsed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-big-"));
    try {
      cpSync(join(FIX, "tc-boolean-as-string", "revsync.yaml"), join(dir, "revsync.yaml"));
      mkdirSync(join(dir, "policies"));
      writeFileSync(join(dir, "policies", "big.yaml"), `# ${"x".repeat(5 * 1024 * 1024)}\n`);
      const r = await cli(["validate"], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/policies\/big\.yaml:1:1: error: file is over 5 MiB/);
    } finally {
      removeDir(dir);
    }
  });

  it("a policy or policy test file that is a link out of the repo is not read (one to /dev/zero neither), a FIFO is refused by its type; a link inside is read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-links-"));
    const outside = mkdtempSync(join(tmpdir(), "revsync-outside-"));
    try {
      cpSync(join(FIX, "tc-boolean-as-string", "revsync.yaml"), join(dir, "revsync.yaml"));
      mkdirSync(join(dir, "policies", "ssp"), { recursive: true });
      mkdirSync(join(dir, "tests"));
      const policy =
        "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata: { name: Outside SSP }\nspec: { method: formula, active: true, hierarchy_no: 90, data_identifiers: [product_id], floor_percentage: 85, ceiling_percentage: 115, expression: unit_list_price, when: [{ field_name: product_family, operator: equality, value: X }] }\n";
      writeFileSync(join(outside, "policy.yaml"), policy);
      writeFileSync(join(outside, "test.yaml"), "apiVersion: revsync/v1\nkind: SspPolicyTest\nmetadata: { name: t }\ncases: []\n");
      symlinkSync(join(outside, "policy.yaml"), join(dir, "policies", "ssp", "outside.yaml"));
      symlinkSync("/dev/zero", join(dir, "policies", "z.yaml"));
      symlinkSync(join(outside, "test.yaml"), join(dir, "tests", "outside.yaml"));
      expect(spawnSync("mkfifo", [join(dir, "policies", "pipe.yaml")]).status).toBe(0);
      // A link that stays inside the repo is read as the file it points to.
      writeFileSync(join(dir, "policies", "inside.txt"), policy.replace("Outside SSP", "Inside SSP").replace("90", "91"));
      symlinkSync("inside.txt", join(dir, "policies", "inside.yaml"));
      const r = await cli(["validate", "--format", "json"], { cwd: dir });
      expect(r.code).toBe(1);
      const problems = JSON.parse(r.stdout).diagnostics.map((d: any) => `${d.file}:${d.line}: ${d.message}`);
      const real = (p: string): string => realpathSync(p);
      expect(problems).toEqual(
        expect.arrayContaining([
          `policies/ssp/outside.yaml:1: policies/ssp/outside.yaml is a symbolic link to ${real(join(outside, "policy.yaml"))}, outside the policy repo: nothing is read through it`,
          "policies/z.yaml:1: policies/z.yaml is a symbolic link to /dev/zero, outside the policy repo: nothing is read through it",
          "policies/pipe.yaml:1: cannot read the file: it is a named pipe (FIFO), not a regular file",
          `tests/outside.yaml:1: tests/outside.yaml is a symbolic link to ${real(join(outside, "test.yaml"))}, outside the policy repo: nothing is read through it`,
        ]),
      );
      expect(r.stdout).not.toContain("Outside SSP");
      // The link inside is read: its policy is checked with the rest, and plan would see it.
      expect(problems.filter((p: string) => p.startsWith("policies/inside.yaml"))).toEqual([]);
    } finally {
      removeDir(dir);
      removeDir(outside);
    }
  });

  it("a values file, a saved plan or an evidence record that is a FIFO or a device is refused by its type, never read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-fifo-"));
    try {
      const show = await cli(["show", "/dev/zero"]);
      expect(show.stderr).toContain("cannot read the plan /dev/zero: it is a character device, not a regular file");
      expect(show.code).toBe(1);
      mkdirSync(join(dir, "evidence"));
      expect(spawnSync("mkfifo", [join(dir, "evidence", "r.json")]).status).toBe(0);
      const verify = await cli(["evidence", "verify", join(dir, "evidence")]);
      expect(verify.stdout + verify.stderr).toContain("cannot be read: it is a named pipe (FIFO), not a regular file");
      expect(verify.code).toBe(1);
      expect(spawnSync("mkfifo", [join(dir, "values.csv")]).status).toBe(0);
      expect(readValuesCsv(join(dir, "values.csv"), "values.csv").diagnostics.map((d) => d.message)).toEqual([
        "cannot read the file: it is a named pipe (FIFO), not a regular file",
      ]);
      expect(readValuesCsv("/dev/zero", "zero.csv").diagnostics.map((d) => d.message)).toEqual([
        "cannot read the file: it is a character device, not a regular file",
      ]);
    } finally {
      removeDir(dir);
    }
  });

  it("passes on policies/ with no network and no credentials, and the same for every example repo", async () => {
    const env = { REVSYNC_CLIENT_ID: undefined, REVSYNC_CLIENT_SECRET: undefined, REVSYNC_PASSWORD: undefined, HTTPS_PROXY: "http://127.0.0.1:9" };
    const r = await cli(["validate"], { env });
    expect(r.stdout).toMatch(/^Valid: \d+ policy documents, no problems\./);
    expect(r.code).toBe(0);
    const { readdirSync, existsSync } = await import("node:fs");
    const examples = join(ROOT, "examples");
    const repos = existsSync(examples) ? readdirSync(examples).filter((d) => existsSync(join(examples, d, "revsync.yaml"))) : [];
    for (const repo of repos) {
      const e = await cli(["validate"], { cwd: join(examples, repo), env });
      expect(`${repo}: ${e.stdout}`).toMatch(/Valid:/);
      expect(e.code).toBe(0);
    }
  });

  it("no revsync.yaml: a plain error and exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "revsync-none-"));
    try {
      const r = await cli(["validate"], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Error: no revsync\.yaml in .* or any parent folder/);
    } finally {
      removeDir(dir);
    }
  });
});

describe("variables (one set of rules for every file)", () => {
  function repoWith(
    policy: string,
    config = "version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: http://127.0.0.1:9\n    realm: demo\n    vars:\n      contra_account: MJ-1\n",
  ): string {
    const dir = mkdtempSync(join(tmpdir(), "revsync-vars-"));
    mkdirSync(join(dir, "policies"));
    writeFileSync(join(dir, "revsync.yaml"), config);
    writeFileSync(join(dir, "policies", "p.yaml"), policy);
    return dir;
  }
  const ssp = (spec: string) => `apiVersion: revsync/v1\nkind: SspPolicy\nmetadata:\n  name: Hardware SSP\nspec:\n${spec}---\n`;

  it("an undefined variable is reported with every other problem of the file, and 'did you mean' one edit away", () => {
    const dir = repoWith(ssp("  method: upload\n  hierarchy_no: ${hardware_flor}\n  active: yes-please\n"));
    try {
      const d = validateRepo({ cwd: dir, env: { hardware_floor: "80" } }).diagnostics;
      expect(d.map((x) => `${x.line}:${x.column} ${x.message}`)).toEqual([
        "7:17 undefined variable ${hardware_flor}: define it under the environment's vars in revsync.yaml",
        '8:11 spec.active: expected a boolean (true or false), got the string "yes-please"',
      ]);
    } finally {
      removeDir(dir);
    }
  });

  it("a whole-value variable from the process environment (through vars) becomes a number or boolean where the schema wants one", () => {
    const dir = repoWith(
      ssp("  method: upload\n  hierarchy_no: ${hw_rank}\n  floor_percentage: ${hardware_floor}\n  active: ${hw_active}\n  type: ${hw_type}\n"),
      "version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: http://127.0.0.1:9\n    realm: demo\n    vars:\n      hw_rank: ${HW_RANK}\n      hardware_floor: ${HW_FLOOR}\n      hw_active: ${HW_ACTIVE}\n      hw_type: '${HW_TYPE}'\n",
    );
    try {
      expect(validateRepo({ cwd: dir, env: { HW_RANK: "10", HW_FLOOR: "80", HW_ACTIVE: "true", HW_TYPE: "42" } }).diagnostics).toEqual([]);
      const bad = validateRepo({ cwd: dir, env: { HW_RANK: "ten", HW_FLOOR: "80", HW_ACTIVE: "true", HW_TYPE: "42" } }).diagnostics;
      expect(bad.map((x) => x.message)).toEqual([
        'spec.hierarchy_no: expected a whole number, got the string "ten" (from ${hw_rank}, which the environment\'s vars in revsync.yaml fill from the process variable HW_RANK)',
      ]);
    } finally {
      removeDir(dir);
    }
  });

  it("a policy file reads only the vars revsync.yaml declares: a process variable it names directly is an error that says how to declare it", () => {
    const dir = repoWith(ssp("  method: upload\n  floor_percentage: ${hardware_floor}\n"));
    try {
      const d = validateRepo({ cwd: dir, env: { hardware_floor: "80" } }).diagnostics;
      expect(d.map((x) => `${x.file}:${x.line}:${x.column} ${x.message}`)).toEqual([
        "policies/p.yaml:7:21 ${hardware_floor} is not one of the environment's vars: a policy file reads only the vars revsync.yaml declares, not the process environment; to read the process variable hardware_floor, declare it under the environment's vars in revsync.yaml (hardware_floor: ${hardware_floor})",
      ]);
    } finally {
      removeDir(dir);
    }
  });

  it("every environment is checked unless --env, and a problem of one environment's vars names it", async () => {
    const config =
      "version: 1\npolicies: policies\nenvironments:\n  sandbox:\n    base_url: http://127.0.0.1:9\n    realm: a\n    vars: { contra: MJ-1 }\n  production:\n    base_url: ${PROD_URL}\n    realm: b\n    vars: { contra: '${PROD_CONTRA}' }\n";
    const dir = repoWith(
      "apiVersion: revsync/v1\nkind: TenantConfiguration\nmetadata: { name: T }\nspec:\n  manual_journal_contra_account: ${contra}\n",
      config,
    );
    try {
      const all = validateRepo({ cwd: dir, env: {} }).diagnostics;
      expect(all.map((x) => `${x.file}:${x.line}:${x.column} ${x.severity} ${x.message}`)).toEqual([
        // A URL's variable that only CI sets: a warning naming it and where, never a failed validate.
        "revsync.yaml:9:15 warning environments.production.base_url: undefined variable ${PROD_URL}: set it in the process environment (a CI variable, say); plan, apply and drift of environment production need it where they run (validate and test read no URL)",
        "revsync.yaml:11:21 error environments.production.vars.contra: undefined variable ${PROD_CONTRA}: set it in the process environment (a CI variable, say) (environment production)",
      ]);
      expect(validateRepo({ cwd: dir, env: {}, envName: "sandbox" }).diagnostics).toEqual([]);
      expect(validateRepo({ cwd: dir, env: { PROD_CONTRA: "MJ-2", PROD_URL: "https://api.example.com" } }).diagnostics).toEqual([]);
      // REVSYNC_BASE_URL stands for every environment's base_url, as it does in plan.
      expect(validateRepo({ cwd: dir, env: { PROD_CONTRA: "MJ-2", REVSYNC_BASE_URL: "https://api.example.com" } }).diagnostics).toEqual([]);
      // The command: the warning, and exit 0; plan of that environment refuses, naming the same place.
      const validated = await cli(["validate"], { cwd: dir, env: { PROD_CONTRA: "MJ-2", PROD_URL: undefined } });
      expect(validated.code).toBe(0);
      expect(validated.stdout).toContain("revsync.yaml:9:15: warning: environments.production.base_url: undefined variable ${PROD_URL}");
      expect(validated.stdout).toContain("Valid: 1 policy document, 1 warning.");
      const planned = await cli(["plan", "--env", "production"], { cwd: dir, env: { PROD_CONTRA: "MJ-2", PROD_URL: undefined } });
      expect(planned.code).toBe(1);
      expect(planned.stderr).toContain("revsync.yaml:9:15: error: environments.production.base_url: undefined variable ${PROD_URL}");
    } finally {
      removeDir(dir);
    }
  });

  it("a trailing empty document (a last ---) is allowed", () => {
    const dir = repoWith(ssp("  method: upload\n") + "\n---\n");
    try {
      expect(validateRepo({ cwd: dir, env: {} }).diagnostics).toEqual([]);
    } finally {
      removeDir(dir);
    }
  });
});

describe("validate says each problem once, where it is, in the order of the files' lines", () => {
  const VALUES_HEADER = "product_id,currency_code,value_type,below_mid_point,mid_point,above_mid_point,effective_start_date,effective_end_date\n";
  /** A policy repo of files (paths under the repo), with revsync.yaml's vars hw_floor: ${HW_FLOOR}. */
  function repo(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), "revsync-once-"));
    const config =
      "version: 1\npolicies: policies\nenvironments:\n  demo:\n    base_url: http://127.0.0.1:9\n    realm: demo\n    vars:\n      hw_floor: ${HW_FLOOR}\n";
    writeFileSync(join(dir, "revsync.yaml"), config);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dir, name, ".."), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    return dir;
  }
  const policy = (name: string, spec: string, batches = ""): string =>
    `apiVersion: revsync/v1\nkind: SspPolicy\nmetadata:\n  name: ${name}\nspec:\n  method: upload\n  active: true\n  data_identifiers: [product_id]\n${spec}${batches}`;
  const said = (d: { file: string; line: number; column: number; message: string }[]): string[] => d.map((x) => `${x.file}:${x.line}:${x.column} ${x.message}`);

  it("a values row: every problem of it, not only the first (a negative point beside a number that is not exact)", () => {
    const dir = repo({
      "policies/hw.yaml": policy("Hardware SSP", "  hierarchy_no: 10\n", "batches:\n  - { name: FY26, status: approved, values: hw.csv }\n"),
      "policies/hw.csv": `${VALUES_HEADER}HW-1010,USD,Percent,-1,103,9007199254740993,2026-01-01,2026-06-30\nHW-1011,USD,Percent,5,3,-2,2026-01-01,2026-06-30\n`,
    });
    try {
      expect(said(validateRepo({ cwd: dir, env: { HW_FLOOR: "80" } }).diagnostics)).toEqual([
        "policies/hw.csv:2:21 below_mid_point must be 0 or more (an amount or a percent of the list price), got -1",
        'policies/hw.csv:2:28 above_mid_point must be a whole number, got "9007199254740993": 9007199254740993 is beyond 9007199254740991 (2^53 - 1), the largest whole number a double holds exactly: it would be read as 9007199254740992',
        "policies/hw.csv:3:21 expected below_mid_point <= mid_point <= above_mid_point, got 5, 3, -2",
        "policies/hw.csv:3:25 above_mid_point must be 0 or more (an amount or a percent of the list price), got -2",
      ]);
    } finally {
      removeDir(dir);
    }
  });

  it("a number that is not exact is said once: no rule compares the number YAML rounded it to", () => {
    const dir = repo({
      "policies/big.yaml": policy("Big SSP", "  hierarchy_no: 1e300\n  floor_percentage: 12345678901234567890\n  ceiling_percentage: 115\n"),
      "policies/bigger.yaml": policy("Bigger SSP", "  hierarchy_no: 1e300\n  floor_percentage: 80\n  ceiling_percentage: 115\n"),
    });
    try {
      const d = said(validateRepo({ cwd: dir, env: { HW_FLOOR: "80" } }).diagnostics);
      expect(d.map((x) => x.slice(0, x.indexOf(" ")))).toEqual(["policies/big.yaml:9:17", "policies/big.yaml:10:21", "policies/bigger.yaml:9:17"]);
      expect(d.join("\n")).not.toMatch(/12345678901234567000 is above|also held by/);
    } finally {
      removeDir(dir);
    }
  });

  it("a var revsync.yaml cannot fill is one problem, said there; a value that cannot be read names the variable it came from", async () => {
    const dir = repo({
      "policies/hardware-ssp.yaml": policy("Hardware SSP", "  hierarchy_no: 10\n  floor_percentage: ${hw_floor}\n  ceiling_percentage: 115\n"),
    });
    try {
      expect(said(validateRepo({ cwd: dir, env: {} }).diagnostics)).toEqual([
        "revsync.yaml:8:17 environments.demo.vars.hw_floor: undefined variable ${HW_FLOOR}: set it in the process environment (a CI variable, say)",
      ]);
      const abc = await cli(["validate"], { cwd: dir, env: { HW_FLOOR: "abc" } });
      expect(abc.code).toBe(1);
      expect(abc.stdout).toContain(
        'policies/hardware-ssp.yaml:10:21: error: spec.floor_percentage: expected a whole number, got the string "abc" (from ${hw_floor}, which the environment\'s vars in revsync.yaml fill from the process variable HW_FLOOR)\n',
      );
    } finally {
      removeDir(dir);
    }
  });

  it("each file's problems together and in line order, whatever the file names hold (é written two ways, a zero-width space)", async () => {
    const bad = "apiVersion: revsync/v1\nkind: SspPolicy\nmetadata:\n  name: N\nspec:\n  method: magic\n  active: maybe\n";
    const names = ["policies/caf\u00e9.yaml", "policies/cafe\u0301.yaml", "policies/hard\u200bware.yaml", "policies/hardware.yaml"];
    const dir = repo(Object.fromEntries(names.map((n, i) => [n, bad.replace("name: N", `name: N${i}`)])));
    try {
      const r = await cli(["validate", "--format", "json"], { cwd: dir, env: { HW_FLOOR: "80" } });
      const d: { file: string; line: number }[] = JSON.parse(r.stdout).diagnostics;
      // Two problems (lines 6 and 7) of each file, one file after the other.
      expect(d.map((x) => x.line)).toEqual([6, 7, 6, 7, 6, 7, 6, 7]);
      expect(new Set(d.map((x) => x.file)).size).toBe(4);
      for (let i = 0; i < d.length; i += 2) expect(d[i]?.file).toBe(d[i + 1]?.file);
    } finally {
      removeDir(dir);
    }
  });
});
