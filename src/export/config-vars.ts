/** Export's one edit of revsync.yaml: an environment's `vars:` entries take the service's values, where
 *  a policy file reads them through `${NAME}` (the policy file keeps its variable, and the other
 *  environments keep theirs). Pure: text in, text out. */
import { isScalar, parseDocument, type Node } from "yaml";
import { literalValue } from "../config/interpolate.js";
import { scalarText } from "./in-place.js";
import { quotedWhereNeeded } from "./mapping.js";

/** revsync.yaml's text with `environments.<env>.vars.<name>` set to each value: a scalar is replaced
 *  where it stands (every other byte, comments included, stays), otherwise the document is written out
 *  again with its comments. */
export function setEnvironmentVars(text: string, env: string, sets: readonly { name: string; value: unknown }[]): string {
  const doc = parseDocument(text);
  if (doc.errors.length) throw new Error(`revsync.yaml has a YAML error: ${doc.errors[0]?.message ?? ""}`);
  const splices: { start: number; end: number; text: string }[] = [];
  let structural = false;
  for (const { name, value: serviceValue } of sets) {
    // revsync.yaml reads ${VAR}s in vars: the service's text is written as literal text.
    const value = literalValue(serviceValue);
    const path = ["environments", env, "vars", name];
    const old = doc.getIn(path, true) as Node | undefined;
    if (old && isScalar(old) && old.range && (value === null || typeof value !== "object")) {
      splices.push({ start: old.range[0], end: old.range[1], text: scalarText(value) });
      old.value = value;
      quotedWhereNeeded(old);
    } else {
      doc.setIn(path, quotedWhereNeeded(doc.createNode(value)));
      structural = true;
    }
  }
  if (structural) return doc.toString({ lineWidth: 0 });
  let out = text;
  for (const s of splices.sort((a, b) => b.start - a.start)) out = out.slice(0, s.start) + s.text + out.slice(s.end);
  return out;
}
