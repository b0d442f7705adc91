/** Addresses and names: how --target and drift.ignore rules select what revsync manages, and where a
 *  batch's values file lies. Each kind makes its own addresses (`<kind>/<name>`, src/kinds/); matching is
 *  exact and case-sensitive. */

/** A batch item's name: the service fills batch_name, or only name. The one matcher of batch names:
 *  exact, case-sensitive (docs/decisions.md, "Names match exactly"). */
export function batchNameOf(item: { batch_name?: string; name?: string }): string {
  return item.batch_name ?? item.name ?? "";
}

/** --target: an address selects itself and everything below it (ssp/X selects its batches). */
export function targeted(addr: string, targets: string[]): boolean {
  return targets.length === 0 || targets.some((t) => addr === t || addr.startsWith(`${t}/`));
}

/** Whether reads must cover `addr` for these targets: a target at it, below it, or above it (a batch
 *  target needs its policy's detail read). */
export function touchedBy(addr: string, targets: string[]): boolean {
  return targets.length === 0 || targets.some((t) => t === addr || t.startsWith(`${addr}/`) || addr.startsWith(`${t}/`));
}

/** An address pattern: `*` matches any run of characters; the rest is literal and case-sensitive. */
export function globMatch(pattern: string, address: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  return re.test(address);
}

/** The longest slug: a file name holds at most 255 bytes (NAME_MAX), and a values file's name holds two
 *  slugs (the policy's and the batch's) and more. */
const SLUG_MAX = 64;

/** A name as a file name: lower case, runs of anything but letters and digits as one dash. A name whose
 *  slug is longer than SLUG_MAX keeps its beginning and ends in a hash of the whole name, so that it
 *  fits a file name and two long names that begin alike get names of their own (the name itself stays
 *  whole in the file). */
export function slug(name: string): string {
  const s =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || "policy";
  if (s.length <= SLUG_MAX) return s;
  return `${s.slice(0, SLUG_MAX - 9).replace(/-+$/, "")}-${fnv1a(name)}`;
}

/** 8 hex digits of the 32-bit FNV-1a hash of a text's UTF-16 code units: a short, stable tag (not a
 *  checksum: a clash only makes export pick the next free name, as for any name taken). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** Where a batch's values file lies, relative to its policy's file: what export writes, and what plan
 *  suggests for a batch git holds no values for. */
export const valuesFileFor = (policy: string, batch: string): string => `values/${slug(policy)}-${slug(batch)}.csv`;

/** Text order by Unicode code point: the same on every machine, whatever its locale (localeCompare is
 *  not), so a plan lists its entries in the same order wherever it is made. */
export function byCodePoint(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
