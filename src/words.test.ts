import { describe, expect, it } from "vitest";
import { andList, plural } from "./words.js";

describe("words", () => {
  it("a count with its noun in the right number", () => {
    expect([plural(1, "batch", "batches"), plural(2, "batch", "batches"), plural(0, "row")]).toEqual(["1 batch", "2 batches", "0 rows"]);
  });

  it("items as a list in words", () => {
    expect([andList([]), andList(["A"]), andList(["A", "B"]), andList(["A", "B", "C"])]).toEqual(["", "A", "A and B", "A, B and C"]);
  });
});
