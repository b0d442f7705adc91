import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// What each test file cost in its last run: the CPU of its worker (all its threads; not its child
// processes') and its wall time, in seconds. test/record-file-load.ts writes a line per file into
// .revsync-tmp/test-load/run/ as the run goes; the next run's sequencer (test/load-sequencer.ts) folds
// them into last.json, which keeps each file's latest figures.

export interface FileLoad {
  cpu: number;
  wall: number;
}

export const loadDir = (root: string): string => join(root, ".revsync-tmp", "test-load");

/** Notes one test file's figures (called in a worker; one file per worker process, lines appended). */
export function noteFileLoad(root: string, file: string, load: FileLoad): void {
  const dir = join(loadDir(root), "run");
  mkdirSync(dir, { recursive: true });
  const line = { file, cpu: Number(load.cpu.toFixed(3)), wall: Number(load.wall.toFixed(3)) };
  appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify(line)}\n`);
}

/** A file's figures as a record holds them, when they are figures: finite, the CPU not below 0, the
 *  wall time above it (anything else in a record is not used). */
const loadOf = (v: unknown): FileLoad | undefined => {
  const { cpu, wall } = (v ?? {}) as Partial<Record<keyof FileLoad, unknown>>;
  return typeof cpu === "number" && typeof wall === "number" && Number.isFinite(cpu) && Number.isFinite(wall) && cpu >= 0 && wall > 0
    ? { cpu, wall }
    : undefined;
};

/** The figures of every file recorded so far (the lines of the runs since folded in), or an empty map. */
export function foldFileLoads(root: string): Map<string, FileLoad> {
  const dir = loadDir(root);
  const lastPath = join(dir, "last.json");
  const loads = new Map<string, FileLoad>();
  try {
    if (existsSync(lastPath))
      for (const [file, v] of Object.entries(JSON.parse(readFileSync(lastPath, "utf8")) as Record<string, unknown>)) {
        const load = loadOf(v);
        if (load) loads.set(file, load);
      }
    const runDir = join(dir, "run");
    if (!existsSync(runDir)) return loads;
    for (const name of readdirSync(runDir))
      for (const line of readFileSync(join(runDir, name), "utf8").split("\n"))
        if (line.trim()) {
          const { file, ...figures } = JSON.parse(line) as { file?: unknown };
          const load = loadOf(figures);
          if (typeof file === "string" && load) loads.set(file, load);
        }
    writeFileSync(lastPath, JSON.stringify(Object.fromEntries(loads)));
    rmSync(runDir, { recursive: true, force: true });
  } catch {
    // A record cut short or edited by hand: start again; vitest's own order until the next run.
    rmSync(dir, { recursive: true, force: true });
    return new Map();
  }
  return loads;
}
