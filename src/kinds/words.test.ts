import { describe, expect, it } from "vitest";
import { concurrentWords, versionSteps } from "./words.js";

describe("a version that moved by more than revsync's own write", () => {
  it("counts steps only where both versions read as whole numbers", () => {
    expect(versionSteps("1", "3")).toBe(2);
    expect(versionSteps(4, "5")).toBe(1);
    expect([versionSteps("1", null), versionSteps(undefined, "2"), versionSteps("a1b2", "c3d4"), versionSteps("1", "1e3"), versionSteps("1.5", "3")]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("names who wrote last when that is not revsync's user; otherwise says the other write came first, unnamed", () => {
    const at = "2026-11-25T12:00:00.000Z";
    expect(concurrentWords("1", "3", { modified_by: "bob", modified_on: at }, "alice")).toBe(
      "may have overwritten a change made at the same time by bob at 2026-11-25T12:00:00Z: version_id went from 1 to 3 over revsync's one write; read the service and compare",
    );
    expect(concurrentWords("1", "3", { modified_by: " Alice", modified_on: at }, "alice")).toMatch(
      /^may have overwritten a change made at the same time by someone else, before revsync's write landed \(the service names {2}Alice at 2026-11-25T12:00:00Z, revsync's own write, as the last change\): /,
    );
    expect(concurrentWords("7", "9", { modified_by: null, modified_on: null }, "alice")).toMatch(
      /^may have overwritten a change made at the same time by someone else: version_id went from 7 to 9/,
    );
  });
});
