/** "Did you mean": edit distance, and the candidates nearest a word. One implementation for every
 *  hint (unknown fields, targets, variables). */
export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] ?? 0;
      row[j] = Math.min((row[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] ?? 0;
}

/** The candidates nearest `word` (case-insensitive), nearest first: at most `max` of them, each within
 *  `within` edits (default: a third of the word's length, at least 2). */
export function nearest(word: string, candidates: Iterable<string>, opts: { max?: number; within?: number } = {}): string[] {
  const within = opts.within ?? Math.max(2, Math.floor(word.length / 3));
  const w = word.toLowerCase();
  return [...new Set(candidates)]
    .map((c) => ({ c, d: distance(w, c.toLowerCase()) }))
    .filter((x) => x.d <= within)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, opts.max ?? 3)
    .map((x) => x.c);
}
