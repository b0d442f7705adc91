import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { foldFileLoads, loadDir, noteFileLoad, type FileLoad } from "./file-load.js";
import { spread } from "./load-sequencer.js";

describe("the order of test files", () => {
  it("hands the files that mostly wait out one at a time among those that keep a core busy, longest first", () => {
    const loads: Record<string, FileLoad> = {
      waitA: { cpu: 0.5, wall: 8 },
      waitB: { cpu: 0.4, wall: 7 },
      waitC: { cpu: 0.3, wall: 6 },
      busy1: { cpu: 6, wall: 7 },
      busy2: { cpu: 5, wall: 6 },
      busy3: { cpu: 4, wall: 5 },
      busy4: { cpu: 4, wall: 4 },
      busy5: { cpu: 3, wall: 3 },
      busy6: { cpu: 2, wall: 2 },
    };
    const order = spread(Object.keys(loads), (f) => loads[f] as FileLoad, 3);
    // Two at once only while the waiting files hold more than their third of the work left.
    expect(order).toEqual(["waitA", "busy1", "busy2", "busy3", "waitB", "busy4", "waitC", "busy5", "busy6"]);
    // Nothing but waiting files, or one worker: longest first.
    expect(spread(["waitC", "waitA", "waitB"], (f) => loads[f] as FileLoad, 3)).toEqual(["waitA", "waitB", "waitC"]);
  });

  it("keeps each file's latest figures across runs; a record it cannot read is started again", () => {
    const root = mkdtempSync(join(tmpdir(), "revsync-load-"));
    try {
      expect(foldFileLoads(root)).toEqual(new Map());
      noteFileLoad(root, "test/a.test.ts", { cpu: 1, wall: 2 });
      noteFileLoad(root, "test/b.test.ts", { cpu: 3, wall: 4 });
      expect(foldFileLoads(root)).toEqual(
        new Map([
          ["test/a.test.ts", { cpu: 1, wall: 2 }],
          ["test/b.test.ts", { cpu: 3, wall: 4 }],
        ]),
      );
      noteFileLoad(root, "test/a.test.ts", { cpu: 5, wall: 6 });
      expect(foldFileLoads(root).get("test/a.test.ts")).toEqual({ cpu: 5, wall: 6 });
      expect(JSON.parse(readFileSync(join(loadDir(root), "last.json"), "utf8"))["test/b.test.ts"]).toEqual({ cpu: 3, wall: 4 });
      noteFileLoad(root, "test/a.test.ts", { cpu: 5, wall: 6 });
      rmSync(join(loadDir(root), "last.json"));
      noteFileLoad(root, "x", { cpu: 1, wall: 1 });
      expect(foldFileLoads(root).size).toBe(2);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("uses only figures from a record: an entry that is not a file's CPU and wall time is left out", () => {
    const root = mkdtempSync(join(tmpdir(), "revsync-load-"));
    try {
      mkdirSync(loadDir(root), { recursive: true });
      const bad = { a: null, b: "fast", c: { cpu: -1, wall: 2 }, d: { cpu: 1, wall: 0 }, e: { cpu: "1", wall: 2 }, f: { cpu: 1 }, g: [1, 2] };
      writeFileSync(join(loadDir(root), "last.json"), JSON.stringify({ ...bad, ok: { cpu: 1, wall: 2 } }));
      expect(foldFileLoads(root)).toEqual(new Map([["ok", { cpu: 1, wall: 2 }]]));
      // Lines of a run: the same rule.
      mkdirSync(join(loadDir(root), "run"));
      writeFileSync(
        join(loadDir(root), "run", "1.jsonl"),
        `${JSON.stringify({ file: "x", cpu: null, wall: 1 })}\n${JSON.stringify({ file: "y", cpu: 1, wall: 3 })}\n`,
      );
      expect([...foldFileLoads(root).keys()].sort()).toEqual(["ok", "y"]);
      // A record that is not an object of files: started again.
      writeFileSync(join(loadDir(root), "last.json"), "null");
      expect(foldFileLoads(root)).toEqual(new Map());
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
