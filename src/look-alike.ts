import { createRequire } from "node:module";
import { serviceUrl } from "./tenant.js";

/** Unicode's confusables (UTS #39) as the unhomoglyph package maps them: loaded the first time verify
 *  compares two names, not by every command that loads evidence (apply writes records and compares none). */
let confusables: ((text: string) => string) | undefined;
const unhomoglyph = (text: string): string => (confusables ??= createRequire(import.meta.url)("unhomoglyph") as (text: string) => string)(text);

/** Characters a reader does not see: white space, format characters (zero-width space and joiners,
 *  bidirectional marks, soft hyphen), controls, every character Unicode says is ignored when shown
 *  (Default_Ignorable_Code_Point: variation selectors, the Hangul fillers, the combining grapheme
 *  joiner, which are letters or marks, not format characters) and the blank Braille cell. */
const UNSEEN = /[\s\p{Cf}\p{Cc}\p{Default_Ignorable_Code_Point}\u2800]/gu;

/** A name as a reader sees it, twice: compatibility forms folded (NFKC: a full-width letter is the
 *  letter), what cannot be seen left out, accents and letters written either way made one (NFD), each
 *  character that looks like another taken as that one (Unicode's confusables, UTS #39: Cyrillic `е` is
 *  `e`, `0` is `O`), and case ignored; once with case folded first, so that `I` and `i` are one, and once
 *  after, so that `I` and `l` are. Two names with a key in common look alike. */
function keys(name: string): [string, string] {
  const seen = name.normalize("NFKC").replace(UNSEEN, "");
  const skeleton = (s: string): string => unhomoglyph(s.normalize("NFD")).normalize("NFD").toLowerCase();
  return [skeleton(seen.toLowerCase()), skeleton(seen)];
}

/** The keys a name is looked at by (two names with a key in common look alike): for grouping many names
 *  at once, each name's keys computed once. */
export const lookAlikeKeys = (name: string): [string, string] => keys(name);

/** A name with what a reader cannot see made visible: quoted (spaces at its ends show), and each
 *  invisible or unusual space character written as \uXXXX. */
export function visibleName(name: string): string {
  return JSON.stringify(name).replace(
    /\p{Cf}|\p{Default_Ignorable_Code_Point}|\u2800|(?! )\p{Zs}/gu,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}

/** Whether two different names look alike: they differ only by case, white space or characters that
 *  cannot be seen, by how Unicode writes the same letter (é as one character or as e and an accent), or
 *  by characters that look the same (a Cyrillic `о` for a Latin `o`). */
export function looksAlike(a: string, b: string): boolean {
  if (a === b) return false;
  const [ka, kb] = [keys(a), keys(b)];
  return ka[0] === kb[0] || ka[1] === kb[1];
}

/** A tenant as a record names it (base_url, realm), as a key two look-alike tenants share: the URL in the
 *  one form a lock names a tenant by (serviceUrl: scheme and host in lower case, no default port, no
 *  trailing slash, one name for this machine), then both as looksAlike reads them. */
export function tenantKeys(baseUrl: string, realm: string): [string, string] {
  const [u1, u2] = keys(serviceUrl(baseUrl));
  const [r1, r2] = keys(realm);
  return [`${u1}\u0000${r1}`, `${u2}\u0000${r2}`];
}
