// The longest functions of src/ (tests, test helpers and generated code aside), and the check that holds
// every function to a length a reader can hold.
//
//   node scripts/longest-functions.mjs [N]    prints the N longest (default 10) as "lines  name  file:line"
//   node scripts/longest-functions.mjs --check   (npm test) exits 1 naming each function over LIMIT
//                                                 lines that no list below exempts, and each entry of
//                                                 the lists that no longer needs to be there
//   --root DIR                                    the tree whose src/ is read (default: this repository)
//
// A function's lines run from its first line to its last, nested functions included; a function
// without a name of its own (a callback) counts as part of the one it is written in. A function is
// named by its file and its name, qualified by its class or object ("src/api/core.ts ApiCore.transport").
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The most lines a function may have: what a reader holds at once. */
const LIMIT = 60;

/** Data, not steps: each is a table written out, whose length is its data's. The reason says which. */
const EXEMPT = {
  "src/emulator/seed.ts demoTenant": "the emulator's demo tenant: its policies, batches and approvals written out as data",
  "src/emulator/seed.ts errorRecords": "the emulator's demo error transactions: a table of rows and the document each row stands for",
};

const ts = createRequire(import.meta.url)("typescript");
const rootAt = process.argv.indexOf("--root");
const root = rootAt > 0 ? process.argv[rootAt + 1] : join(dirname(fileURLToPath(import.meta.url)), "..");

function* sources(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "generated" && e.name !== "testing") yield* sources(p);
    } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) yield p;
  }
}

/** The name a function goes by: its own, or that of the variable, property or class member holding it. */
function nameOf(node) {
  const own = node.name && ts.isIdentifier(node.name) ? node.name.text : undefined;
  const parent = node.parent;
  let name = own;
  if (!name && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name))
    name = parent.name.text;
  if (!name && ts.isConstructorDeclaration(node)) name = "constructor";
  if (!name) return undefined;
  // Qualified by the class or object literal (held by a variable) it belongs to.
  const holder = ts.isObjectLiteralElement(node) || ts.isClassElement(node) ? node.parent : ts.isPropertyAssignment(parent) ? parent.parent : undefined;
  if (holder && ts.isClassLike(holder) && holder.name) return `${holder.name.text}.${name}`;
  if (holder && ts.isObjectLiteralExpression(holder) && ts.isVariableDeclaration(holder.parent) && ts.isIdentifier(holder.parent.name))
    return `${holder.parent.name.text}.${name}`;
  return name;
}

const found = [];
for (const path of sources(join(root, "src"))) {
  const file = relative(root, path).split("\\").join("/");
  const sf = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const name = nameOf(node);
      if (name) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        found.push({ lines: last - first + 1, name, file, line: first });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
found.sort((a, b) => b.lines - a.lines || `${a.file}:${a.line}`.localeCompare(`${b.file}:${b.line}`));

if (!process.argv.includes("--check")) {
  const count = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10);
  for (const f of found.slice(0, count)) console.log(`${String(f.lines).padStart(4)}  ${f.name}  ${f.file}:${f.line}`);
  process.exit(0);
}

const listed = new Set(Object.keys(EXEMPT));
const long = found.filter((f) => f.lines > LIMIT);
const over = long.filter((f) => !listed.has(`${f.file} ${f.name}`));
const stale = [...listed].filter((key) => !long.some((f) => `${f.file} ${f.name}` === key));
for (const f of over) console.log(`${f.file}:${f.line}: ${f.name} is ${f.lines} lines, over ${LIMIT}: split it into steps a reader can hold`);
for (const key of stale) console.log(`scripts/longest-functions.mjs lists ${key}, which is no longer over ${LIMIT} lines (or is gone): take it off the list`);
if (over.length || stale.length) process.exit(1);
console.log(`every function is at most ${LIMIT} lines (${Object.keys(EXEMPT).length} data tables exempt)`);
