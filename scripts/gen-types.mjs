// Writes what schemas/ and the kinds' registry (src/kinds/registry.ts) imply, for every committed file
// that follows from another:
// - schemas/api.schema.json's definitions of each kind, from its folder's api.schema.json
//   (src/kinds/<kind>/), each marked as assembled there;
// - schemas/policy-file.schema.json, a policy document of any kind as written, from each kind's schema in
//   schemas/policy/ and the policy tests' (what revsync checks once ${VAR}s are filled), each value also
//   allowed to be a ${VAR}: what editors and JSON Schema validators read;
// - schemas/plan.schema.json's parts the registry makes (src/plan/schema.ts: the kinds' addresses, the
//   actions each writes and their payloads), and the definitions of schemas/api.schema.json it names
//   (#/definitions/X, X not its own), copied into it; likewise those of
//   schemas/evidence-record.schema.json that schemas/apply-report.schema.json names, so that each stands
//   alone for every validator;
// - TypeScript types for the schemas, with json-schema-to-typescript, and the precompiled validators (the
//   policy formats, and each kind's answers and request bodies).
// The registry is read as revsync runs it: src/kinds/registry.ts and src/plan/schema.ts bundled by esbuild
// (the precompiled validators left out, as this script writes them).
// `node scripts/gen-types.mjs --check` writes nothing and exits 1 when a committed file is stale. A check
// that passed leaves a stamp (in the clone's ignored .revsync-tmp/): the digest of every file the output
// can follow from and of the outputs themselves (src/, schemas/, scripts/, package-lock.json, Node's
// version). The next check with the same digest passes without rendering again (2 to 3 s of CPU in
// npm test); any change to one of those files renders and compares anew.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The digest a passed check is stamped with: every file under the folders the output follows from (the
 *  outputs among them), in path order, with package-lock.json and Node's version. */
function checkDigest() {
  const hash = createHash("sha256").update(`${process.version}\n`);
  const walk = (rel) =>
    readdirSync(join(root, rel), { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .flatMap((e) => (e.isDirectory() ? walk(join(rel, e.name)) : e.isFile() ? [join(rel, e.name)] : []));
  for (const path of [...walk("src"), ...walk("schemas"), ...walk("scripts"), "package-lock.json"])
    hash.update(`${path}\0${readFileSync(join(root, path)).length}\0`).update(readFileSync(join(root, path)));
  return hash.digest("hex");
}

const check = process.argv.includes("--check");
const STAMP = join(root, ".revsync-tmp", "gen-types-checked");
const digest = check ? checkDigest() : undefined;
if (check && existsSync(STAMP) && readFileSync(STAMP, "utf8") === digest) process.exit(0);
// The libraries that render, loaded only when a check must render (they take most of a stamped check's time).
const { compile } = await import("json-schema-to-typescript");
const { Ajv } = await import("ajv");
const { default: standaloneModule } = await import("ajv/dist/standalone/index.js");
const { applyEdits, modify } = await import("jsonc-parser");
const prettier = await import("prettier");

/** The registry as revsync runs it: its kinds, and the parts of the plan's schema they make. Only their
 *  data is read here, so each package the modules import (and the validators this script writes) is an
 *  inert stand-in in the bundle: loading undici, yaml and the rest took twice as long as the rest of it. */
async function loadRegistry() {
  const { build } = await import("esbuild");
  const out = join(root, ".revsync-tmp", "gen-types-registry.mjs");
  const STANDIN = `const s = new Proxy(function () {}, { get: (_, k) => (k === "prototype" ? {} : k === "__esModule" ? false : s), apply: () => s, construct: () => s }); module.exports = s;`;
  const inert = {
    name: "inert-packages",
    setup(b) {
      b.onResolve({ filter: /validators\.cjs$|^[a-z@][^:]*$/ }, (a) => ({ path: a.path, namespace: "inert" }));
      b.onLoad({ filter: /.*/, namespace: "inert" }, () => ({ contents: STANDIN, loader: "js" }));
    },
  };
  await build({
    absWorkingDir: root,
    stdin: {
      contents: 'export { KINDS } from "./src/kinds/registry.ts";\nexport { planSchemaEdits } from "./src/plan/schema.ts";\n',
      resolveDir: root,
      loader: "ts",
    },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: out,
    logLevel: "warning",
    plugins: [inert],
  });
  return import(`${pathToFileURL(out).href}?${Date.now()}`);
}
const { KINDS: REGISTRY, planSchemaEdits } = await loadRegistry();
/** The kinds whose schema is a file of schemas/policy/, in the registry's order. */
const KIND_SCHEMAS = REGISTRY.filter((k) => typeof k.schema === "string").map((k) => ({ fileKind: k.fileKind, path: `schemas/${k.schema}` }));
/** Each kind's answers and request bodies: its folder's api.schema.json, where it has one. */
const KIND_APIS = REGISTRY.map((k) => ({ name: k.name, path: `src/kinds/${k.name}/api.schema.json` })).filter((k) => existsSync(join(root, k.path)));
/** The files of the tests a repo holds (no resource kind's): their `kind:` and schema. */
const TEST_FILES = [
  ["SspPolicyTest", "schemas/policy/ssp-policy-test.schema.json"],
  ["GuardrailTest", "schemas/policy/guardrail-test.schema.json"],
];

const outputs = [
  { out: "src/schema/generated/api.ts", schemas: ["schemas/api.schema.json"] },
  {
    out: "src/schema/generated/policy.ts",
    schemas: ["schemas/revsync-config.schema.json", ...KIND_SCHEMAS.map((k) => k.path), ...TEST_FILES.map(([, path]) => path)],
  },
];
const banner = "/* Generated by `npm run gen:types` from schemas/. Do not edit by hand. */";

// Precompiled validators of the policy-file formats (ajv standalone code), so that `revsync validate`
// does not compile schemas at start-up. Export names map to the schema files; src/schema/ajv.ts loads it.
const VALIDATORS = "schemas/generated/validators.cjs";
/** The name ajv's standalone module exports a schema file's validator under (src/schema/ajv.ts,
 *  standaloneName): its file name in camel case. */
const standaloneName = (file) =>
  file
    .replace(/^.*\//, "")
    .replace(/\.schema\.json$/, "")
    .replace(/-([a-z])/g, (_, c) => c.toUpperCase());
const STANDALONE = {
  config: "revsync-config.schema.json",
  ...Object.fromEntries(KIND_SCHEMAS.map((k) => [standaloneName(k.path), k.path.replace(/^schemas\//, "")])),
  plan: "plan.schema.json",
  ...Object.fromEntries(TEST_FILES.map(([, path]) => [standaloneName(path), path.replace(/^schemas\//, "")])),
  evidenceRecord: "evidence-record.schema.json",
};

// Definitions of schemas/api.schema.json that the client checks answers against and the emulator
// checks request bodies against, exported as api_<Definition>: those of no kind, and each kind's own that
// none of its others names (its answers and request bodies, not their parts).
const SHARED_API_DEFINITIONS = [
  "PendingApprovals",
  "ApprovalActionResult",
  "ErrorTransactionsList",
  "TokenResponse",
  "ApprovalActionBody",
  "ErrorTransactionFilter",
];
async function apiDefinitions() {
  const roots = [];
  for (const k of KIND_APIS) {
    const { definitions = {} } = await readJson(k.path);
    const named = new Set([...refsOf(definitions)].map((r) => r.replace(/^#\/definitions\//, "")));
    roots.push(...Object.keys(definitions).filter((d) => !named.has(d)));
  }
  return [...roots, ...SHARED_API_DEFINITIONS];
}

async function renderValidators(schemaText) {
  const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, code: { source: true } });
  ajv.addSchema(JSON.parse(schemaText(API)), "api.schema.json");
  for (const file of Object.values(STANDALONE)) ajv.addSchema(JSON.parse(schemaText(`schemas/${file}`)), file);
  const exports = { ...STANDALONE };
  for (const d of await apiDefinitions()) exports[`api_${d}`] = `api.schema.json#/definitions/${d}`;
  const standalone = standaloneModule.default ?? standaloneModule;
  return `/* eslint-disable */\n${banner}\n${standalone(ajv, exports)}\n`;
}

// The kinds of policy document, each with its schema (a document once its ${VAR}s are filled): the
// registry's, and the tests' files.
const KINDS = { ...Object.fromEntries(KIND_SCHEMAS.map((k) => [k.fileKind, k.path])), ...Object.fromEntries(TEST_FILES) };
const POLICY_FILE = "schemas/policy-file.schema.json";
const PLAN = "schemas/plan.schema.json";
const API = "schemas/api.schema.json";
/** Schemas that hold copies of another's definitions, and where each copies them from. */
const COPIES = [
  { target: PLAN, source: API },
  // The guardrails' outcomes and judgement, as a plan holds them (copied before the record is copied on).
  { target: "schemas/evidence-record.schema.json", source: PLAN },
  { target: "schemas/apply-report.schema.json", source: "schemas/evidence-record.schema.json" },
];
/** The mark of a definition gen:types copied into a schema from another. */
const copiedMark = (source) => `Copied from ${source.replace(/^schemas\//, "")} by npm run gen:types: edit it there.`;
// The form of a variable, as revsync reads it (src/config/interpolate.ts).
const NAME = "\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}";

const readJson = async (path) => JSON.parse(await readFile(join(root, path), "utf8"));
/** JSON as Prettier writes it (npm run format), so that the check and format:check agree. */
const formatJson = async (path, value) =>
  prettier.format(JSON.stringify(value, null, 2), { ...(await prettier.resolveConfig(join(root, path))), filepath: join(root, path) });

/** Every "$ref" in a schema, rewritten by fn. */
function mapRefs(node, fn) {
  if (Array.isArray(node)) return node.map((n) => mapRefs(n, fn));
  if (!node || typeof node !== "object") return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? fn(v) : mapRefs(v, fn)]));
}
const refsOf = (node, out = new Set()) => {
  mapRefs(node, (r) => (out.add(r), r));
  return out;
};

const SCALAR = new Set(["string", "integer", "number", "boolean", "null"]);
// What describes a value rather than constraining it: stays on the outer schema when a value is wrapped.
const ANNOTATIONS = ["title", "description", "default", "examples"];
/** A schema of a document as written: wherever a value may stand (a property, an item, a definition, a
 *  branch of allOf/anyOf/oneOf or a then), a scalar value may also be a whole ${VAR}, and a constrained
 *  text (an enum, a pattern) text with ${VAR}s in it. Conditions (if, not) are left as they are: a
 *  ${VAR} meets none of their constants, so a rule that depends on a value is not applied to a variable. */
function asWritten(node) {
  if (Array.isArray(node) || !node || typeof node !== "object") return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (["properties", "patternProperties", "definitions"].includes(k)) out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, asWritten(s)]));
    else if (["items", "additionalProperties", "then", "else"].includes(k)) out[k] = asWritten(v);
    else if (["allOf", "anyOf", "oneOf"].includes(k)) out[k] = v.map(asWritten);
    else out[k] = v;
  }
  const types = node.type === undefined ? [] : [node.type].flat();
  const values = [...(node.enum ?? []), ...("const" in node ? [node.const] : [])];
  const scalar = types.length ? types.every((t) => SCALAR.has(t)) : values.length > 0;
  if (!scalar) return out;
  const text = types.length ? types.every((t) => t === "string" || t === "null") : values.every((v) => typeof v === "string");
  // Any text is allowed already: nothing to add.
  if (text && !["enum", "const", "pattern", "format", "maxLength"].some((k) => k in node)) return out;
  const inner = Object.fromEntries(Object.entries(out).filter(([k]) => !ANNOTATIONS.includes(k)));
  const outer = Object.fromEntries(Object.entries(out).filter(([k]) => ANNOTATIONS.includes(k)));
  return { ...outer, anyOf: [inner, { $ref: text ? "#/definitions/TextWithVariables" : "#/definitions/Variable" }] };
}

async function renderPolicyFile() {
  const definitions = {
    Variable: {
      description: "${NAME}: the value of the variable NAME, of its own type (the environment's vars in revsync.yaml, or the process environment)",
      type: "string",
      pattern: `^${NAME}$`,
    },
    TextWithVariables: {
      description: "Text with ${NAME}s in it, each filled with the value of the variable NAME",
      type: "string",
      pattern: NAME,
    },
  };
  for (const [kind, path] of Object.entries(KINDS)) {
    const { $schema: _schema, $id: _id, definitions: own = {}, ...schema } = await readJson(path);
    const local = (ref) => (ref === "#" ? `#/definitions/${kind}` : ref.replace(/^#\/definitions\//, `#/definitions/${kind}.`));
    definitions[kind] = asWritten(mapRefs(schema, local));
    for (const [name, def] of Object.entries(own)) definitions[`${kind}.${name}`] = asWritten(mapRefs(def, local));
  }
  const kinds = Object.keys(KINDS);
  return formatJson(POLICY_FILE, {
    $schema: "http://json-schema.org/draft-07/schema#",
    $id: "urn:revsync:schema:policy-file",
    $comment: "Generated by npm run gen:types from schemas/policy/: edit those.",
    title: "RevsyncPolicyFile",
    description:
      "Any document of a revsync policy repo as written, whatever its kind, ${VAR}s and all: the schema that editors map to policies/** (revsync init writes it into .revsync/schemas/). It stands alone: no reference to another file.",
    type: "object",
    required: ["kind"],
    properties: { kind: asWritten({ enum: kinds }) },
    allOf: kinds.map((kind) => ({
      if: { type: "object", required: ["kind"], properties: { kind: { const: kind } } },
      then: { $ref: `#/definitions/${kind}` },
    })),
    definitions,
  });
}

const FORMATTING = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" } };
/** Whether two JSON values are the same, whatever their keys' order. */
const sorted = (v) =>
  Array.isArray(v)
    ? v.map(sorted)
    : v && typeof v === "object"
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted(v[k])]),
        )
      : v;
const same = (a, b) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const at = (node, path) => path.reduce((n, k) => n?.[k], node);
/** JSON text edited in place (jsonc-parser, as editors edit JSON): the rest keeps its text, its one-line
 *  objects included. `value` undefined removes what is at `path`. */
const edited = (text, path, value) => applyEdits(text, modify(text, path, value, FORMATTING));
const prettierJson = async (path, text) => prettier.format(text, { ...(await prettier.resolveConfig(join(root, path))), filepath: join(root, path) });

/** The mark of a definition of schemas/api.schema.json that a kind's folder holds. */
const assembledMark = (path) => `Assembled from ${path} by npm run gen:types: edit it there.`;
/** schemas/api.schema.json with each kind's definitions as its folder's api.schema.json holds them (in
 *  place where they stand, new ones after), and none of a kind's that its folder no longer holds. */
async function renderApi() {
  const text = await readFile(join(root, API), "utf8");
  const current = JSON.parse(text).definitions ?? {};
  let out = text;
  const assembled = new Map();
  for (const k of KIND_APIS) {
    for (const [name, def] of Object.entries((await readJson(k.path)).definitions ?? {})) {
      if (assembled.has(name)) throw new Error(`${k.path}: #/definitions/${name} is ${assembled.get(name)}'s too: a definition belongs to one kind`);
      assembled.set(name, k.path);
      const wanted = { $comment: assembledMark(k.path), ...def };
      if (!same(current[name], wanted)) out = edited(out, ["definitions", name], wanted);
    }
  }
  // A kind's definition its folder no longer holds (the kind, or the definition, gone) goes too.
  for (const [name, def] of Object.entries(current))
    if (/^Assembled from \S+ by npm run gen:types/.test(def.$comment ?? "") && !assembled.has(name)) out = edited(out, ["definitions", name], undefined);
  // Formatted again only where something changed: the file as it stands is formatted already.
  return out === text ? text : prettierJson(API, out);
}

/** schemas/plan.schema.json with the parts the registry makes (src/plan/schema.ts). */
async function renderPlanKinds() {
  let out = await readFile(join(root, PLAN), "utf8");
  const current = JSON.parse(out);
  for (const { path, value } of planSchemaEdits(current, REGISTRY)) if (!same(at(current, path), value)) out = edited(out, path, value);
  return out;
}

/** A schema with its copies of another schema's definitions made again: those it names and does not
 *  define itself, and those these name in turn (`text`: the schema, `sourceText`: the other). */
async function renderCopies({ target, source }, text, sourceText) {
  const COPIED = copiedMark(source);
  const schema = JSON.parse(text);
  const from = JSON.parse(sourceText);
  const own = Object.fromEntries(Object.entries(schema.definitions ?? {}).filter(([, d]) => d.$comment !== COPIED));
  const copies = {};
  const wanted = [...refsOf({ ...schema, definitions: own })];
  while (wanted.length) {
    const ref = wanted.shift();
    const name = /^#\/definitions\/([^/]+)$/.exec(ref)?.[1];
    if (ref.startsWith("#/") && !name) continue;
    if (!name)
      throw new Error(`${target}: $ref ${ref} names another file: name a definition of ${source} as #/definitions/<name>, and npm run gen:types copies it`);
    if (own[name] || copies[name]) continue;
    const def = from.definitions?.[name];
    if (!def) throw new Error(`${target}: #/definitions/${name} is neither its own definition nor one of ${source}`);
    // The copy says where it is copied from, whatever its source says of itself.
    const { $comment: _mark, ...body } = def;
    copies[name] = { $comment: COPIED, ...body };
    wanted.push(...refsOf(def));
  }
  let out = text;
  // Copies first gone (in the order they stand), then written again in name order, after the file's own.
  for (const name of Object.keys(schema.definitions ?? {}).filter((n) => !own[n])) out = edited(out, ["definitions", name], undefined);
  for (const name of Object.keys(copies).sort()) out = edited(out, ["definitions", name], copies[name]);
  return prettierJson(target, out);
}

export async function render() {
  const files = new Map();
  const schemaText = (path) => files.get(path) ?? readFileSync(join(root, path), "utf8");
  files.set(API, await renderApi());
  files.set(POLICY_FILE, await renderPolicyFile());
  files.set(PLAN, await renderCopies({ target: PLAN, source: API }, await renderPlanKinds(), schemaText(API)));
  for (const c of COPIES.filter((c) => c.target !== PLAN)) files.set(c.target, await renderCopies(c, schemaText(c.target), schemaText(c.source)));
  for (const { out, schemas } of outputs) {
    const parts = [];
    for (const path of schemas) {
      const schema = JSON.parse(schemaText(path));
      parts.push(
        await compile(schema, schema.title, {
          bannerComment: "",
          cwd: join(root, dirname(path)),
          unreachableDefinitions: true,
          additionalProperties: false,
          strictIndexSignatures: true,
          format: true,
        }),
      );
    }
    files.set(out, `${banner}\n\n${parts.join("\n")}`);
  }
  files.set(VALIDATORS, await renderValidators(schemaText));
  // Its types: src/schema/ajv.ts imports it (so that the bundled CLI holds it, in its code cache).
  files.set(
    VALIDATORS.replace(/\.cjs$/, ".d.cts"),
    `${banner}\nimport type { ValidateFunction } from "ajv";\ndeclare const validators: Record<string, ValidateFunction | undefined>;\nexport = validators;\n`,
  );
  return files;
}

const files = await render();
let stale = 0;
for (const [out, text] of files) {
  const path = join(root, out);
  const current = await readFile(path, "utf8").catch(() => "");
  if (current === text) continue;
  if (check) {
    stale++;
    console.error(`${out} is stale: run npm run gen:types and commit the result`);
  } else {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
    console.log(`wrote ${out}`);
  }
}
if (stale) process.exit(1);
if (check) {
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, digest ?? "");
}
