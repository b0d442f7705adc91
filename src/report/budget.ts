/** How much of a pull request's comment each part of a markdown report may take, and how a part is fitted
 *  into its share. GitHub refuses a comment over 65,536 characters (and GitLab's note is no place for
 *  more): revsync's markdown stays under MARKDOWN_LIMIT whatever it reports. The changes come first and
 *  are never left out to make room for anything else; each other section has a budget of its own and,
 *  when it leaves something out, says what and where the whole is. Escaping is not done here: these
 *  functions only measure and pick pieces of markdown already written. */

/** The most characters a markdown report (plan, show, drift) holds. */
export const MARKDOWN_LIMIT = 60_000;

/** The budget of each section beside the changes, in characters. Together they leave the changes more
 *  than half of the comment, and the changes take more when a section needs less. */
export const SECTION_BUDGET = {
  /** The policy test cases whose policy or SSP changes (a table). */
  cases: 10_000,
  /** The Mermaid charts of the contracts that move most. */
  charts: 6_000,
  /** The contracts whose allocation changes (a table each). */
  contracts: 12_000,
  /** The notes of the plan's impact. */
  impactNotes: 2_000,
  /** The notes of a plan or a drift report (fields the service does not show). */
  notes: 4_000,
  /** Fields the service holds that git's files leave out (information, one line per resource). */
  kept: 4_000,
  /** Drift accepted by drift.ignore, listed apart. */
  ignored: 6_000,
  /** The guardrails' outcomes and freeze windows, at the top of a plan's comment. */
  guardrails: 8_000,
  /** The promotion's writes and what the source holds of each, at the top of a plan's comment. */
  promotion: 8_000,
} as const;

/** Pieces of markdown in their order for as long as they fit in `budget` characters together with the
 *  line that says how many were left out (`leftOut`, given that count); every piece when all fit. */
export function fitPieces(pieces: readonly string[], budget: number, leftOut: (n: number) => string): { text: string; shown: number } {
  const all = pieces.reduce((n, p) => n + p.length, 0);
  if (all <= budget) return { text: pieces.join(""), shown: pieces.length };
  // Room for the line that counts what is left out, at its longest.
  const room = budget - leftOut(pieces.length).length;
  let used = 0;
  let shown = 0;
  for (const p of pieces) {
    if (used + p.length > room) break;
    used += p.length;
    shown++;
  }
  return { text: pieces.slice(0, shown).join("") + leftOut(pieces.length - shown), shown };
}

/** Each entry of a list written three ways, from the most detail to the least. */
export interface Tiers {
  full: string[];
  /** One line each, with what a reviewer needs most (a reason). */
  line: string[];
  /** One line each, the entry's name alone. */
  bare: string[];
}

export interface Fitted {
  /** The first `full` entries in full detail, then the rest as `rest` (none when every entry is in full). */
  full: number;
  rest: "line" | "bare" | null;
  /** Entries listed at all; fewer than all only when even the bare list does not fit. */
  listed: number;
  text: string;
}

/** A list that must not lose an entry, fitted in `budget`: in full when it fits; else the first entries
 *  in full and the rest one line each (the most in full that leaves room for the rest); else one bare
 *  line each; and only when even that does not fit, the bare lines that fit. `between(rest, full)`
 *  is the markdown between the full entries and the shorter ones (what it says of them), `leftOut(n)`
 *  the markdown that ends a list that could not hold every entry. */
export function fitTiers(t: Tiers, budget: number, between: (rest: "line" | "bare", full: number) => string, leftOut: (n: number) => string): Fitted {
  const n = t.full.length;
  const full = t.full.join("");
  if (full.length <= budget) return { full: n, rest: null, listed: n, text: full };
  for (const rest of ["line", "bare"] as const) {
    const short = t[rest];
    // after[k]: the length of entries k.. in the shorter form; before: of entries ..k-1 in full.
    const after: number[] = new Array<number>(n + 1).fill(0);
    for (let k = n - 1; k >= 0; k--) after[k] = (after[k + 1] ?? 0) + (short[k]?.length ?? 0);
    let best = -1;
    let before = 0;
    for (let k = 0; k < n; k++) {
      if (before + between(rest, k).length + (after[k] ?? 0) <= budget) best = k;
      before += t.full[k]?.length ?? 0;
    }
    if (best >= 0) return { full: best, rest, listed: n, text: t.full.slice(0, best).join("") + between(rest, best) + short.slice(best).join("") };
  }
  const head = between("bare", 0);
  const { text, shown } = fitPieces(t.bare, budget - head.length, leftOut);
  return { full: 0, rest: "bare", listed: shown, text: head + text };
}

/** The longest a name may be, in characters of markdown, so that the names of a list of one line each take
 *  at most `room` together: names at most that long stay whole, longer ones are cut to it (the longest
 *  are cut first, and only as far as they must). Never over `most` (the most a line gives a name); and
 *  when even `least` each would not fit them all, `most`: names cut shorter would say too little, and
 *  the list then lists what fits and counts the rest. */
export function nameCap(lengths: readonly number[], room: number, least: number, most: number): number {
  const fits = (cap: number): boolean => lengths.reduce((n, l) => n + Math.min(l, cap), 0) <= room;
  if (!fits(least)) return most;
  let lo = least;
  let hi = most;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
