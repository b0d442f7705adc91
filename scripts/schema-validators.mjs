// The JSON Schemas of schemas/ as standard validators read them, each the real tool run as a user runs
// it, with no flag but the schema and the file: ajv-cli (test/schemas.tools.test.ts), yaml-language-server
// through its language server protocol, as editors drive it (the same test), and Python's jsonschema,
// reading files as check-jsonschema does (npm run test:install, which makes a Python venv).
// Each takes checks: a file, the schema it is checked against, and whether it must pass.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SCHEMAS = join(ROOT, "schemas");

/** The policy repos of this repository (the quick start's and examples/), every YAML file of them with
 *  the schema it is written against: revsync.yaml the config's, every other the policy file's. */
export function examples() {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(name)) out.push(path);
    }
  };
  for (const d of ["policies", "policy-tests", "examples/multi-env", "examples/policy-tests"]) walk(join(ROOT, d));
  const configs = [join(ROOT, "revsync.yaml"), ...out.filter((f) => basename(f) === "revsync.yaml")];
  return [
    ...[...new Set(configs)].map((file) => ({ file, schema: join(SCHEMAS, "revsync-config.schema.json"), valid: true })),
    ...out.filter((f) => basename(f) !== "revsync.yaml").map((file) => ({ file, schema: join(SCHEMAS, "policy-file.schema.json"), valid: true })),
  ];
}

/** Mistakes a validator must find, written into dir: a misspelled field in a policy file that uses
 *  ${VAR}s (examples/multi-env's tenant configuration) and in a revsync.yaml; and in an SSP policy that
 *  uses ${VAR}s (examples/multi-env's edge devices), each value revsync refuses though it has the right
 *  type: a number beyond what a double holds exactly, a name that cannot travel in a URL, a day that does
 *  not exist, a formula policy without its expression. */
export function typos(dir) {
  mkdirSync(dir, { recursive: true });
  const tc = readFileSync(join(ROOT, "examples", "multi-env", "policies", "tenant-configuration.yaml"), "utf8");
  const config = readFileSync(join(ROOT, "examples", "multi-env", "revsync.yaml"), "utf8");
  const ssp = readFileSync(join(ROOT, "examples", "multi-env", "policies", "ssp", "edge-devices.yaml"), "utf8");
  const write = (name, text) => (writeFileSync(join(dir, name), text), join(dir, name));
  if (!/^spec:$/m.test(tc) || !/^environments:$/m.test(config)) throw new Error("the examples changed: pick other typos");
  const edits = {
    "hierarchy-1e300": ["hierarchy_no: 60", "hierarchy_no: 1e300"],
    "hierarchy-20-digits": ["hierarchy_no: 60", "hierarchy_no: 12345678901234567890"],
    "ceiling-negative-2e53": ["ceiling_percentage: 115", "ceiling_percentage: -9007199254740993"],
    "name-dot-dot": ["name: Edge Devices SSP", 'name: ".."'],
    "name-blanks": ["name: Edge Devices SSP", 'name: "   "'],
    "name-control": ["name: Edge Devices SSP", 'name: "Edge\\x01Devices"'],
    "batch-name-dot": ["- name: FY26-H1", '- name: "."'],
    "batch-date": ["    status: approved", '    status: approved\n    effective_start_date: "2026-13-45"'],
    "formula-no-expression": ["method: upload", "method: formula"],
  };
  const sspTypos = Object.entries(edits).map(([name, [from, to]]) => {
    if (!ssp.includes(from)) throw new Error(`the edge devices example changed: ${from} is gone`);
    return { file: write(`typo-ssp-${name}.yaml`, ssp.replace(from, to)), schema: join(SCHEMAS, "policy-file.schema.json"), valid: false };
  });
  return [
    {
      file: write("typo-policy.yaml", tc.replace(/^spec:$/m, "spec:\n  carves_alocation: true")),
      schema: join(SCHEMAS, "policy-file.schema.json"),
      valid: false,
    },
    {
      file: write("typo-revsync.yaml", config.replace(/^environments:$/m, "enviroments: {}\nenvironments:")),
      schema: join(SCHEMAS, "revsync-config.schema.json"),
      valid: false,
    },
    ...sspTypos,
  ];
}

/** A saved plan and an evidence record revsync wrote, each also with a mistake, in dir: a create's
 *  body without compliance_name (checked through plan.schema.json's copy of the API's definition), and
 *  a record whose hash field is misspelled. */
export function outputs(planFile, evidenceFile, dir, reportFile) {
  mkdirSync(dir, { recursive: true });
  const plan = readFileSync(planFile, "utf8");
  const record = readFileSync(evidenceFile, "utf8");
  if (!/"compliance_name": /.test(plan) || !/"hash": /.test(record)) throw new Error("the plan has no create, or the record no hash");
  writeFileSync(join(dir, "typo-plan.json"), plan.replace(/"compliance_name": /, '"compliance_nmae": '));
  writeFileSync(join(dir, "typo-evidence.json"), record.replace(/"hash": /, '"hsh": '));
  const planSchema = join(SCHEMAS, "plan.schema.json");
  const evidenceSchema = join(SCHEMAS, "evidence-record.schema.json");
  const checks = [
    { file: planFile, schema: planSchema, valid: true },
    { file: evidenceFile, schema: evidenceSchema, valid: true },
    { file: join(dir, "typo-plan.json"), schema: planSchema, valid: false },
    { file: join(dir, "typo-evidence.json"), schema: evidenceSchema, valid: false },
  ];
  if (reportFile) {
    // apply --format json's report: a typo in an outcome's name.
    const report = readFileSync(reportFile, "utf8");
    if (!/"outcome": "done"/.test(report)) throw new Error("the apply report has no done outcome");
    writeFileSync(join(dir, "typo-report.json"), report.replace(/"outcome": "done"/, '"outcome": "dnoe"'));
    const reportSchema = join(SCHEMAS, "apply-report.schema.json");
    checks.push({ file: reportFile, schema: reportSchema, valid: true }, { file: join(dir, "typo-report.json"), schema: reportSchema, valid: false });
  }
  return checks;
}

/** For validators that read one YAML document per file (ajv-cli, check-jsonschema): each document of a
 *  file of several, as a file of its own in dir, named after where it came from. */
export function oneDocumentEach(checks, dir) {
  mkdirSync(dir, { recursive: true });
  return checks.flatMap((c) => {
    if (!/\.ya?ml$/.test(c.file)) return [c];
    const docs = readFileSync(c.file, "utf8").split(/^---$/m);
    if (docs.length === 1) return [c];
    const stem = relative(ROOT, c.file)
      .replace(/[/\\]/g, "_")
      .replace(/\.ya?ml$/, "");
    return docs.map((text, i) => {
      const file = join(dir, `${stem}.${i + 1}.yaml`);
      writeFileSync(file, text);
      return { ...c, file };
    });
  });
}

/** ajv-cli, once per schema, `ajv validate -s SCHEMA -d FILE -d FILE…`: for each check, what ajv said
 *  of its file ("valid" or its errors), and anything it printed about the schema itself (strict mode). */
export function ajv(checks) {
  const bin = join(ROOT, "node_modules", "ajv-cli", "dist", "index.js");
  const results = [];
  const schemaNotes = [];
  for (const schema of new Set(checks.map((c) => c.schema))) {
    const mine = checks.filter((c) => c.schema === schema);
    const r = spawnSync(process.execPath, [bin, "validate", "-s", schema, ...mine.flatMap((c) => ["-d", c.file])], { encoding: "utf8", cwd: ROOT });
    const out = `${r.stdout}${r.stderr}`;
    schemaNotes.push(...out.split("\n").filter((l) => /strict mode|schema .* is invalid|error:/.test(l)));
    for (const c of mine) {
      const valid = out.includes(`${c.file} valid\n`);
      const invalid = out.includes(`${c.file} invalid\n`);
      results.push({
        ...c,
        passed: valid && !invalid,
        said: valid ? "valid" : invalid ? out.slice(out.indexOf(`${c.file} invalid`)).split(/\n(?=\S+ (?:in)?valid\n)/)[0] : out,
      });
    }
  }
  return { results, schemaNotes };
}

/** yaml-language-server (the engine of VS Code's YAML extension), started with --stdio and spoken to in
 *  its protocol as an editor does: `open` sends a document and resolves with the diagnostics it
 *  publishes for it. Its settings are an editor's: `schemas` maps a schema to globs as
 *  .vscode/settings.json's yaml.schemas does; the JSON Schema Store's catalogue is off (it is fetched
 *  from the network, and no file here needs it). */
export async function yamlLanguageServer(workspace, schemas = {}) {
  const bin = join(ROOT, "node_modules", "yaml-language-server", "bin", "yaml-language-server");
  const child = spawn(process.execPath, [bin, "--stdio"], { stdio: ["pipe", "pipe", "pipe"] });
  const settings = { validate: true, hover: false, completion: false, format: { enable: false }, schemaStore: { enable: false }, schemas };
  let buf = Buffer.alloc(0);
  let id = 0;
  const answers = new Map();
  const waiting = new Map();
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const send = (msg) => {
    const s = JSON.stringify({ jsonrpc: "2.0", ...msg });
    child.stdin.write(`Content-Length: ${Buffer.byteLength(s)}\r\n\r\n${s}`);
  };
  child.stdout.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const head = buf.indexOf("\r\n\r\n");
      if (head < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, head).toString())?.[1]);
      if (buf.length < head + 4 + length) return;
      const msg = JSON.parse(buf.subarray(head + 4, head + 4 + length).toString());
      buf = buf.subarray(head + 4 + length);
      if (msg.method === "workspace/configuration") send({ id: msg.id, result: msg.params.items.map((i) => (i.section === "yaml" ? settings : null)) });
      else if (msg.method && msg.id !== undefined) send({ id: msg.id, result: null });
      else if (msg.id !== undefined) answers.get(msg.id)?.(msg);
      else if (msg.method === "textDocument/publishDiagnostics") waiting.get(msg.params.uri)?.(msg.params.diagnostics);
    }
  });
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      answers.set(n, (msg) => (msg.error ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result)));
      send({ id: n, method, params });
    });
  const exited = new Promise((resolve) => child.on("close", resolve));
  const root = pathToFileURL(workspace).href;
  await request("initialize", {
    processId: process.pid,
    rootUri: root,
    workspaceFolders: [{ uri: root, name: basename(workspace) }],
    capabilities: { workspace: { configuration: true }, textDocument: { publishDiagnostics: {} } },
  });
  send({ method: "initialized", params: {} });
  send({ method: "workspace/didChangeConfiguration", params: { settings: { yaml: settings } } });
  return {
    /** The diagnostics of a document at `file` (it need not exist on disk: the text is sent). */
    open(file, text = readFileSync(file, "utf8")) {
      const uri = pathToFileURL(file).href;
      const published = new Promise((resolve) => waiting.set(uri, resolve));
      send({ method: "textDocument/didOpen", params: { textDocument: { uri, languageId: "yaml", version: 1, text } } });
      return Promise.race([published, exited.then(() => Promise.reject(new Error(`yaml-language-server exited: ${stderr}`)))]);
    },
    async close() {
      await request("shutdown", null).catch(() => undefined);
      send({ method: "exit", params: null });
      await exited;
    },
  };
}

/** Python's jsonschema over the checks, run by `python` (a venv's, with jsonschema and ruamel.yaml):
 *  each file read and checked as check-jsonschema reads and checks it (scripts/schema-check.py). */
export function python(pythonBin, checks) {
  const r = spawnSync(pythonBin, [join(ROOT, "scripts", "schema-check.py")], { input: JSON.stringify(checks), encoding: "utf8", cwd: dirname(ROOT) });
  if (r.status !== 0) throw new Error(`scripts/schema-check.py failed (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout).map((said, i) => ({ ...checks[i], passed: said === "valid", said }));
}
