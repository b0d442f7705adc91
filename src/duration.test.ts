import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "./duration.js";

describe("durations (--timeout)", () => {
  it.each([
    ["10m", 600_000],
    ["90s", 90_000],
    ["1h30m", 5_400_000],
    ["250ms", 250],
    ["1.5s", 1500],
    ["45", 45_000],
    [" 2m ", 120_000],
  ])("%s is %i ms", (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(["", "ten minutes", "10 m", "-5s", "5d", "m10", "1h-2m"])("%j is not a duration", (text) => expect(parseDuration(text)).toBeUndefined());

  it.each([
    [600_000, "10m"],
    [90_000, "1m30s"],
    [1500, "1.5s"],
    [3_600_000, "1h"],
    [250, "0.25s"],
  ])("%i ms reads %s", (ms, text) => expect(formatDuration(ms)).toBe(text));
});
