// The longest functions of src/ (tests, test helpers and generated code aside), longest first:
// `node scripts/longest-functions.mjs [N]` prints N (default 10) as "lines  name  file:line".
// A function's lines run from its first line to its last, nested functions included; a function
// without a name of its own (a callback) counts as part of the one it is written in.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ts = createRequire(import.meta.url)("typescript");
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const count = Number(process.argv[2] ?? 10);

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
for (const file of sources(join(root, "src"))) {
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const name = nameOf(node);
      if (name) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        found.push({ lines: last - first + 1, name, where: `${relative(root, file)}:${first}` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
found.sort((a, b) => b.lines - a.lines || a.where.localeCompare(b.where));
for (const f of found.slice(0, count)) console.log(`${String(f.lines).padStart(4)}  ${f.name}  ${f.where}`);
