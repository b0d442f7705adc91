import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { foldFileLoads, type FileLoad } from "./file-load.js";

// The order in which the workers take the test files. vitest's own runs the longest first (its cache of
// durations); the longest files include those that mostly wait (on the emulator's faults, a time limit,
// git), so several of them ran at once early in the run while cores sat idle. This order learns, from the
// last run's record (test/record-file-load.ts), which files mostly wait, and hands them out one at a time
// among the files that keep a core busy: no list kept by hand. Without a record: vitest's order.

/** A file whose worker was busy for less than this share of its wall time mostly waits. */
const WAITS = 0.5;

export class LoadSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const root = this.ctx.config.root;
    const loads = foldFileLoads(root);
    const known = ordered.filter((f) => loads.has(relative(root, f.moduleId)));
    if (known.length < ordered.length / 2) return ordered;
    const loadOf = (f: TestSpecification): FileLoad => loads.get(relative(root, f.moduleId)) as FileLoad;
    const workers = typeof this.ctx.config.maxWorkers === "number" ? this.ctx.config.maxWorkers : 1;
    // Files without a record first, in vitest's order (as vitest runs files it has not seen first).
    return [...ordered.filter((f) => !known.includes(f)), ...spread(known, loadOf, workers)];
  }
}

/** The files, longest first within each kind, as `workers` workers would take them: a file that mostly
 *  waits whenever fewer of those run than their share of the work left asks for (at least one), else
 *  the longest file that keeps a core busy. */
export function spread<T>(files: T[], loadOf: (f: T) => FileLoad, workers: number): T[] {
  const byWall = (a: T, b: T): number => loadOf(b).wall - loadOf(a).wall;
  const waiting = files.filter((f) => loadOf(f).cpu < WAITS * loadOf(f).wall).sort(byWall);
  const busy = files.filter((f) => !waiting.includes(f)).sort(byWall);
  const wallOf = (list: T[]): number => list.reduce((sum, f) => sum + loadOf(f).wall, 0);
  const freeAt: number[] = Array.from({ length: Math.max(1, workers) }, () => 0);
  const running: { end: number; waits: boolean }[] = [];
  const out: T[] = [];
  while (waiting.length || busy.length) {
    const now = Math.min(...freeAt);
    const worker = freeAt.indexOf(now);
    const waitersNow = running.filter((r) => r.end > now && r.waits).length;
    const share = Math.max(1, Math.round((freeAt.length * wallOf(waiting)) / (wallOf(waiting) + wallOf(busy))));
    const waits = waiting.length > 0 && (waitersNow < share || !busy.length);
    const next = (waits ? waiting : busy).shift() as T;
    out.push(next);
    freeAt[worker] = now + loadOf(next).wall;
    running.push({ end: now + loadOf(next).wall, waits });
  }
  return out;
}
